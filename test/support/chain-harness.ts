// An adapter on its own: a fresh database (its derived addresses, cursors and sends), the test signer, and listeners
// that record what the adapter reports instead of applying it. Scans are run by the test, one at a time.
import type { OutgoingReport, TransferReport } from '../../src/chains/adapter.ts';
import type { ChainContext, NodeAdapter } from '../../src/chains/registry.ts';
import { openDatabase, type Database } from '../../src/db/client.ts';
import { ConflictError, NotFoundError } from '../../src/errors/app-error.ts';
import { createLogger } from '../../src/logger.ts';
import { testSigner } from './chains.ts';
import { freshDatabase, type TestDatabase } from './databases.ts';

export interface Harness {
  context: ChainContext;
  reports: TransferReport[];
  outgoing: OutgoingReport[];
  /** Transfers to these addresses (or tags) are refused as not ours, as the payments processor would. */
  unknown: Set<string>;
  /** Outgoing reports are refused as not sent yet while true (the sender has not recorded its transaction). */
  outgoingNotRecorded: boolean;
  /** Runs one scan from the state the last one answered (the first from initialState()). */
  scan<S>(adapter: NodeAdapter<S>): Promise<S>;
  close(): Promise<void>;
}

export async function openHarness(): Promise<Harness> {
  const testDb: TestDatabase = await freshDatabase('pglite');
  const database: Database = await openDatabase({ url: testDb.url, migrate: false, poolSize: 2, role: 'test' });
  const states = new Map<unknown, unknown>();
  const harness: Harness = {
    reports: [],
    outgoing: [],
    unknown: new Set(),
    outgoingNotRecorded: false,
    context: {
      db: database.prisma,
      sendsHere: true,
      logger: createLogger('silent'),
      signer: testSigner,
      report: async (r) => {
        if (harness.unknown.has(r.tag ?? r.to)) throw new NotFoundError(`No payment address ${r.to}`);
        harness.reports.push(r);
      },
      reportOutgoing: async (r) => {
        if (harness.outgoingNotRecorded) throw new ConflictError('CONFLICT', `Withdrawal ${r.id} has no transaction ${r.txHash} on chain yet`);
        harness.outgoing.push(r);
      },
    },
    async scan<S>(adapter: NodeAdapter<S>) {
      const state = states.has(adapter) ? (states.get(adapter) as S) : await adapter.initialState();
      // Through JSON, as the watcher stores it between scans.
      const next = JSON.parse(JSON.stringify(await adapter.scan(state))) as S;
      states.set(adapter, next);
      return next;
    },
    async close() {
      await database.close();
      await testDb.drop();
    },
  };
  return harness;
}

/** The reports of one transfer, in order, as [confirmations, dropped]. */
export const historyOf = (reports: TransferReport[], txHash: string) => reports.filter((r) => r.txHash === txHash).map((r) => [r.confirmations, r.dropped]);
