// The OpenAPI document as a contract the black-box tests hold the server to: every answer to an /api/ request made
// through the test helpers (server.request, processes.http, the typed client) is checked against it here. The status
// must be one the operation documents, a JSON body must match its schema (Ajv, JSON Schema 2020-12, compiled once
// from the document the code builds), a non-JSON answer must have the documented content type. A request no route
// matches must answer the Error shape. A mismatch throws, naming the operation, the status and what is wrong.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { apiReference } from '../../src/features.ts';
import { PAGE_PATH } from '../../src/openapi/reference.ts';

/** One request and its answer, as a helper saw them. */
export interface ApiExchange {
  method: string;
  /** The path with its query string (or a whole URL). */
  path: string;
  status: number;
  /** The Content-Type header of the answer, if any. */
  contentType: string | null | undefined;
  text: string;
}

export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

interface CompiledResponse {
  /** Media type (without parameters) -> its JSON validator (null for a non-JSON type). Null: no body. */
  content: Map<string, ValidateFunction | null> | null;
  mediaTypes: string[];
}

interface CompiledOperation {
  id: string;
  method: string;
  template: string;
  regex: RegExp;
  responses: Map<string, CompiledResponse>;
}

interface CompiledWebhook {
  name: string;
  body: ValidateFunction;
  /** Lower-case header name -> its validator and whether it is required. */
  headers: Map<string, { validate: ValidateFunction; required: boolean }>;
}

interface Contract {
  operations: CompiledOperation[];
  error: ValidateFunction;
  webhooks: CompiledWebhook[];
}

type Json = Record<string, unknown>;

const COMPONENTS_ID = 'urn:payrail:openapi:components';
// ajv-formats is CommonJS with a default export that NodeNext types see as a property.
const addFormats = formatsModule.default;

/** `#/components/schemas/X` -> a reference Ajv resolves in the components schema. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', `${COMPONENTS_ID}#/$defs/`) : rewriteRefs(v)]),
  );
}

const mediaTypeOf = (contentType: string) => contentType.split(';')[0]!.trim().toLowerCase();
const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

/** Compiles the contract from an OpenAPI document (exported for the tests of the contract itself). */
export function compileContract(document: Json): Contract {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  addFormats(ajv);
  // OpenAPI's annotation keyword beside JSON Schema's own.
  ajv.addKeyword('example');
  const components = document['components'] as { schemas: Json; responses: Record<string, Json> };
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(components.schemas) as Json });
  const resolve = (response: Json): Json => {
    const ref = response['$ref'];
    if (typeof ref !== 'string') return response;
    const name = ref.replace('#/components/responses/', '');
    const target = components.responses[name];
    if (!target) throw new Error(`the document refers to a response it does not define: ${ref}`);
    return target;
  };
  // Many operations share a schema (every error answer is the Error one): each is compiled once.
  const compiled = new Map<string, ValidateFunction>();
  const compile = (schema: Json) => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (!validate) compiled.set(key, (validate = ajv.compile(rewriteRefs(schema) as Json)));
    return validate;
  };
  const compileResponse = (response: Json): CompiledResponse => {
    const content = response['content'] as Record<string, { schema?: Json }> | undefined;
    if (!content) return { content: null, mediaTypes: [] };
    const map = new Map<string, ValidateFunction | null>();
    for (const [type, media] of Object.entries(content)) {
      const mediaType = mediaTypeOf(type);
      map.set(mediaType, isJson(mediaType) && media.schema ? compile(media.schema) : null);
    }
    return { content: map, mediaTypes: Object.keys(content) };
  };
  const operations: CompiledOperation[] = [];
  for (const [template, item] of Object.entries(document['paths'] as Record<string, Record<string, Json>>)) {
    const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
    for (const [method, operation] of Object.entries(item)) {
      const responses = new Map<string, CompiledResponse>();
      for (const [status, response] of Object.entries(operation['responses'] as Record<string, Json>)) responses.set(status, compileResponse(resolve(response)));
      operations.push({ id: String(operation['operationId']), method: method.toUpperCase(), template, regex: new RegExp(`^${pattern}/?$`), responses });
    }
  }
  const webhooks: CompiledWebhook[] = [];
  for (const [name, item] of Object.entries((document['webhooks'] ?? {}) as Record<string, { post: Json }>)) {
    const body = (item.post['requestBody'] as { content: Record<string, { schema: Json }> }).content['application/json']!.schema;
    const headers = new Map<string, { validate: ValidateFunction; required: boolean }>();
    for (const p of (item.post['parameters'] ?? []) as { in: string; name: string; schema: Json; required?: boolean }[]) {
      if (p.in === 'header') headers.set(p.name.toLowerCase(), { validate: compile(p.schema), required: p.required === true });
    }
    webhooks.push({ name, body: compile(body), headers });
  }
  return { operations, error: compile({ $ref: '#/components/schemas/Error' }), webhooks };
}

