// npm run ledger:verify — recomputes every balance from ledger entries and chain records, and asks the real chain
// nodes (CHAINS_FILE) whether our watched addresses hold what the records say; exit 1 on any mismatch.
import { readChainsFile } from '../chains/config.ts';
import { openChains } from '../chains/registry.ts';
import { loadConfigOrExit } from '../config.ts';
import { verifyLedger, type LedgerReport } from '../ledger/verify.ts';
import { createLogger } from '../logger.ts';
import { runAdminRequest } from './run.ts';

const config = loadConfigOrExit();
const report = (await runAdminRequest(
  { method: 'GET', path: '/admin/ledger/verify' },
  async (db) => {
    const chains = await openChains({ file: readChainsFile(config.chainsFile), sandbox: config.sandbox, db, logger: createLogger('silent'), signer: null });
    return verifyLedger(db, chains.custodySources());
  },
  'ledger:verify',
)) as LedgerReport;
if (report.custodySurpluses?.length) {
  process.stderr.write(`note: ${report.custodySurpluses.length} watched address(es) hold more than was credited to them (custodySurpluses): refused dust or assets, or late payments; see docs/chains.md\n`);
}
process.exit(report.ok ? 0 : 1);
