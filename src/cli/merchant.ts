// npm run merchant -- create --name "Acme" [--logo-url URL] [--redirect-url URL] [--assets btc,eth]
//                     list | rotate-token --company-id ID | rotate-secret --company-id ID
// Talks to the running server's admin API when one holds the database, else opens the database itself.
import { parseArgs } from 'node:util';
import { readAdminState } from '../admin/server.ts';
import { createCompany, listCompanies, rotatePublicToken, rotateSecretKey } from '../companies/service.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase } from '../db/client.ts';
import { AppError } from '../errors/app-error.ts';

const USAGE = `usage: npm run merchant -- <command> [options]
  create --name NAME [--logo-url URL] [--redirect-url URL] [--assets btc,eth,...]
  list
  rotate-token --company-id ID
  rotate-secret --company-id ID`;

type Request = { method: 'GET' | 'POST'; path: string; body?: unknown };

function fail(message: string, code = 2): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function plan(argv: string[]): Request {
  let parsed;
  try {
    parsed = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'logo-url': { type: 'string' },
      'redirect-url': { type: 'string' },
      assets: { type: 'string' },
      'company-id': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    fail(`${(e as Error).message}\n${USAGE}`);
  }
  const { positionals, values } = parsed;
  const [command] = positionals;
  if (values.help || !command) fail(USAGE, values.help ? 0 : 2);
  const companyId = () => values['company-id'] ?? fail(`--company-id is required\n${USAGE}`);
  switch (command) {
    case 'create':
      return {
        method: 'POST',
        path: '/admin/companies',
        body: {
          name: values.name ?? fail(`--name is required\n${USAGE}`),
          logoUrl: values['logo-url'],
          redirectUrl: values['redirect-url'],
          acceptedAssets: values.assets?.split(',').map((a) => a.trim()).filter(Boolean),
        },
      };
    case 'list':
      return { method: 'GET', path: '/admin/companies' };
    case 'rotate-token':
      return { method: 'POST', path: `/admin/companies/${encodeURIComponent(companyId())}/rotate-token` };
    case 'rotate-secret':
      return { method: 'POST', path: `/admin/companies/${encodeURIComponent(companyId())}/rotate-secret` };
    default:
      fail(`unknown command ${command}\n${USAGE}`);
  }
}

async function direct(request: Request, databaseUrl: string): Promise<unknown> {
  const db = await openDatabase({ url: databaseUrl, poolSize: 1 });
  try {
    const id = /\/admin\/companies\/([^/]+)\//.exec(request.path)?.[1];
    if (request.path.endsWith('/rotate-token')) return await rotatePublicToken(db.prisma, { companyId: decodeURIComponent(id!) });
    if (request.path.endsWith('/rotate-secret')) return await rotateSecretKey(db.prisma, { companyId: decodeURIComponent(id!) });
    if (request.method === 'POST') return await createCompany(db.prisma, request.body);
    return await listCompanies(db.prisma);
  } finally {
    await db.close();
  }
}

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message, 1);
    throw e;
  }
  const request = plan(process.argv.slice(2));
  const server = readAdminState(config.adminStateFile);
  let result: unknown;
  if (server) {
    const res = await fetch(`${server.url}${request.path}`, {
      method: request.method,
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    }).catch(() =>
      fail(`The server (pid ${server.pid}) holds the database but its admin API at ${server.url} does not answer; it may be stopping. Retry in a moment.`, 1),
    );
    result = await res.json();
    if (!res.ok) fail(JSON.stringify(result), 1);
  } else {
    try {
      result = await direct(request, config.databaseUrl);
    } catch (e) {
      if (e instanceof AppError) fail(JSON.stringify({ error: { code: e.code, message: e.message, details: e.details } }), 1);
      throw e;
    }
  }
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

await main();