let contract: Contract | null = null;
/**
 * The contract of the code under test, compiled on first use (about a second: useServer calls it before it starts
 * a server, so the pause never holds up a server in the same process).
 */
export const currentContract = (): Contract => (contract ??= compileContract(apiReference().document() as unknown as Json));

const describeErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`).join('; ');

const excerpt = (text: string) => (text.length > 600 ? `${text.slice(0, 600)}...` : text);

function parseBody(where: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ContractViolation(`${where}: the body is not JSON: ${excerpt(text)}`);
  }
}

/** Throws a ContractViolation when the answer breaks the document (see the top of this file); other paths pass. */
export function checkApiExchange(x: ApiExchange, against: Contract = currentContract()): void {
  const url = new URL(x.path, 'http://contract.invalid');
  const pathname = url.pathname;
  if (!pathname.startsWith('/api/')) return;
  const method = x.method.toUpperCase();
  // The reference page and its files are HTML, script and style for a browser, not operations of the API.
  if ((pathname === PAGE_PATH || pathname.startsWith(`${PAGE_PATH}/`)) && x.status === 200) return;
  const mediaType = x.contentType ? mediaTypeOf(x.contentType) : null;
  // Documented for every operation, yet never meant to happen: no request of a test may cause one.
  if (x.status === 500) throw new ContractViolation(`${method} ${pathname} answered 500 INTERNAL, a bug (docs/errors.md): ${excerpt(x.text)}`);
  // CORS preflight: answered for every /api/ path, with no body.
  if (method === 'OPTIONS') {
    if (x.status !== 204 || x.text !== '') throw new ContractViolation(`OPTIONS ${pathname}: a preflight answers 204 without a body, got ${x.status} ${excerpt(x.text)}`);
    return;
  }
  const operation = against.operations.find((o) => o.method === method && o.regex.test(pathname));
  if (!operation) {
    const where = `${method} ${pathname} (no documented operation)`;
    if (x.status < 400) throw new ContractViolation(`${where} answered ${x.status}: only an error may answer a request the document does not list`);
    if (mediaType !== 'application/json') throw new ContractViolation(`${where} answered ${x.status} with ${x.contentType ?? 'no content type'}, not the JSON Error`);
    if (!against.error(parseBody(where, x.text))) throw new ContractViolation(`${where} answered ${x.status} but not the Error shape: ${describeErrors(against.error.errors)}; body: ${excerpt(x.text)}`);
    return;
  }
  const where = `${operation.id} (${operation.method} ${operation.template})`;
  const status = String(x.status);
  const response = operation.responses.get(status) ?? operation.responses.get(`${status[0]}XX`) ?? operation.responses.get('default');
  if (!response) {
    throw new ContractViolation(`${where} answered ${status}, which the document does not list (it lists ${[...operation.responses.keys()].join(', ')}); body: ${excerpt(x.text)}`);
  }
  if (method === 'HEAD') return;
  if (!response.content) {
    if (x.text !== '') throw new ContractViolation(`${where} answered ${status} with a body, where the document has none: ${excerpt(x.text)}`);
    return;
  }
  if (!mediaType || !response.content.has(mediaType)) {
    throw new ContractViolation(`${where} answered ${status} with ${x.contentType ?? 'no content type'}; the document has ${response.mediaTypes.join(', ')}`);
  }
  const validate = response.content.get(mediaType);
  if (!validate) return;
  if (!validate(parseBody(where, x.text))) {
    throw new ContractViolation(`${where} answered ${status} with a body that does not match the document: ${describeErrors(validate.errors)}; body: ${excerpt(x.text)}`);
  }
}

/**
 * Checks a webhook the suite received against the document's `webhooks`: the body matches exactly one of the
 * published bodies (they are closed objects, so one at most), and every documented header is there and well-formed.
 * Answers what is wrong, or null.
 */
export function webhookViolation(body: string, headers: Record<string, string | string[] | undefined>, against: Contract = currentContract()): string | null {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return `the webhook body is not JSON: ${excerpt(body)}`;
  }
  const matching = against.webhooks.filter((w) => w.body(json));
  if (matching.length !== 1) {
    const why = against.webhooks.map((w) => (w.body(json), `${w.name}: ${describeErrors(w.body.errors)}`)).join(' | ');
    return `the webhook body matches ${matching.length} of the published webhooks (${matching.map((w) => w.name).join(', ') || 'none'}), not one: ${why}; body: ${excerpt(body)}`;
  }
  for (const [name, header] of matching[0]!.headers) {
    const value = headers[name];
    if (value === undefined) {
      if (header.required) return `the ${matching[0]!.name} webhook lacks the documented header ${name}`;
      continue;
    }
    if (!header.validate(value)) return `the ${matching[0]!.name} webhook's header ${name} does not match the document: ${describeErrors(header.validate.errors)} (${String(value)})`;
  }
  return null;
}
