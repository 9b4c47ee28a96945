// Autoswap in live mode end to end, black-box through the real server: an ETH invoice paid on chain on anvil, with an
// eth -> usdterc20 rule, is swapped on chain through the real Uniswap V2 (deployed from the npm artifacts,
// test/support/uniswap.ts) by the Uniswap V2 venue. The pool's reserves, the hot wallet's token balance and the
// ledger agree to the unit; a pool too thin for the rule's slippage cap fails the swap and releases the ether.
import fs from 'node:fs';
import path from 'node:path';
import { getAddress, parseEther, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routerAbi } from '../../src/autoswap/venues/uniswap-v2/abi.ts';
import { poolFeeOf } from '../../src/autoswap/venues/uniswap-v2/fill.ts';
import { HOT_WALLET } from '../../src/chains/signer.ts';
import { Money } from '../../src/domain/money.ts';
import { verifyLedger } from '../../src/features.ts';
import { startAnvil, testToken, type Anvil } from '../support/anvil-node.ts';
import { ANVIL } from '../support/anvil.ts';
import { chainsEnv, testSigner, testXpub } from '../support/chains.ts';
import { DATABASES } from '../support/databases.ts';
import { balanceOf, eventually } from '../support/funding.ts';
import { sleep, stopAllChildren, tempDir } from '../support/processes.ts';
import { useServer, type TestMerchant } from '../support/server.ts';
import { amountOut, deployUniswap, type Uniswap } from '../support/uniswap.ts';

const CONFIRMATIONS = 2;
const WAIT_MS = 60_000;
const hot = testSigner.evmAccount('ethereum', HOT_WALLET).address;
const { abi: tokenAbi } = testToken();

