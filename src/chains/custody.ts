// Does the chain hold what our records say it holds? For every watched (deposit) address of a real network that
// ever saw money: its confirmed on-chain balance per asset must equal what was credited to it, plus gas sent to it
// (top-ups), less what left it (consolidation, with its fee in the native asset). Part of `npm run ledger:verify`.
import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';
import { NETWORKS, PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, type Network, type PaymentCurrency } from '../domain/assets.ts';
import { Money } from '../domain/money.ts';
import { sendInputs } from './store.ts';

/** The native asset of each network (what fees are paid in). */
export const NATIVE_ASSET: Record<Network, PaymentCurrency> = {
  bitcoin: 'btc',
  litecoin: 'ltc',
  'bitcoin-cash': 'bch',
  ethereum: 'eth',
  bsc: 'bnb',
  tron: 'trx',
  solana: 'sol',
  ton: 'ton',
};

export interface AddressBalance {
  address: string;
  asset: PaymentCurrency;
  /** Confirmed (as deep as the network's required confirmations), in units of the asset. */
  amount: string;
}

/** What custody checks need of a real adapter: confirmed balances of some of its addresses. */
export interface CustodySource {
  readonly network: Network;
  watchedBalances(addresses: string[]): Promise<AddressBalance[]>;
}

export interface CustodyProblem {
  network: Network;
  address: string;
  asset: PaymentCurrency;
  expected: string;
  onChain: string;
}

const key = (address: string, asset: string) => `${address}\u0000${asset}`;

/** Our records' view of the watched addresses of `network` that ever held money: address -> asset -> amount. */
async function expectedBalances(db: Db, network: Network): Promise<Map<string, Money>> {
  const expected = new Map<string, Money>();
  const add = (address: string, asset: string, amount: string | InstanceType<typeof Money>) => {
    const k = key(address, asset);
    expected.set(k, (expected.get(k) ?? new Money(0)).plus(amount));
  };
  const assets = PAYMENT_CURRENCIES.filter((c) => PAYMENT_CURRENCY_INFO[c].network === network);
  // Credited: confirmed transfers to derived addresses. TON and Solana receive on one wallet: their DerivedAddress rows
  // are tags and reference keys, never a transfer's toAddress, so nothing of theirs is here.
  const credits = await db.$queryRaw<{ address: string; asset: string; total: string }[]>`
    SELECT t."toAddress" AS "address", t."asset", SUM(t."amount")::text AS "total" FROM "ChainTransfer" t
    JOIN "DerivedAddress" d ON d."network" = t."network" AND d."address" = t."toAddress"
    WHERE t."network" = ${network} AND t."state" = 'confirmed' AND t."asset" IN (${Prisma.join(assets)})
    GROUP BY t."toAddress", t."asset"`;
  for (const c of credits) add(c.address, c.asset, c.total);
  // Confirmed sends moved their amount; failed ones that were mined (reverted) still paid their fee.
  const sends = await db.chainSend.findMany({ where: { network, OR: [{ status: 'confirmed' }, { status: 'failed', blockNumber: { not: null } }] } });
  const derived = new Set(
    (await db.derivedAddress.findMany({ where: { network, address: { in: [...new Set(sends.flatMap((s) => [s.fromAddress, s.toAddress, ...inputAddresses(s.inputs)]))] } } })).map(
      (d) => d.address,
    ),
  );
  const native = NATIVE_ASSET[network];
  for (const send of sends) {
    if (send.status === 'failed') {
      if (send.fee && derived.has(send.fromAddress)) add(send.fromAddress, native, new Money(send.fee.toString()).neg());
      continue;
    }
    if (derived.has(send.toAddress)) add(send.toAddress, send.asset, send.amount.toString());
    if (derived.has(send.fromAddress)) {
      add(send.fromAddress, send.asset, new Money(send.amount.toString()).neg());
      if (send.fee) add(send.fromAddress, native, new Money(send.fee.toString()).neg());
    }
    for (const input of sendInputs(send.inputs)) if (derived.has(input.address)) add(input.address, send.asset, new Money(input.amount).neg());
  }
  return expected;
}

const inputAddresses = (inputs: unknown) => sendInputs(inputs).map((i) => i.address);

/**
 * Every watched address whose on-chain balance disagrees with our records, per real network given. Less on chain than
 * recorded is a problem (money we count on is not there). More is a surplus: money on our address that was never
 * credited (dust or an asset the address does not take, both refused; a payment after its invoice's address was
 * swept): nothing is missing, but an operator should look, so it is reported apart.
 */
export async function custodyProblems(db: Db, sources: CustodySource[]): Promise<{ addresses: number; problems: CustodyProblem[]; surpluses: CustodyProblem[] }> {
  const problems: CustodyProblem[] = [];
  const surpluses: CustodyProblem[] = [];
  let addresses = 0;
  for (const source of sources) {
    const expected = await expectedBalances(db, source.network);
    const watched = [...new Set([...expected.keys()].map((k) => k.split('\u0000')[0]!))];
    addresses += watched.length;
    const onChain = new Map((await source.watchedBalances(watched)).map((b) => [key(b.address, b.asset), new Money(b.amount)]));
    for (const k of new Set([...expected.keys(), ...onChain.keys()])) {
      const want = expected.get(k) ?? new Money(0);
      const have = onChain.get(k) ?? new Money(0);
      if (!want.eq(have)) {
        const [address, asset] = k.split('\u0000') as [string, PaymentCurrency];
        (have.gt(want) ? surpluses : problems).push({ network: source.network, address, asset, expected: want.toFixed(), onChain: have.toFixed() });
      }
    }
  }
  return { addresses, problems, surpluses };
}

export const isNetwork = (n: string): n is Network => (NETWORKS as readonly string[]).includes(n);
