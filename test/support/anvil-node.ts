// A real EVM node for the EVM adapter's tests and its benchmark: anvil from npm (@foundry-rs/anvil's platform package,
// no download), on a free port, mining only when told (so confirmations and reorgs are the test's to make), with a
// payer funded by anvil's default mnemonic (not the signer's: the payer is a customer) and an ERC-20 compiled from
// test/fixtures/evm/TestToken.sol by solc-js. Every wait is bounded. No vitest here (bench/chains-evm.ts uses it).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  parseEther,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type TestClient,
  type WalletClient,
} from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { freePort } from './net.ts';

const require = createRequire(import.meta.url);
/** anvil's own test mnemonic: its accounts hold 10,000 ETH each at start. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';
const READY_TIMEOUT_MS = 20_000;

/** The anvil binary of this platform's package (installed by npm ci with @foundry-rs/anvil). */
export function anvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return path.join(path.dirname(require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)), 'bin', 'anvil');
}

export interface Anvil {
  rpcUrl: string;
  chainId: number;
  public: PublicClient;
  test: TestClient;
  /** Customers: anvil's funded accounts. */
  payers: HDAccount[];
  mine(blocks?: number): Promise<void>;
  height(): Promise<number>;
  /** Sends `eth` (a decimal string) from payer `from` (index) to `to`; answers the hash (mined at the next mine()). */
  pay(to: Address, eth: string, from?: number): Promise<Hex>;
  /** Calls `fn` of `contract` from payer `from`; answers the hash. */
  call(contract: Address, abi: Abi, fn: string, args: unknown[], from?: number, options?: { nonce?: number; gas?: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint }): Promise<Hex>;
  /** Deploys a TestToken with `decimals`, mints `supply` base units to every payer; mined. */
  deployToken(decimals?: number, supply?: bigint): Promise<Address>;
  stop(): Promise<void>;
}

let compiled: { abi: Abi; bytecode: Hex } | null = null;

/** TestToken.sol compiled once per process by solc-js (offline: the compiler is the npm package). */
export function testToken(): { abi: Abi; bytecode: Hex } {
  if (compiled) return compiled;
  const solc = require('solc') as { compile(input: string): string };
  const source = fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'evm', 'TestToken.sol'), 'utf8');
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'TestToken.sol': { content: source } },
        settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'paris', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
      }),
    ),
  ) as { errors?: { severity: string; formattedMessage: string }[]; contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>> };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(`TestToken.sol does not compile: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const contract = output.contracts['TestToken.sol']!['TestToken']!;
  compiled = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
  return compiled;
}

export async function startAnvil(options: { binary?: string; accounts?: number } = {}): Promise<Anvil> {
  const port = await freePort();
  const accounts = options.accounts ?? 4;
  const args = ['--host', '127.0.0.1', '--port', String(port), '--no-mining', '--accounts', String(accounts), '--mnemonic', ANVIL_MNEMONIC, '--silent'];
  const child = spawn(options.binary ?? anvilBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const rpcUrl = `http://127.0.0.1:${port}`;
  const transport = http(rpcUrl, { timeout: 30_000, retryCount: 0 });
  const publicClient = createPublicClient({ chain: foundry, transport, pollingInterval: 50 }) as PublicClient;
  const test = createTestClient({ chain: foundry, mode: 'anvil', transport }) as unknown as TestClient;
  const payers = Array.from({ length: accounts }, (_, i) => mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: i }));
  const wallets: WalletClient[] = payers.map((account) => createWalletClient({ account, chain: foundry, transport }));

  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`anvil exited (${child.exitCode}) during start-up: ${stderr}`);
    try {
      await publicClient.getChainId();
      break;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`anvil not ready after ${READY_TIMEOUT_MS} ms: ${(e as Error).message} ${stderr}`);
      await sleep(50);
    }
  }

  const mine = async (blocks = 1) => test.mine({ blocks });
  const anvil: Anvil = {
    rpcUrl,
    chainId: foundry.id,
    public: publicClient,
    test,
    payers,
    mine,
    height: async () => Number(await publicClient.getBlockNumber({ cacheTime: 0 })),
    pay: (to, eth, from = 0) => wallets[from]!.sendTransaction({ account: payers[from]!, chain: foundry, to, value: parseEther(eth) }),
    call: (contract, abi, fn, args, from = 0, options = {}) =>
      wallets[from]!.writeContract({ account: payers[from]!, chain: foundry, address: contract, abi, functionName: fn, args, ...options }),
    async deployToken(decimals = 6, supply = 1_000_000_000_000n) {
      const { abi, bytecode } = testToken();
      const hash = await wallets[0]!.deployContract({ account: payers[0]!, chain: foundry, abi, bytecode, args: ['Test Dollar', 'TUSD', decimals] });
      await mine(1);
      const receipt = await publicClient.getTransactionReceipt({ hash });
      const token = receipt.contractAddress!;
      for (let i = 0; i < payers.length; i++) await anvil.call(token, abi, 'mint', [payers[i]!.address, supply]);
      await mine(1);
      return token;
    },
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const stopped = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
        if (!stopped) {
          child.kill('SIGKILL');
          await exited;
        }
      }
    },
  };
  return anvil;
}
