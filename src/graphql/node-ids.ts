// Global ids for the Node interface. An invoice's global id is its public id (one identity per object, as the
// conventions ask); every other type's is base64url("<Type>:<id>"), which never looks like an invoice id.
import type { Access, Scope } from '../core/scopes.ts';
import { ValidationError } from '../errors/app-error.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ASSET = '[a-z0-9]{1,16}';

/** Matches no company: a merchant-only node loaded by an anonymous caller finds nothing. */
export const NO_COMPANY = '00000000-0000-0000-0000-000000000000';

type Caller = { company: { id: string } | null; access?: Access | null };

/** Whether the caller may read objects guarded by `scope` (the public token holds every scope). */
const holds = (ctx: Caller, scope: Scope) => ctx.company !== null && (ctx.access?.scopes.has(scope) ?? false);

/**
 * The calling merchant's id for a merchant-only lookup needing `scope`, NO_COMPANY for an anonymous caller or one
 * without the scope: `node(id:)` then finds nothing, as for another merchant's object.
 */
export const callerCompanyId = (ctx: Caller, scope: Scope): string => (holds(ctx, scope) ? ctx.company!.id : NO_COMPANY);

/** The asset of a `<company>:<asset>` node key when the company is the caller and holds `scope`, else null. */
export const ownCompanyAsset = (ctx: Caller, key: string, scope: Scope): string | null => {
  const [companyId, asset] = key.split(':');
  return holds(ctx, scope) && companyId === ctx.company!.id ? asset! : null;
};

/** The raw id each Node type accepts; features register theirs with the type. */
const idFormats = new Map<string, RegExp>();
let publicIdType: { typename: string; pattern: RegExp } | null = null;

export const nodeIdFormats = {
  uuid: UUID,
  /** `<company uuid>:<asset>`: objects a merchant has one of per asset. */
  companyAsset: new RegExp(`^${UUID.source.slice(1, -1)}:${ASSET}$`),
};

export function registerNodeType(typename: string, pattern: RegExp, { publicId = false } = {}): void {
  idFormats.set(typename, pattern);
  if (publicId) publicIdType = { typename, pattern };
}

// Longer than any id we issue: refuse before decoding anything.
const MAX_GLOBAL_ID_LENGTH = 160;

export function encodeNodeId(typename: string, id: string | number | bigint): string {
  const raw = String(id);
  if (publicIdType?.typename === typename) return raw;
  return Buffer.from(`${typename}:${raw}`, 'utf8').toString('base64url');
}

/** The type and raw id of a global id, or null when it is not one we issued. */
export function readNodeId(globalId: string): { typename: string; id: string } | null {
  if (globalId.length > MAX_GLOBAL_ID_LENGTH) return null;
  if (publicIdType?.pattern.test(globalId)) return { typename: publicIdType.typename, id: globalId };
  if (!/^[A-Za-z0-9_-]+$/.test(globalId)) return null;
  const text = Buffer.from(globalId, 'base64url').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 1) return null;
  const typename = text.slice(0, colon);
  const id = text.slice(colon + 1);
  return idFormats.get(typename)?.test(id) ? { typename, id } : null;
}

/** For the relay plugin: `node(id:)`/`nodes(ids:)` refuse what is not a global id with a validation error. */
export function decodeNodeId(globalId: string): { typename: string; id: string } {
  const read = readNodeId(globalId);
  if (!read) throw new ValidationError([{ path: 'id', message: 'must be a global id from an `id` field' }], 'Not a global id of this API');
  return read;
}

/** The raw id of a global id of `typename` given in a mutation input; a typed validation error otherwise. */
export function nodeIdInput(globalId: string | number, typename: string, path: string): string {
  const read = readNodeId(String(globalId));
  if (!read || read.typename !== typename) throw new ValidationError([{ path, message: `must be the id of a ${typename}` }]);
  return read.id;
}
