// npm run ledger:verify — recomputes every balance from ledger entries and chain records; exit 1 on any mismatch.
import { verifyLedger, type LedgerReport } from '../ledger/verify.ts';
import { runAdminRequest } from './run.ts';

const report = (await runAdminRequest({ method: 'GET', path: '/admin/ledger/verify' }, verifyLedger, 'ledger:verify')) as LedgerReport;
process.exit(report.ok ? 0 : 1);
