// npm run chains:worker — watches the real chains and sends on them (withdrawals, refunds, consolidation) from a
// process of its own, the only one that loads the signer's mnemonic; run the servers with CHAIN_WORKER=0.
// PostgreSQL only: an embedded PGlite database belongs to the server process.
import { loadConfigOrExit } from '../config.ts';
import { JobRunner } from '../core/jobs.ts';
import { MetricsRegistry } from '../ops/metrics.ts';
import { startWorkerOps } from '../ops/worker.ts';
import { assemble, declared } from '../features.ts';
import { createLogger } from '../logger.ts';
import { openPlatform } from '../platform.ts';
import { exitOnSignals } from '../shutdown.ts';

const config = loadConfigOrExit();
if (config.embedded) {
  process.stderr.write('The chains worker needs DATABASE_URL=postgresql://...; with the embedded database the server watches and sends itself.\n');
  process.exit(1);
}
const logger = createLogger(config.logLevel);
// What this process commits (payments credited, withdrawals and refunds settled) is counted here: WORKER_METRICS_PORT.
const metrics = new MetricsRegistry(logger);
const platform = await openPlatform(config, logger, { role: 'chains worker', signer: true, chainWork: true, chainsWorker: true, metrics, declared }).catch((e: unknown) => {
  logger.fatal({ err: e }, 'the chains worker could not start');
  process.exit(1);
});
// The features' services take the chains' reports (payments, withdrawals and refunds outcomes, credits); of their
// jobs only those that send on chain run here.
const assembled = assemble(config, platform);
const jobs = new JobRunner([...platform.chains.jobs(), ...assembled.jobs.filter((job) => job.onChain)]);
jobs.start();
const ops = await startWorkerOps(config, { metrics, database: platform.database, jobs, chains: platform.chains, logger });
const nodes = platform.chains.health().filter((c) => c.live === 'node').map((c) => c.network);
if (nodes.length === 0) logger.warn('no network runs on a real node (CHAINS_FILE): the chains worker has nothing to watch');
if (!(config.signerMnemonicFile || config.signerMnemonic)) logger.warn('no signer (SIGNER_MNEMONIC_FILE): the chains worker watches and credits, but sends nothing');
logger.info({ networks: nodes, jobs: jobs.jobs.map((j) => j.name), ops: ops?.url ?? null }, 'chains worker running');

exitOnSignals(
  async () => {
    await ops?.stop();
    await jobs.stop();
    await assembled.close();
    await platform.close();
  },
  { timeoutMs: config.shutdownTimeoutMs, logger, name: 'chains worker' },
);
