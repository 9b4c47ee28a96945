// Payouts, auto-withdrawal rules and refunds to every standard address type of Bitcoin, Litecoin and Bitcoin Cash,
// through the REST API on the sandbox chain (whose addresses are mainnet's), and each with one character changed
// refused with the usual validation answer (docs/chains-utxo.md, "Addresses").
import { sha256 } from '@noble/hashes/sha2.js';
import { bech32m, createBase58check, hex } from '@scure/base';
import { describe, expect, it } from 'vitest';
import { PAYMENT_CURRENCY_INFO } from '../../src/domain/assets.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually, fund } from '../support/funding.ts';
import { useServer, type TestServer } from '../support/server.ts';

const HASH = hex.decode('751e76e8199196d454941c45d1b3a323f1433bd6');
/** A base58check address: the spec's version byte, then the hash. */
const legacy = (version: number) => createBase58check(sha256).encode(Uint8Array.of(version, ...HASH));

// Spec and well-known vectors (test/unit/address-formats.test.ts checks each against its source).
const ADDRESSES = {
  btc: {
    P2PKH: '1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu',
    P2SH: '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy',
    P2WPKH: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    P2WSH: 'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3',
    P2TR: 'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr',
  },
  ltc: {
    'L (P2PKH)': legacy(0x30),
    'M (P2SH)': legacy(0x32),
    'ltc1q (P2WPKH)': 'ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9',
    // BIP-350's Taproot key (the generator's x) under Litecoin's prefix.
    'ltc1p (P2TR)': bech32m.encode('ltc', [1, ...bech32m.toWords(hex.decode('79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798'))]),
  },
  bch: {
    'CashAddr P2PKH': 'bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a',
    'CashAddr P2SH': 'bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvn0h829pq',
    'CashAddr without its prefix': 'qr95sy3j9xwd2ap32xkykttr4cvcu7as4y0qverfuy',
    'legacy P2PKH': '1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu',
    'legacy P2SH': '3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC',
  },
} as const;
type Asset = keyof typeof ADDRESSES;
const ASSETS = Object.keys(ADDRESSES) as Asset[];
const CASES = ASSETS.flatMap((asset) => Object.entries(ADDRESSES[asset]).map(([type, address]) => ({ asset, type, address: address as string })));

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** The address with its second-to-last character replaced by the next of its alphabet: only the checksum can tell. */
function corrupted(address: string): string {
  // Base58 ones begin with 1 or 3 (Bitcoin, Bitcoin Cash legacy), L or M (Litecoin); the rest are bech32 or CashAddr.
  const alphabet = /^[13LM]/.test(address) ? BASE58 : BECH32;
  const i = address.length - 2;
  return address.slice(0, i) + alphabet[(alphabet.indexOf(address[i]!) + 1) % alphabet.length] + address.slice(i + 1);
}

const minimum = (asset: Asset) => PAYMENT_CURRENCY_INFO[asset].minWithdrawal;

