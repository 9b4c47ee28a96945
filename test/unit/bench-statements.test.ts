// The benchmark's SQL check (bench/capture.ts): background jobs' statements and transactions are left out, the
// request's are compared verbatim with bench/sql.ts, so a create that stops being one statement fails the check.
import { describe, expect, it } from 'vitest';
import { compareStatements, requestStatements, type Captured } from '../../bench/capture.ts';
import { SQL } from '../../bench/sql.ts';

const on = (client: number, ...texts: string[]): Captured[] => texts.map((text) => ({ client, text }));

describe('the benchmark statement check', () => {
  it('passes the create statement among background work: the e-mail planner transaction, the bus, a webhook claim', () => {
    const all = [
      ...on(1, 'BEGIN', 'SELECT "txid", "seq" FROM "EmailCursor" WHERE "id" = $1 FOR UPDATE'),
      ...on(2, SQL.createInvoice),
      ...on(3, 'NOTIFY payrail_events', 'SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS "horizon"'),
      ...on(1, 'INSERT INTO "EmailPlanned" ("eventId") SELECT unnest($1::text[])', 'COMMIT'),
    ];
    expect(requestStatements(all)).toEqual([SQL.createInvoice]);
    expect(compareStatements('create', 'create', all).ok).toBe(true);
  });

  it('fails a create that takes a transaction, another statement, or none', () => {
    expect(compareStatements('create', 'create', on(2, 'BEGIN', SQL.createInvoice, 'COMMIT')).ok).toBe(false);
    expect(compareStatements('create', 'create', on(2, SQL.createInvoice, SQL.selectInvoice)).ok).toBe(false);
    expect(compareStatements('create', 'create', on(2, SQL.createInvoice.replace('"orderId", ', ''))).ok).toBe(false);
    expect(compareStatements('create', 'create', on(1, 'NOTIFY payrail_events')).ok).toBe(false);
  });

  it('takes the concurrent tail of a read in any order, but not a missing relation', () => {
    const [invoice, ...tail] = [SQL.selectInvoice, SQL.selectCompany, SQL.selectItems, SQL.selectAddress, SQL.selectTransfers, SQL.selectAutoswaps, SQL.selectRefund];
    expect(compareStatements('read', 'restRead', on(1, invoice!, ...tail.reverse())).ok).toBe(true);
    expect(compareStatements('read', 'restRead', on(1, invoice!, ...tail.slice(1))).ok).toBe(false);
    expect(compareStatements('read', 'graphqlRead', on(1, SQL.selectInvoiceOfCompany, SQL.selectItemsIn, SQL.selectCompanyIn)).ok).toBe(true);
  });
});
