// The pure parts of the UTXO adapter: descriptors and their checksums, amounts in satoshis, sizes and fees against
// really signed transactions, what a payment or a consolidation spends, what a scan does with what the node says,
// and the JSON-RPC client against a local HTTP server (batches, busy nodes, credentials, exact amounts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hex } from '@scure/base';
import { p2pkh, p2sh, p2tr, p2wpkh, p2wsh, RawTx } from '@scure/btc-signer';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveChainAddress, parseExtendedPublicKey } from '../../src/chains/hd.ts';
import type { KeyPath } from '../../src/chains/signer.ts';
import { chainDescriptor, descriptorChecksum, importRequestFor, withChecksum } from '../../src/chains/utxo/descriptors.ts';
import { incomingStep, sendStep } from '../../src/chains/utxo/follow.ts';
import { DUST_RELAY_FEE, SIGNER_NETWORKS } from '../../src/chains/utxo/networks.ts';
import { BitcoinRpc, coins, parseNodeJson, RpcError, RpcTransportError } from '../../src/chains/utxo/rpc.ts';
import { parseJsonExact } from '../../src/core/json.ts';
import {
  coinText,
  dustLimit,
  estimateVsize,
  feeFor,
  finalizeSigned,
  fromSats,
  outputScript,
  planPayment,
  planSweep,
  toSats,
  unsignedPsbt,
  type Coin,
  type SpendRules,
} from '../../src/chains/utxo/transactions.ts';
import { Money, toMoney } from '../../src/domain/money.ts';
import { TEST_MNEMONIC, testSigner, testXpub } from '../support/chains.ts';

const account = parseExtendedPublicKey(testXpub('litecoin', true));
const regtest = SIGNER_NETWORKS.litecoin.regtest;

