// One process at a time in an embedded database directory: PGlite has no lock of its own, and two processes
// writing one data directory destroy it. A lock file in the directory names its holder; the lock of a process
// that is gone (kill -9, power loss) is taken over, by exactly one of the processes that try at once.
//
// A lock is never deleted to be taken over (two openers that both saw the dead holder would both delete and both
// go on). Each holder creates the next generation, `payrail.lock.<n+1>`, complete: written to a private temporary
// file, then hard-linked into place, which fails with EEXIST when the name is taken, so the file appears with all
// its content or not at all. Of the openers that saw generation n abandoned, one gets n+1; the others find it held
// and refuse. The winner then checks that no higher generation appeared (an opener working from an old listing
// may have linked a number a newer holder had already cleaned up: the lower one yields) and removes the older
// ones. Numbers only grow: release() does not delete the holder's file but atomically replaces its content with
// a `released` mark.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface LockOwner {
  pid: number;
  /** What holds it: `server`, `merchant CLI`, ... */
  role: string;
  since: string;
  /** Tells this holder's file from a later one's. */
  nonce?: string;
  /** Closed cleanly: the directory is free and was not abandoned. */
  released?: boolean;
}

export class DatabaseInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly owner: LockOwner,
  ) {
    super(`The embedded database ${dir} is in use by process ${owner.pid} (${owner.role}, since ${owner.since}); only one process may open it`);
    this.name = 'DatabaseInUseError';
  }
}

const PREFIX = 'payrail.lock.';
const TEMPORARY = /^\.payrail\.lock\.tmp-(\d+)-/;

/** Directories this process holds: a second open from the same process is refused, not taken for abandoned. */
const heldHere = new Set<string>();

function alive(pid: number): boolean {
  // Our own pid on a lock this process does not hold: left by an earlier process that had the same pid (a
  // container's pid 1 after a restart).
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(file: string): LockOwner | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as LockOwner;
  } catch {
    return null;
  }
}

function generations(dir: string): number[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(PREFIX) && /^\d+$/.test(n.slice(PREFIX.length)))
    .map((n) => Number(n.slice(PREFIX.length)))
    .sort((a, b) => a - b);
}

const generationFile = (dir: string, n: number) => path.join(dir, `${PREFIX}${n}`);

/** The newest lock record of a directory as written (held, released or abandoned), or null when it has none. */
export function currentLock(dir: string): LockOwner | null {
  const top = generations(dir).at(-1);
  return top === undefined ? null : readOwner(generationFile(dir, top));
}

export interface HeldLock {
  release(): void;
  /** The holder of a lock left behind by a process that is gone: the database was not closed cleanly. */
  abandonedBy: LockOwner | null;
}

/** Takes the directory for this process; throws DatabaseInUseError while another live process holds it. */
export function acquireLock(directory: string, role: string): HeldLock {
  const dir = path.resolve(directory);
  fs.mkdirSync(dir, { recursive: true });
  if (heldHere.has(dir)) throw new DatabaseInUseError(dir, currentLock(dir) ?? { pid: process.pid, role: 'this process', since: '' });
  const me: LockOwner = { pid: process.pid, role, since: new Date().toISOString(), nonce: randomBytes(8).toString('hex') };
  const temporary = path.join(dir, `.payrail.lock.tmp-${process.pid}-${me.nonce}`);
  fs.writeFileSync(temporary, JSON.stringify(me), { mode: 0o600 });
  try {
    let abandonedBy: LockOwner | null = null;
    for (let attempt = 0; attempt < 50; attempt++) {
      const existing = generations(dir);
      const top = existing.at(-1) ?? 0;
      if (top > 0) {
        const owner = readOwner(generationFile(dir, top));
        // Generations are linked complete, so an unreadable one was damaged (disk full, an edit): abandoned.
        if (owner && !owner.released && alive(owner.pid)) throw new DatabaseInUseError(dir, owner);
        if (!owner?.released) abandonedBy = owner ?? { pid: 0, role: 'unknown (unreadable lock)', since: '' };
      }
      const mine = top + 1;
      try {
        fs.linkSync(temporary, generationFile(dir, mine));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue; // another opener took it: look again
        throw e;
      }
      if (generations(dir).some((n) => n > mine)) {
        fs.rmSync(generationFile(dir, mine), { force: true });
        continue;
      }
      heldHere.add(dir);
      for (const n of existing) fs.rmSync(generationFile(dir, n), { force: true });
      removeStaleTemporaries(dir);
      return { abandonedBy, release: releaser(dir, mine, me, temporary) };
    }
    throw new Error(`could not take the lock of ${dir}: too many processes trying at once`);
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/** Marks the holder's generation released, in one atomic replace (the file is never missing nor half written). */
function releaser(dir: string, generation: number, me: LockOwner, temporary: string): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    heldHere.delete(dir);
    const file = generationFile(dir, generation);
    if (readOwner(file)?.nonce !== me.nonce) return;
    const next = `${temporary}.released`;
    fs.writeFileSync(next, JSON.stringify({ ...me, released: true }), { mode: 0o600 });
    fs.renameSync(next, file);
  };
}

/** Temporary files of processes that died between writing and linking them. */
function removeStaleTemporaries(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    const pid = Number(TEMPORARY.exec(name)?.[1] ?? NaN);
    if (Number.isInteger(pid) && pid !== process.pid && !alive(pid)) fs.rmSync(path.join(dir, name), { force: true });
  }
}
