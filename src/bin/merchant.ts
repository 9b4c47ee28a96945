// npm run merchant -- create --name "Acme" [--logo-url URL] [--redirect-url URL] [--assets btc,eth]
//                     list | rotate-token --company-id ID --mode test|live | rotate-secret --company-id ID --mode test|live
// Talks to the running server's admin API when one holds the database, else opens the database itself.
import { parseArgs } from 'node:util';
import { companyModeSchema, createCompany, listCompanies, rotatePublicToken, rotateSecretKey, type CreateCompanyInput } from '../companies/service.ts';
import { parseInput } from '../core/validation.ts';
import { isMode } from '../domain/modes.ts';
import type { Db } from '../db/client.ts';
import { fail, runAdminRequest, type AdminRequest } from './cli.ts';

const USAGE = `usage: npm run merchant -- <command> [options]
  create --name NAME [--logo-url URL] [--redirect-url URL] [--assets btc,eth,...]
  list
  rotate-token --company-id ID --mode test|live
  rotate-secret --company-id ID --mode test|live`;

function plan(argv: string[]): AdminRequest {
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
      mode: { type: 'string' },
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
  const mode = () => {
    const m = values.mode ?? fail(`--mode test or --mode live is required\n${USAGE}`);
    return isMode(m) ? m : fail(`--mode must be test or live\n${USAGE}`);
  };
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
      return { method: 'POST', path: `/admin/companies/${encodeURIComponent(companyId())}/rotate-token`, body: { mode: mode() } };
    case 'rotate-secret':
      return { method: 'POST', path: `/admin/companies/${encodeURIComponent(companyId())}/rotate-secret`, body: { mode: mode() } };
    default:
      fail(`unknown command ${command}\n${USAGE}`);
  }
}

/** The same operation as the admin route, on a database this process opened. */
function direct(request: AdminRequest): (db: Db) => Promise<unknown> {
  const id = decodeURIComponent(/\/admin\/companies\/([^/]+)\//.exec(request.path)?.[1] ?? '');
  const ref = () => parseInput(companyModeSchema, { companyId: id, mode: (request.body as { mode?: string } | undefined)?.mode });
  if (request.path.endsWith('/rotate-token')) return (db) => rotatePublicToken(db, ref());
  if (request.path.endsWith('/rotate-secret')) return (db) => rotateSecretKey(db, ref());
  if (request.method === 'POST') return (db) => createCompany(db, (request.body ?? {}) as CreateCompanyInput);
  return (db) => listCompanies(db);
}

const request = plan(process.argv.slice(2));
await runAdminRequest(request, direct(request), 'merchant CLI');
// Done: do not wait for timers the migration engine leaves behind.
process.exit(0);