describe.runIf(ANVIL)('autoswap live on Uniswap V2 (anvil), through the server', () => {
  afterAll(stopAllChildren);

  describe.each(DATABASES)('on %s', (kind) => {
    let anvil: Anvil;
    let uni: Uniswap;
    let usdt: Address;
    const env: Record<string, string> = { AUTOSWAP_INTERVAL_MS: '100', AUTOSWAP_RETRY_MS: '100', AUTOSWAP_MAX_ATTEMPTS: '6' };
    beforeAll(async () => {
      anvil = await startAnvil();
      usdt = getAddress(await anvil.deployToken(6, 100_000_000_000000n));
      uni = await deployUniswap(anvil);
      // A deep pool at the live rate of the tests (static: 1 eth = 3500 usdt).
      await uni.addLiquidityEth(usdt, 350_000_000000n, parseEther('100'));
      // Gas for the hot wallet; the swapped ether itself comes from the invoice's deposit, swept to it.
      await anvil.pay(hot, '1');
      await anvil.mine(1);
      const dir = tempDir('swap-config');
      const swapConfig = path.join(dir, 'swap.json');
      fs.writeFileSync(
        swapConfig,
        JSON.stringify({ venues: [{ venue: 'uniswap-v2', ethereum: { router: uni.router, weth: uni.weth, pairs: [{ from: 'eth', to: 'usdterc20' }], confirmations: CONFIRMATIONS } }] }),
      );
      Object.assign(
        env,
        chainsEnv({
          ethereum: {
            rpcUrl: anvil.rpcUrl,
            chainId: anvil.chainId,
            xpub: testXpub('ethereum', false),
            tokens: { usdterc20: usdt },
            confirmations: CONFIRMATIONS,
            pollMs: 100,
            sweepIntervalMs: 0,
          },
        }),
        { SWAP_CONFIG: swapConfig },
      );
    });
    afterAll(async () => anvil?.stop());
    const server = useServer(kind, env);

    const tokenBalance = (holder: Address) => anvil.public.readContract({ address: usdt, abi: tokenAbi, functionName: 'balanceOf', args: [holder] }) as Promise<bigint>;
    const balance = (m: TestMerchant, asset: string) => balanceOf(server, m.publicToken, asset);
    const swapsOf = (m: TestMerchant) => server.app.db.prisma.autoSwap.findMany({ where: { companyId: m.tenantId } });
    /** Mines a block at a time (scans and the driver run meanwhile) until `check` holds. */
    const mineUntil = <T>(read: () => Promise<T>, check: (value: T) => boolean) =>
      eventually(
        async () => {
          const value = await read();
          if (!check(value)) {
            await anvil.mine(1);
            await sleep(150);
          }
          return value;
        },
        check,
        WAIT_MS,
      );

    /** The ledger with the custody check, once no send of ours (a consolidation) is in flight. */
    const verified = async () => {
      await mineUntil(() => server.app.db.prisma.chainSend.count({ where: { status: { in: ['signed', 'sent'] } } }), (open) => open === 0);
      return (await verifyLedger(server.app.db.prisma, server.app.platform.chains.custodySources(), { mode: 'live' })).problems;
    };

    /** A live merchant with an eth -> usdterc20 rule, and an eth invoice of `price` it is paid on chain. */
    async function paidInvoice(price: string, slippage = '1') {
      const m = await server.liveMerchant();
      const rule = await server.request('PATCH', '/api/company/autoswap', { token: m.publicToken, json: { assets: { eth: { isEnabled: true, toCurrency: 'usdterc20', maxSlippagePercent: slippage } } } });
      expect(rule.status, rule.text).toBe(200);
      const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: { invoiceCurrency: 'eth', items: [{ name: 'Order', price }] } });
      expect(created.status, created.text).toBe(201);
      const id = created.body.id as string;
      const proceeded = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'payer@example.com', paymentCurrency: 'eth' } });
      expect(proceeded.status, proceeded.text).toBe(200);
      await anvil.pay(proceeded.body.address.address as Address, proceeded.body.paymentDetails.amount as string);
      return { m, id };
    }

    it('swaps a paid eth invoice on chain: reserves, hot wallet and ledger agree to the unit', async () => {
      const [ethBefore, usdtBefore] = await uni.reserves(uni.weth, usdt);
      const heldBefore = await tokenBalance(hot);
      const { m, id } = await paidInvoice('0.2');
      const [swap] = await mineUntil(() => swapsOf(m), (s) => s.length === 1 && s[0]!.status === 'done');
      const sold = parseEther(swap!.amount.toFixed());
      const received = amountOut(sold, ethBefore, usdtBefore);
      // The pool: exactly the sold ether in, exactly what its formula gives out.
      expect(await uni.reserves(uni.weth, usdt)).toEqual([ethBefore + sold, usdtBefore - received]);
      // The hot wallet got it; the ledger booked it (no fee of ours configured): the merchant's usdterc20.
      expect((await tokenBalance(hot)) - heldBefore).toBe(received);
      const receivedText = new Money(received.toString()).div(1e6).toFixed();
      expect(swap!.toAmount!.toFixed()).toBe(receivedText);
      // The pool's 0.3% as the venue's fee, booked in and out again: the merchant keeps what arrived.
      expect(swap!.venueFee!.toFixed()).toBe(new Money(poolFeeOf(received).toString()).div(1e6).toFixed());
      expect(await balance(m, 'usdterc20')).toEqual({ available: receivedText, held: '0' });
      expect(await balance(m, 'eth')).toEqual({ available: '0', held: '0' });
      // The swap's transaction is the invoice's autoswap entry's txHash, mined, one swap.
      const invoice = await server.request('GET', `/api/invoices/v1/regular/${id}`, { token: m.publicToken });
      const entry = (invoice.body.invoiceTransactions as Record<string, unknown>[]).find((e) => e['kind'] === 'autoswap')!;
      expect(entry).toMatchObject({ status: 'done', from: 'eth', to: 'usdterc20', toAmount: receivedText, txHash: swap!.ref });
      const receipt = await anvil.public.getTransactionReceipt({ hash: swap!.ref as `0x${string}` });
      expect(receipt.status).toBe('success');
      expect(await server.app.db.prisma.chainSend.findMany({ where: { purpose: 'autoswap' }, select: { txHash: true } })).toEqual([{ txHash: swap!.ref }]);
      expect(await verified()).toEqual([]);
    });

    it('fails and releases the ether when the pool is too thin for the slippage cap, signing nothing', async () => {
      // Drain the pool: a large trade leaves little usdt for ether; the rate stays what the rate source says.
      await anvil.call(uni.router, routerAbi as never, 'swapExactETHForTokens', [0n, [uni.weth, usdt], anvil.payers[2]!.address, 2n ** 40n], 2, {
        value: parseEther('900'),
        gas: 300_000n,
      } as never);
      await anvil.mine(1);
      const sendsBefore = await server.app.db.prisma.chainSend.count({ where: { purpose: 'autoswap' } });
      const reserves = await uni.reserves(uni.weth, usdt);
      const { m, id } = await paidInvoice('0.2');
      const [swap] = await mineUntil(() => swapsOf(m), (s) => s.length === 1 && s[0]!.status === 'failed');
      expect(swap!.failReason).toMatch(/the pool would give .* usdterc20 for .* eth, less than the minimum .* \(slippage\)/);
      expect(await balance(m, 'eth')).toEqual({ available: swap!.amount.toFixed(), held: '0' });
      expect(await balance(m, 'usdterc20')).toEqual({ available: '0', held: '0' });
      expect(await uni.reserves(uni.weth, usdt)).toEqual(reserves);
      expect(await server.app.db.prisma.chainSend.count({ where: { purpose: 'autoswap' } })).toBe(sendsBefore);
      const invoice = await server.request('GET', `/api/invoices/v1/regular/${id}`, { token: m.publicToken });
      expect((invoice.body.invoiceTransactions as Record<string, unknown>[]).find((e) => e['kind'] === 'autoswap')).toMatchObject({ status: 'failed' });
      expect(await verified()).toEqual([]);
    });
  });
});
