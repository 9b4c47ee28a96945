import { startAdminServer } from '../admin/server.ts';
import { startApp } from '../app.ts';
import { createCompany, type CompanyCredentials } from '../companies/service.ts';
import type { Db } from '../db/client.ts';
import { loadConfigOrExit } from '../config.ts';
import { createLogger } from '../logger.ts';
import { exitOnSignals } from '../shutdown.ts';

const config = loadConfigOrExit();

const logger = createLogger(config.logLevel);
// A newcomer on the embedded database gets a merchant to call the API with right away (made before listening,
// so nothing can race it).
let demo: CompanyCredentials | null = null;
const seedDemoMerchant = async (db: Db) => {
  if (config.embedded && (await db.company.count()) === 0) demo = await createCompany(db, { name: 'Demo Store' });
};

const app = await startApp(config, logger, { beforeListen: seedDemoMerchant }).catch((e: unknown) => {
  logger.fatal({ err: e }, 'could not start');
  process.exit(1);
});
const admin = await startAdminServer(app).catch(async (e: unknown) => {
  logger.fatal({ err: e }, 'could not start the admin API');
  await app.stop();
  process.exit(1);
});

function printDemoMerchant(demo: CompanyCredentials) {
  process.stdout.write(
    [
      '',
      'Created a demo merchant (shown once; keep these):',
      JSON.stringify(demo, null, 2),
      `Try (test mode): curl -X POST ${app.url}/api/invoices/v1/regular -H 'Authorization: Bearer ${demo.test.publicToken}' \\`,
      `       -H 'Content-Type: application/json' -d '{"invoiceCurrency":"usd","items":[{"name":"Coffee","price":4.5}]}'`,
      '',
    ].join('\n') + '\n',
  );
}
if (demo) printDemoMerchant(demo);

const liveChains = Object.fromEntries(app.platform.chains.health().map((c) => [c.network, c.live]));
logger.info(
  { testMode: config.sandbox, liveChains },
  config.sandbox
    ? 'test mode is on: test-mode tokens run every network on the simulated chain; live mode runs the networks with a node (CHAINS_FILE), the others are not offered live'
    : 'test mode is off (SANDBOX=0): test-mode tokens are refused; live mode runs the networks with a node (CHAINS_FILE)',
);
if (config.embedded) {
  logger.warn(
    { database: config.databaseUrl },
    'embedded database (PGlite): it survives a crash of this process, not of the machine (it cannot fsync); use PostgreSQL (DATABASE_URL) for real money (docs/operations.md)',
  );
}
logger.info(
  { url: app.url, graphql: `${app.url}/graphql`, admin: admin.url, database: app.db.kind, payUrl: config.payUrl },
  'payrail listening',
);

// Admin listener first, then requests and the database; the state file goes last (see AdminServer).
exitOnSignals(
  async () => {
    await admin.stop();
    await app.stop();
    admin.releaseStateFile();
  },
  { timeoutMs: config.shutdownTimeoutMs, logger, name: 'payrail' },
);
