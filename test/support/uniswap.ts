// The real Uniswap V2 on anvil, deployed from the npm packages' build artifacts (no compiler, no download): WETH9 and
// UniswapV2Router02 from @uniswap/v2-periphery, UniswapV2Factory (whose pairs are UniswapV2Pair) from
// @uniswap/v2-core. The router finds a pair by CREATE2 from a hard-coded init code hash (UniswapV2Library.pairFor):
// the one in the periphery artifact is mainnet's, keccak256 of the v2-core 1.0.1 UniswapV2Pair creation code, which is
// what this factory deploys; deploy() checks that they agree, so a package upgrade that broke it fails loudly
// rather than swapping against nothing.
import { createRequire } from 'node:module';
import { createWalletClient, getAddress, http, keccak256, maxUint256, type Abi, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import type { Anvil } from './anvil-node.ts';

const require = createRequire(import.meta.url);

interface Artifact {
  abi: Abi;
  bytecode: Hex;
}

function artifact(pkg: string, name: string): Artifact {
  const json = require(`${pkg}/build/${name}.json`) as { abi: Abi; bytecode: string };
  return { abi: json.abi, bytecode: (json.bytecode.startsWith('0x') ? json.bytecode : `0x${json.bytecode}`) as Hex };
}

export const WETH9 = artifact('@uniswap/v2-periphery', 'WETH9');
export const ROUTER = artifact('@uniswap/v2-periphery', 'UniswapV2Router02');
export const FACTORY = artifact('@uniswap/v2-core', 'UniswapV2Factory');
export const PAIR = artifact('@uniswap/v2-core', 'UniswapV2Pair');

export interface Uniswap {
  weth: Address;
  factory: Address;
  router: Address;
  /** The pair of two tokens (WETH for ether); throws when none exists. */
  pair(a: Address, b: Address): Promise<Address>;
  /** The pair's reserves of `a` and `b`, in that order. */
  reserves(a: Address, b: Address): Promise<[bigint, bigint]>;
  /** Adds liquidity from payer `from`: `tokenUnits` of `token` against `wei` of ether (mined). */
  addLiquidityEth(token: Address, tokenUnits: bigint, wei: bigint, from?: number): Promise<void>;
  /** Adds liquidity from payer `from` to the pair of two tokens (mined). */
  addLiquidity(a: Address, b: Address, aUnits: bigint, bUnits: bigint, from?: number): Promise<void>;
}

/** keccak256 of the pair's creation code: what the router must carry to find the factory's pairs. */
export const PAIR_INIT_CODE_HASH = keccak256(PAIR.bytecode);

/** Deploys WETH9, the factory and the router from payer 0 (mined). */
export async function deployUniswap(anvil: Anvil): Promise<Uniswap> {
  if (!ROUTER.bytecode.includes(PAIR_INIT_CODE_HASH.slice(2))) {
    throw new Error(`the router artifact does not carry the pair's init code hash ${PAIR_INIT_CODE_HASH}: @uniswap/v2-core and v2-periphery disagree`);
  }
  const deployer = anvil.payers[0]!;
  const wallet = createWalletClient({ account: deployer, chain: foundry, transport: http(anvil.rpcUrl) });
  const deploy = async (a: Artifact, args: unknown[]): Promise<Address> => {
    const hash = await wallet.deployContract({ abi: a.abi, bytecode: a.bytecode, args, account: deployer, chain: foundry });
    await anvil.mine(1);
    const receipt = await anvil.public.getTransactionReceipt({ hash });
    if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`deploying failed: ${hash}`);
    return getAddress(receipt.contractAddress);
  };
  const weth = await deploy(WETH9, []);
  const factory = await deploy(FACTORY, [deployer.address]);
  const router = await deploy(ROUTER, [factory, weth]);
  const read = <T>(address: Address, abi: Abi, functionName: string, args: unknown[] = []) =>
    anvil.public.readContract({ address, abi, functionName, args }) as Promise<T>;
  const mined = async (hash: Hex) => {
    await anvil.mine(1);
    const receipt = await anvil.public.getTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
  };
  const deadline = () => BigInt(Math.floor(Date.now() / 1000) + 3600);
  const uniswap: Uniswap = {
    weth,
    factory,
    router,
    async pair(a, b) {
      const pair = await read<Address>(factory, FACTORY.abi, 'getPair', [a, b]);
      if (BigInt(pair) === 0n) throw new Error(`no pair of ${a} and ${b}`);
      return getAddress(pair);
    },
    async reserves(a, b) {
      const pair = await uniswap.pair(a, b);
      const [r0, r1] = await read<[bigint, bigint, number]>(pair, PAIR.abi, 'getReserves');
      const token0 = getAddress(await read<Address>(pair, PAIR.abi, 'token0'));
      return token0 === getAddress(a) ? [r0, r1] : [r1, r0];
    },
    async addLiquidityEth(token, tokenUnits, wei, from = 0) {
      await mined(await anvil.call(token, WETH9.abi, 'approve', [router, maxUint256], from));
      const payer = anvil.payers[from]!;
      const payerWallet = createWalletClient({ account: payer, chain: foundry, transport: http(anvil.rpcUrl) });
      await mined(
        await payerWallet.writeContract({
          address: router,
          abi: ROUTER.abi,
          functionName: 'addLiquidityETH',
          args: [token, tokenUnits, 0n, 0n, payer.address, deadline()],
          value: wei,
          account: payer,
          chain: foundry,
          gas: 5_000_000n,
        }),
      );
    },
    async addLiquidity(a, b, aUnits, bUnits, from = 0) {
      await mined(await anvil.call(a, WETH9.abi, 'approve', [router, maxUint256], from));
      await mined(await anvil.call(b, WETH9.abi, 'approve', [router, maxUint256], from));
      await mined(
        await anvil.call(router, ROUTER.abi, 'addLiquidity', [a, b, aUnits, bUnits, 0n, 0n, anvil.payers[from]!.address, deadline()], from, { gas: 5_000_000n }),
      );
    },
  };
  return uniswap;
}

/** Uniswap V2's output for `amountIn` against reserves (UniswapV2Library.getAmountOut: 0.3% fee on the input). */
export const amountOut = (amountIn: bigint, reserveIn: bigint, reserveOut: bigint): bigint => (amountIn * 997n * reserveOut) / (reserveIn * 1000n + amountIn * 997n);
