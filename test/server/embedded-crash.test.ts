// The embedded database survives kill -9 at any moment: the real server (src/bin/server.ts) on PGlite in a DATA_DIR
// under sustained writes (invoices created, filled and paid, so the ledger moves), killed with SIGKILL at a random
// moment (every other round during a graceful shutdown), then restarted: the directory opens, the server says the
// previous process did not close it and verifies the ledger, and every acknowledged invoice is there with what was
// acknowledged. Half the writers work in live mode (ethereum on an anvil node: live invoices filled with addresses
// derived from the xpub), and every invoice is found in the mode that acknowledged it. CRASH_ROUNDS sets the rounds
// (default 2: a kill, and a kill during a shutdown; the closing figures come from 20).
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.ts';
import { currentLock } from '../../src/db/pglite-lock.ts';
import { verifyLedger } from '../../src/features.ts';
import { startAnvil, type Anvil } from '../support/anvil-node.ts';
import { ANVIL } from '../support/anvil.ts';
import { chainsEnv, testXpub } from '../support/chains.ts';
import { copyPgliteTemplate } from '../support/databases.ts';
import { killServer, launch, runCli, sleep, startServerProcess, stopAllChildren, tempDir, waitForExit, type ServerProcess } from '../support/processes.ts';

const ROUNDS = Number(process.env['CRASH_ROUNDS'] ?? 2);
const WRITERS = 6;

afterAll(() => stopAllChildren());

interface Acknowledged {
  id: string;
  mode: 'test' | 'live';
  /** The last status a response confirmed. */
  status: 'created' | 'pending' | 'done';
}

/**
 * Writers loop until stopped: create, fill, and in test mode pay (final at once); a live writer's invoices wait for
 * a payment on chain. Every answered step is recorded.
 */
function load(server: ServerProcess, tokens: { test: string; live: string | null }, acknowledged: Map<string, Acknowledged>) {
  let running = true;
  const writer = async (n: number) => {
    const mode = n % 2 === 1 && tokens.live ? 'live' : 'test';
    const token = tokens[mode]!;
    while (running) {
      try {
        const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 10 }] } });
        if (created.status !== 201) continue;
        const id = created.body.id as string;
        acknowledged.set(id, { id, mode, status: 'created' });
        const filled = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'c@example.com', paymentCurrency: mode === 'live' ? 'eth' : 'trc20usdt' } });
        if (filled.status !== 200) continue;
        acknowledged.set(id, { id, mode, status: 'pending' });
        if (mode === 'live') continue;
        const paid = await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: id, amount: '10.1', confirmations: 19, txHash: randomBytes(16).toString('hex') } });
        if (paid.status === 201) acknowledged.set(id, { id, mode, status: 'done' });
      } catch {
        // The server died mid-request: that step was not acknowledged.
        return;
      }
    }
  };
  const writers = Array.from({ length: WRITERS }, (_, n) => writer(n));
  return async () => {
    running = false;
    await Promise.all(writers);
  };
}