describe('descriptors', () => {
  it('checksums as Bitcoin Core computes them (BIP-380’s vector; litecoind’s getdescriptorinfo for ours)', () => {
    expect(descriptorChecksum('raw(deadbeef)')).toBe('89f8spxm');
    expect(withChecksum(`wpkh(${testXpub('litecoin', true)}/0/*)`)).toBe(`wpkh(${testXpub('litecoin', true)}/0/*)#xxzjtpj7`);
    expect(withChecksum(`pkh(${testXpub('litecoin', true)}/1/*)`)).toBe(`pkh(${testXpub('litecoin', true)}/1/*)#kvqmphvc`);
    expect(() => descriptorChecksum('wpkh(é)')).toThrow(/cannot contain/);
  });

  it('write the account as tpub on test networks and xpub on main, whatever form CHAINS_FILE used', () => {
    const master = HDKey.fromMasterSeed(mnemonicToSeedSync(TEST_MNEMONIC));
    const zpubLike = master.derive("m/84'/2'/0'");
    expect(chainDescriptor('litecoin', zpubLike, false, 0)).toMatch(new RegExp(`^wpkh\\(${zpubLike.publicExtendedKey}/0/\\*\\)#[a-z0-9]{8}$`));
    expect(chainDescriptor('litecoin', account, true, 1)).toMatch(/^wpkh\(tpub[1-9A-HJ-NP-Za-km-z]+\/1\/\*\)#/);
    expect(chainDescriptor('bitcoin-cash', account, true, 0)).toMatch(/^pkh\(tpub/);
  });

  it('ask legacy wallets for watch-only keys and descriptor wallets for inactive ranges', () => {
    const request = { desc: 'x', range: [0, 19] as [number, number], timestamp: 'now' as const, internal: false };
    expect(importRequestFor(request, false)).toEqual({ ...request, watchonly: true });
    expect(importRequestFor(request, true)).toEqual({ ...request, active: false });
  });
});

describe('amounts', () => {
  it('are whole satoshis, exact both ways, written with 8 places', () => {
    expect(toSats(toMoney('1.01'))).toBe(101_000_000n);
    expect(toSats('20999999.97690000')).toBe(2_099_999_997_690_000n);
    expect(toSats('0.00000001')).toBe(1n);
    expect(() => toSats('0.000000001')).toThrow(/whole number of satoshis/);
    expect(() => toSats('-0.1')).toThrow(/whole number of satoshis/);
    expect(fromSats(2_099_999_997_690_000n).toFixed()).toBe('20999999.9769');
    expect(coinText(50_000n)).toBe('0.00050000');
    expect(coinText(toSats('0.1') + toSats('0.2'))).toBe('0.30000000');
  });
});

/** Coins of the test signer's keys (as the node would list them), for signing for real. */
function coin(key: KeyPath, value: bigint, n = 0): Coin {
  const address = deriveChainAddress(account, 'litecoin', key.chain, key.index, { regtest: true });
  return { txid: `${(n + 1).toString(16).padStart(2, '0')}`.repeat(32), vout: n, value, script: hex.encode(outputScript(address, regtest)), address, key };
}

const signed = (plan: { inputs: Coin[] } & Parameters<typeof unsignedPsbt>[0]) =>
  finalizeSigned(testSigner.signPsbt('litecoin', true, unsignedPsbt(plan), plan.inputs.map((c) => c.key)));

/** Litecoin's rules: our inputs are P2WPKH, its dust relay fee 30 sat/vB (ten times Bitcoin's). */
const LTC: SpendRules = { input: 'wpkh', dustRelayFee: DUST_RELAY_FEE.litecoin };

/** One address of each output type on litecoin regtest (keys and scripts from btc-signer's payment builders). */
const key = (n: number) => HDKey.fromMasterSeed(mnemonicToSeedSync(TEST_MNEMONIC)).derive(`m/86'/1'/0'/0/${n}`).publicKey!;
const OUTPUT_TYPES = {
  P2PKH: { address: p2pkh(key(0), regtest).address!, bytes: 34, dust: 546n },
  P2SH: { address: p2sh(p2wpkh(key(1), regtest), regtest).address!, bytes: 32, dust: 540n },
  P2WPKH: { address: p2wpkh(key(2), regtest).address!, bytes: 31, dust: 294n },
  P2WSH: { address: p2wsh(p2pkh(key(3), regtest), regtest).address!, bytes: 43, dust: 330n },
  P2TR: { address: p2tr(key(4).subarray(1), undefined, regtest).address!, bytes: 43, dust: 330n },
};

describe('sizes and fees', () => {
  const to = outputScript(deriveChainAddress(account, 'litecoin', 0, 99, { regtest: true }), regtest);
  const change = outputScript(deriveChainAddress(account, 'litecoin', 1, 0, { regtest: true }), regtest);

  it('estimate at least what the signed transaction weighs, and at most a byte per input more', () => {
    for (const inputs of [1, 2, 5, 20]) {
      const coins = Array.from({ length: inputs }, (_, i) => coin({ chain: 0, index: i }, 100_000n, i));
      const plan = planPayment(coins, 100_000n * BigInt(inputs) - 50_000n, to, change, new Money(1), LTC);
      if ('shortBy' in plan) throw new Error('short');
      const { vsize } = signed(plan);
      expect(plan.vsize).toBeGreaterThanOrEqual(vsize);
      expect(plan.vsize - vsize).toBeLessThanOrEqual(Math.ceil(inputs / 4) + 1);
    }
    // Known sizes: 1 P2WPKH input, 2 P2WPKH outputs.
    expect(estimateVsize('wpkh', 1, [22, 22])).toBe(141);
    expect(estimateVsize('pkh', 1, [25, 25])).toBe(226);
  });

  it.each(Object.entries(OUTPUT_TYPES))('count a %s output at its size, and the signed payment to it weighs no more than estimated', (_, type) => {
    const script = outputScript(type.address, regtest);
    expect(estimateVsize('wpkh', 1, [script.length]) - estimateVsize('wpkh', 1, [])).toBe(type.bytes);
    for (const inputs of [1, 3, 8]) {
      const coins = Array.from({ length: inputs }, (_, i) => coin({ chain: 0, index: i }, 100_000n, i));
      const plan = planPayment(coins, 100_000n * BigInt(inputs) - 50_000n, script, change, new Money(1), LTC);
      if ('shortBy' in plan) throw new Error('short');
      expect(plan.outputs.map((o) => hex.encode(o.script))).toEqual([hex.encode(script), hex.encode(change)]);
      const tx = signed(plan);
      expect(hex.encode(RawTx.decode(hex.decode(tx.rawTx)).outputs[0]!.script)).toBe(hex.encode(script));
      expect(plan.vsize).toBeGreaterThanOrEqual(tx.vsize);
      // Outputs are counted exactly; only signatures may be shorter than the 72 bytes estimated (a witness byte each).
      expect(plan.vsize - tx.vsize).toBeLessThanOrEqual(Math.ceil(inputs / 4) + 1);
    }
  });

  it('round the fee up to a whole satoshi', () => {
    expect(feeFor(141, new Money('1.5'))).toBe(212n);
    expect(feeFor(141, new Money(2))).toBe(282n);
  });

  it.each(Object.entries(OUTPUT_TYPES))('the dust limit of a %s output is the node’s: Bitcoin Core’s at 3 sat/vB, ten times that on Litecoin', (_, type) => {
    const script = outputScript(type.address, regtest);
    expect(dustLimit(script, DUST_RELAY_FEE.bitcoin)).toBe(type.dust);
    // What litecoind 0.21 refuses as "amount too small" below (5460, 5400, 2940, 3300, 3300).
    expect(dustLimit(script, DUST_RELAY_FEE.litecoin)).toBe(type.dust * 10n);
  });
});

describe('what a payment spends', () => {
  const to = outputScript(deriveChainAddress(account, 'litecoin', 0, 7, { regtest: true }), regtest);
  const hot = outputScript(deriveChainAddress(account, 'litecoin', 1, 0, { regtest: true }), regtest);
  const rate = new Money(2);
  const HOT = { chain: 1 as const, index: 0 };

  it('pays exactly the amount, the largest coins first, change back to the hot wallet', () => {
    const plan = planPayment([coin(HOT, 30_000n, 0), coin(HOT, 500_000n, 1), coin(HOT, 200_000n, 2)], 600_000n, to, hot, rate, LTC);
    if ('shortBy' in plan) throw new Error('short');
    expect(plan.inputs.map((c) => c.value)).toEqual([500_000n, 200_000n]);
    expect(plan.outputs[0]).toEqual({ script: to, value: 600_000n });
    expect(plan.fee).toBe(feeFor(estimateVsize('wpkh', 2, [22, 22]), rate));
    expect(plan.outputs[1]).toEqual({ script: hot, value: 700_000n - 600_000n - plan.fee });
    const tx = signed(plan);
    expect(tx.txid).toMatch(/^[0-9a-f]{64}$/);
  });

  it('leaves change below the dust limit to the fee', () => {
    const alone = feeFor(estimateVsize('wpkh', 1, [22]), rate);
    const plan = planPayment([coin(HOT, 100_000n + alone + 100n)], 100_000n, to, hot, rate, LTC);
    if ('shortBy' in plan) throw new Error('short');
    expect(plan.outputs).toEqual([{ script: to, value: 100_000n }]);
    expect(plan.fee).toBe(alone + 100n);
  });

  it('leaves change below Litecoin’s dust limit (30 sat/vB, not Bitcoin’s 3) to the fee: litecoind would refuse it', () => {
    const withChange = feeFor(estimateVsize('wpkh', 1, [22, 22]), rate);
    const coins = [coin(HOT, 100_000n + withChange + 2_900n)];
    const ltc = planPayment(coins, 100_000n, to, hot, rate, LTC);
    if ('shortBy' in ltc) throw new Error('short');
    expect(ltc.outputs).toEqual([{ script: to, value: 100_000n }]);
    const btc = planPayment(coins, 100_000n, to, hot, rate, { input: 'wpkh', dustRelayFee: DUST_RELAY_FEE.bitcoin });
    if ('shortBy' in btc) throw new Error('short');
    expect(btc.outputs).toEqual([{ script: to, value: 100_000n }, { script: hot, value: 2_900n }]);
  });

  it('says how much is missing', () => {
    const plan = planPayment([coin(HOT, 50_000n)], 100_000n, to, hot, rate, LTC);
    expect(plan).toEqual({ shortBy: 100_000n + feeFor(estimateVsize('wpkh', 1, [22, 22]), rate) - 50_000n, available: 50_000n, needed: 100_000n + 282n });
    expect(planPayment([], 1_000n, to, hot, rate, LTC)).toMatchObject({ available: 0n });
  });
});

describe('what a consolidation spends', () => {
  const hot = outputScript(deriveChainAddress(account, 'litecoin', 1, 0, { regtest: true }), regtest);

  it('takes the deposits worth it (5 times what spending them costs), the largest first, up to the limit', () => {
    const rate = new Money(10); // an input costs 680 sat: worth it from 3,400
    const deposits = [coin({ chain: 0, index: 0 }, 3_399n, 0), coin({ chain: 0, index: 1 }, 3_400n, 1), coin({ chain: 0, index: 2 }, 1_000_000n, 2), coin({ chain: 0, index: 3 }, 50_000n, 3)];
    const plan = planSweep(deposits, hot, rate, LTC, 2)!;
    expect(plan.inputs.map((c) => c.value)).toEqual([1_000_000n, 50_000n]);
    expect(plan.outputs).toEqual([{ script: hot, value: 1_050_000n - plan.fee }]);
    expect(signed(plan).vsize).toBeLessThanOrEqual(plan.vsize);
    expect(planSweep(deposits, hot, rate, LTC, 10)!.inputs).toHaveLength(3);
    expect(planSweep([coin({ chain: 0, index: 0 }, 3_399n)], hot, rate, LTC, 10)).toBeNull();
    expect(planSweep([], hot, rate, LTC, 10)).toBeNull();
  });
});

describe('what a scan does with what the node says', () => {
  const required = 2;
  it('for incoming outputs', () => {
    expect(incomingStep(undefined, 0, required)).toBe('report');
    expect(incomingStep(undefined, -3, required)).toBe('none');
    expect(incomingStep({ state: 'seen', confirmations: 0 }, 1, required)).toBe('report');
    expect(incomingStep({ state: 'seen', confirmations: 1 }, 1, required)).toBe('none');
    expect(incomingStep({ state: 'seen', confirmations: 1 }, 0, required)).toBe('none'); // back in the mempool: wait
    expect(incomingStep({ state: 'seen', confirmations: 1 }, -1, required)).toBe('none'); // the conflict may still go
    expect(incomingStep({ state: 'seen', confirmations: 1 }, -2, required)).toBe('drop');
    expect(incomingStep({ state: 'confirmed', confirmations: 2 }, 5, required)).toBe('none');
    expect(incomingStep({ state: 'confirmed', confirmations: 2 }, 0, required)).toBe('credited-lost');
    expect(incomingStep({ state: 'confirmed', confirmations: 2 }, -1, required)).toBe('credited-lost');
    expect(incomingStep({ state: 'confirmed', confirmations: 6 }, 3, 6)).toBe('credited-lost');
    expect(incomingStep({ state: 'confirmed', confirmations: 2 }, 3, 6)).toBe('none'); // confirmations raised since
    expect(incomingStep({ state: 'dropped', confirmations: 1 }, 2, required)).toBe('dropped-back');
    expect(incomingStep({ state: 'dropped', confirmations: 1 }, -2, required)).toBe('none');
    expect(incomingStep({ state: 'frozen', confirmations: 1 }, 9, required)).toBe('none');
  });

  it('for our sends', () => {
    expect(sendStep('signed', null, required)).toBe('offer');
    expect(sendStep('sent', 0, required)).toBe('offer');
    expect(sendStep('signed', 1, required)).toBe('mark-sent');
    expect(sendStep('sent', 1, required)).toBe('wait');
    expect(sendStep('sent', 2, required)).toBe('confirm');
    expect(sendStep('signed', 3, required)).toBe('confirm');
    expect(sendStep('sent', -1, required)).toBe('wait');
    expect(sendStep('sent', -2, required)).toBe('fail');
  });
});

describe('the JSON-RPC client', () => {
  let server: http.Server;
  let url = '';
  const seen: { authorization?: string; path?: string; body: any }[] = [];
  let busyFor = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(text);
        seen.push({ authorization: req.headers.authorization, path: req.url, body });
        if (busyFor > 0) {
          busyFor--;
          return res.writeHead(500).end('Work queue depth exceeded');
        }
        const answer = (call: { id: number; method: string; params: unknown[] }) =>
          call.method === 'fail'
            ? `{"result":null,"error":{"code":-5,"message":"No such thing"},"id":${call.id}}`
            : `{"result":{"amount":21000000.12345678,"small":0.1,"height":800000},"error":null,"id":${call.id}}`;
        if (Array.isArray(body)) {
          // Answers out of order: they are matched by id.
          return res.writeHead(200).end(`[${[...body].reverse().map(answer).join(',')}]`);
        }
        res.writeHead(body.method === 'fail' ? 500 : 200).end(answer(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://us%40er:p%3Ass@127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends the URL’s credentials as Basic auth to the wallet path, and reads amounts exactly', async () => {
    const rpc = new BitcoinRpc(url).wallet('pay rail');
    const result = await rpc.call<{ amount: unknown; small: unknown; height: number }>('getbalance');
    expect(coins(result.amount).toFixed()).toBe('21000000.12345678');
    expect(coins(result.small).eq(toMoney('0.1'))).toBe(true);
    expect(result.height).toBe(800000);
    expect(seen.at(-1)).toMatchObject({ authorization: `Basic ${Buffer.from('us@er:p:ss').toString('base64')}`, path: '/wallet/pay%20rail' });
  });

  it('parses answers like the exact parser: fractions and long numbers as digits, strings untouched', () => {
    const samples = [
      '{"result":{"amount":-0.00012345,"fee":1e-5,"big":12345678901234567890,"safe":9007199254740991,"n":42,"s":"1.5 \\" 2.5","k":["0.1",0.1]},"error":null,"id":7}',
      '[{"a":"\\u0041 3.14","b":[1,2.50,-3e+2,{"c":0.00000001}]},true,null,"x"]',
      '{"s":"\\u0000 1.5","v":1.5}',
    ];
    for (const text of samples) expect(parseNodeJson(text)).toEqual(parseJsonExact(text));
    expect(coins((parseNodeJson('{"v":21000000.00000001}') as { v: unknown }).v).toFixed()).toBe('21000000.00000001');
  });

  it('batches, matching answers by id, with each refusal in its place', async () => {
    const rpc = new BitcoinRpc(url);
    const calls = Array.from({ length: 450 }, (_, i) => ({ method: i % 100 === 7 ? 'fail' : 'ok', params: [i] }));
    const results = await rpc.batch<{ height: number }>(calls);
    expect(results).toHaveLength(450);
    results.forEach((r, i) => (i % 100 === 7 ? expect(r).toBeInstanceOf(RpcError) : expect(r).toMatchObject({ height: 800000 })));
    expect((results[7] as RpcError).code).toBe(-5);
    await expect(rpc.batchAll(calls)).rejects.toThrow(/No such thing/);
    await expect(rpc.call('fail')).rejects.toMatchObject({ code: -5, method: 'fail' });
  });

  it('waits out a busy node (work queue full) a few times, then says it is unavailable', async () => {
    const rpc = new BitcoinRpc(url);
    busyFor = 2;
    await expect(rpc.call('ok')).resolves.toMatchObject({ height: 800000 });
    busyFor = 10;
    await expect(rpc.call('ok')).rejects.toBeInstanceOf(RpcTransportError);
    busyFor = 0;
  });

  it('caps the requests in flight', async () => {
    let active = 0;
    let most = 0;
    const slow = http.createServer((req, res) => {
      most = Math.max(most, ++active);
      req.resume();
      setTimeout(() => {
        active--;
        res.writeHead(200).end('{"result":1,"error":null,"id":1}');
      }, 20);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const rpc = new BitcoinRpc(`http://127.0.0.1:${(slow.address() as AddressInfo).port}`);
    await Promise.all(Array.from({ length: 40 }, () => rpc.call('x')));
    expect(most).toBeLessThanOrEqual(8);
    expect(most).toBeGreaterThan(1);
    await new Promise<void>((resolve) => slow.close(() => resolve()));
  });
});

it('the signer’s P2WPKH address is what btc-signer derives for the same key', () => {
  const master = HDKey.fromMasterSeed(mnemonicToSeedSync(TEST_MNEMONIC));
  const key = master.derive("m/84'/1'/0'/1/0");
  expect(deriveChainAddress(account, 'litecoin', 1, 0, { regtest: true })).toBe(p2wpkh(key.publicKey!, regtest).address);
});