describe.each(DATABASES)('UTXO address types through the REST API on %s', (kind) => {
  const server = useServer(kind, { WITHDRAWAL_SEND_INTERVAL_MS: '200' });
  const withdraw = (token: string, items: unknown[]) => server.request('POST', '/api/transactions/withdraw', { token, json: { items } });

  it('withdrawals to every standard address type are accepted and sent; with one character changed they are refused', async () => {
    expect(CASES.map((c) => c.address[0])).toEqual(['1', '3', 'b', 'b', 'b', 'L', 'M', 'l', 'l', 'b', 'b', 'q', '1', '3']);
    const m = await server.merchant();
    for (const asset of ASSETS) await fund(server, m.publicToken, asset, '1');
    const items = CASES.flatMap(({ asset, address }) => [
      { amount: minimum(asset), tag: '', to: address, asset },
      { amount: minimum(asset), tag: '', to: corrupted(address), asset },
    ]);
    const res = await withdraw(m.publicToken, items);
    expect(res.status, res.text).toBe(200);
    const answers = res.body.map((r: { success: boolean; message: string }) => [r.success, r.message]);
    expect(answers).toEqual(
      CASES.flatMap(({ asset }) => [
        [true, 'Withdrawal accepted and processing'],
        [false, `Receiver address is not a valid ${asset} address`],
      ]),
    );
    // The sender pays each of them out (the sandbox chain answers a transaction hash).
    const uids = res.body.filter((r: { success: boolean }) => r.success).map((r: { uid: string }) => r.uid) as string[];
    const sent = await eventually(
      () => Promise.all(uids.map((uid) => server.request('GET', `/api/transactions/withdrawals/${uid}`, { token: m.publicToken }).then((r) => r.body))),
      (all) => all.every((w) => w.txHash !== null),
    );
    expect(sent.map((w) => w.to)).toEqual(CASES.map((c) => c.address));
  });

  it('auto-withdrawal rules take every standard address type; with one character changed they are a 422 naming the field', async () => {
    const m = await server.merchant();
    const patch = (asset: Asset, withdrawalAddress: string) =>
      server.request('PATCH', '/api/company/auto-withdrawals', { token: m.publicToken, json: { assets: { [asset]: { amount: 1, isEnabled: true, withdrawalTag: null, withdrawalAddress } } } });
    for (const { asset, type, address } of CASES) {
      const ok = await patch(asset, address);
      expect(ok.status, `${asset} ${type}: ${ok.text}`).toBe(200);
      expect(ok.body.autoWithdrawals.find((r: { assetId: string }) => r.assetId === asset)).toMatchObject({ isEnabled: true, withdrawalAddress: address });
      const bad = await patch(asset, corrupted(address));
      expect(bad.status, `${asset} ${type}`).toBe(422);
      expect(bad.body.error.details).toEqual([{ path: `assets.${asset}.withdrawalAddress`, message: `is not a valid ${asset} address` }]);
    }
  });

  it('refunds go to a P2TR, an L and a legacy Bitcoin Cash address; with one character changed they are a 422', async () => {
    const m = await server.merchant();
    const targets: [Asset, string, string][] = [
      ['btc', 'bitcoin', ADDRESSES.btc.P2TR],
      ['ltc', 'litecoin', ADDRESSES.ltc['L (P2PKH)']],
      ['bch', 'bitcoin-cash', ADDRESSES.bch['legacy P2SH']],
    ];
    for (const [asset, network, address] of targets) {
      const id = await wrongInvoice(server, m.publicToken, asset);
      const refund = (to: string) => server.request('POST', `/api/invoices/v1/regular/${id}/refund`, { token: m.publicToken, json: { address: to } });
      const bad = await refund(corrupted(address));
      expect(bad.status, bad.text).toBe(422);
      expect(bad.body.error.details).toEqual([{ path: 'address', message: `is not a valid ${network} address` }]);
      const ok = await refund(address);
      expect(ok.status, ok.text).toBe(200);
      expect(ok.body).toMatchObject({ status: 'refunded', refund: { address, status: 'sent' } });
    }
  });
});

/** An invoice of `asset` paid too little, final on the sandbox chain: wrong, so refundable. */
async function wrongInvoice(server: TestServer, token: string, asset: Asset): Promise<string> {
  const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: asset, items: [{ name: 'Order', price: 1 }] } });
  expect(created.status, created.text).toBe(201);
  const filled = await server.request('POST', `/api/invoices/v1/regular/${created.body.id}/proceed`, { json: { clientEmail: 'payer@example.com', paymentCurrency: asset } });
  expect(filled.status, filled.text).toBe(200);
  const paid = await server.request('POST', '/api/sandbox/transfers', {
    token,
    json: { invoiceId: created.body.id, amount: '0.1', confirmations: PAYMENT_CURRENCY_INFO[asset].confirmations },
  });
  expect(paid.status, paid.text).toBe(201);
  expect((await server.request('GET', `/api/invoices/v1/regular/${created.body.id}`)).body.status).toBe('wrong');
  return created.body.id as string;
}
