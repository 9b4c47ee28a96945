// What a real chain's adapter implements and what it gets (the registry builds one per configured node). Apart from
// registry.ts so that the adapters, which the registry imports, need not import the registry back.
import type { Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import type { ChainAdapter, OutgoingListener, TransferListener } from './adapter.ts';
import type { CustodySource } from './custody.ts';
import type { Signer } from './signer.ts';
import type { Scanner } from './watch.ts';

/** What a real adapter gets: the database, the signer (null where nothing is sent), and where to report. */
export interface ChainContext {
  db: Db;
  logger: Logger;
  signer: Signer | null;
  /** This process sends (and so must hold the signer); false on a server whose chains worker sends (CHAIN_WORKER=0). */
  sendsHere: boolean;
  report: TransferListener;
  reportOutgoing: OutgoingListener;
}

/**
 * A real chain: the adapter interface, plus the node check, the watcher's scans and the custody check's balances.
 * A scan reports every transfer to a watched address (again as its confirmations grow, `dropped` when it left the
 * chain before counting), and the outcome of every withdrawal it sent (`reportOutgoing`, once final or failed).
 */
export interface NodeAdapter<S = unknown> extends ChainAdapter, Scanner<S>, CustodySource {
  /** Confirmations after which a payment counts. */
  readonly confirmations: number;
  readonly pollMs: number;
  /** Resolves when the node answers and agrees with the configuration; throws saying why not. */
  connect(): Promise<void>;
}
