import { startAdminServer } from './admin/server.ts';
import { startApp } from './app.ts';
import { createCompany } from './companies/service.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createLogger } from './logger.ts';

let config: Config;
try {
  config = loadConfig();
} catch (e) {
  if (e instanceof ConfigError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
  throw e;
}

const logger = createLogger(config.logLevel);
const app = await startApp(config, logger).catch((e: unknown) => {
  logger.fatal({ err: e }, 'could not start');
  process.exit(1);
});
const admin = await startAdminServer(app);

// A newcomer on the embedded database gets a merchant to call the API with right away.
if (config.embedded && (await app.db.prisma.company.count()) === 0) {
  const demo = await createCompany(app.db.prisma, { name: 'Demo Store' });
  process.stdout.write(
    [
      '',
      'Created a demo merchant (shown once; keep these):',
      JSON.stringify(demo, null, 2),
      `Try: curl -X POST ${app.url}/api/invoices/v1/regular -H 'Authorization: Bearer ${demo.publicToken}' \\`,
      `       -H 'Content-Type: application/json' -d '{"invoiceCurrency":"usd","items":[{"name":"Coffee","price":4.5}]}'`,
      '',
    ].join('\n') + '\n',
  );
}

logger.warn({ sandbox: true }, 'SANDBOX MODE: payments are simulated; no real chain node is configured');
logger.info(
  { url: app.url, graphql: `${app.url}/graphql`, admin: admin.url, database: app.db.kind, payUrl: config.payUrl },
  'payrail listening',
);

let shuttingDown = false;
const shutdown = (signal: string) => {
  if (shuttingDown) return;
  shuttingDown = true;
  logger.info({ signal }, 'shutting down');
  Promise.all([admin.stop(), app.stop()])
    .then(() => {
      logger.info('stopped');
      process.exit(0);
    })
    .catch((e: unknown) => {
      logger.error({ err: e }, 'unclean shutdown');
      process.exit(1);
    });
};
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