describe('the embedded database under kill -9', { timeout: 60_000 + ROUNDS * 30_000 }, () => {
  // Live mode's chain: anvil where npm has it for this machine (else the writers all work in test mode).
  let node: Anvil | null = null;
  beforeAll(async () => {
    if (ANVIL) node = await startAnvil();
  });
  afterAll(async () => node?.stop());

  it(`${ROUNDS} rounds of kill -9 during sustained writes: it reopens, ledger:verify passes, nothing acknowledged is lost`, async () => {
    const dataDir = tempDir('payrail-embedded-crash-');
    copyPgliteTemplate(path.join(dataDir, 'pglite'));
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      SHUTDOWN_TIMEOUT_MS: '5000',
      ...(node ? chainsEnv({ ethereum: { rpcUrl: node.rpcUrl, chainId: node.chainId, xpub: testXpub('ethereum', false), pollMs: 1_000 } }) : {}),
    };
    const acknowledged = new Map<string, Acknowledged>();
    let tokens: { test: string; live: string | null } | null = null;
    let accountId = '';
    /** Whether the previous process died without closing the database (a SIGTERM may have won the race). */
    let unclean = false;
    const kills: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const server = await startServerProcess(env);
      if (!tokens) {
        tokens = { test: server.demo!.test.publicToken, live: node ? server.demo!.live.publicToken : null };
        accountId = server.demo!.companyId;
      }
      if (unclean) {
        // It says the previous process did not close the database, and checks the ledger on its own.
        const checked = (out: string) => /ledger verified after the unclean shutdown|ledger does not hold|could not verify the ledger/.test(out);
        await server.proc.waitForStdout(checked, 'the ledger check after recovery', 20_000);
        expect(server.proc.stdout).toContain('the embedded database was not closed by its previous process');
        expect(server.proc.stdout, 'the ledger check after recovery').toContain('ledger verified after the unclean shutdown');
      }
      const paidBefore = [...acknowledged.values()].filter((a) => a.status === 'done').length;
      const stop = load(server, tokens, acknowledged);
      // Kill once writes are flowing (some invoice paid in this round), at a random moment after that.
      const flowing = Date.now() + 30_000;
      while ([...acknowledged.values()].filter((a) => a.status === 'done').length === paidBefore && Date.now() < flowing) await sleep(20);
      await sleep(Math.random() * 800);
      if (round % 2 === 1) {
        // During a graceful shutdown: SIGTERM, then SIGKILL a moment later.
        server.proc.child.kill('SIGTERM');
        await sleep(Math.random() * 60);
      }
      server.proc.child.kill('SIGKILL');
      const exit = await waitForExit(server.proc);
      // Unclean unless the SIGTERM's shutdown had closed the database (and dropped its lock) before the kill.
      const lock = currentLock(path.join(dataDir, 'pglite'));
      unclean = exit.signal === 'SIGKILL' && lock !== null && !lock.released;
      await stop();
      kills.push(`${round % 2 === 1 ? 'term+kill' : 'kill'}${unclean ? '' : ' (closed first)'}`);
    }
    // The next opener after the last kill is the CLI: it opens the directory itself, says it was not closed,
    // and checks the ledger and statuses.
    const verify = await runCli('src/bin/ledger-verify.ts', [], env);
    expect(verify.code, `${verify.stdout}\n${verify.stderr}`).toBe(0);
    expect(verify.json.problems).toEqual([]);
    if (unclean) expect(verify.stderr).toMatch(/was not closed by its previous process/);

    const db = await openDatabase({ url: `pglite:${path.join(dataDir, 'pglite')}`, poolSize: 1, role: 'test' });
    try {
      const rows = await db.prisma.invoice.findMany({ where: { id: { in: [...acknowledged.keys()] } }, select: { id: true, status: true, companyId: true } });
      const stored = new Map(rows.map((r) => [r.id, r.status]));
      const modeOf = new Map((await db.prisma.company.findMany({ where: { accountId } })).map((c) => [c.id, c.mode]));
      const storedMode = new Map(rows.map((r) => [r.id, modeOf.get(r.companyId)]));
      const rank = { created: 0, pending: 1, processing: 2, done: 3 } as Record<string, number>;
      for (const a of acknowledged.values()) {
        expect(stored.has(a.id), `acknowledged invoice ${a.id}`).toBe(true);
        expect(rank[stored.get(a.id)!]!, `${a.id} was acknowledged ${a.status}`).toBeGreaterThanOrEqual(rank[a.status]!);
        expect(storedMode.get(a.id), `${a.id} was acknowledged in ${a.mode} mode`).toBe(a.mode);
      }
      if (node) expect([...acknowledged.values()].filter((a) => a.mode === 'live' && a.status === 'pending').length, 'live invoices filled').toBeGreaterThan(0);
      expect((await verifyLedger(db.prisma)).problems).toEqual([]);
      const done = [...acknowledged.values()].filter((a) => a.status === 'done').length;
      const live = [...acknowledged.values()].filter((a) => a.mode === 'live').length;
      console.info(`[embedded crash] ${ROUNDS} rounds (${kills.join(', ')}): ${acknowledged.size} invoices acknowledged (${live} live), ${done} paid; all present in their modes, ledger verified each round`);
      expect(done).toBeGreaterThan(ROUNDS);
    } finally {
      await db.close();
    }
  });

  it('a damaged data directory stops the start with what to do, and no other process may open a held one', async () => {
    const dataDir = tempDir('payrail-embedded-damaged-');
    const dir = copyPgliteTemplate(path.join(dataDir, 'pglite'));
    const server = await startServerProcess({ DATA_DIR: dataDir });
    // A second server on the same directory is refused while the first runs (two writers destroy it).
    const second = launch('src/bin/server.ts', [], { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    expect((await waitForExit(second)).code).toBe(1);
    expect(second.stdout + second.stderr).toMatch(new RegExp(`in use by process ${server.proc.child.pid} \\(server`));
    await killServer(server);
    // The write-ahead log is gone: PGlite cannot find a checkpoint.
    for (const f of fs.readdirSync(path.join(dir, 'pg_wal'))) if (/^[0-9A-F]{24}$/.test(f)) fs.rmSync(path.join(dir, 'pg_wal', f));
    const damaged = launch('src/bin/server.ts', [], { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    expect((await waitForExit(damaged)).code).toBe(1);
    expect(damaged.stdout).toMatch(/could not be opened .*it is damaged.*restore the directory from a backup/);
  });
});
