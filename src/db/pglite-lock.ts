// One process at a time in an embedded database directory: PGlite has no lock of its own, and two processes
// writing one data directory destroy it. A lock file inside the directory names the owner; a lock whose
// process is gone (kill -9, power loss) is taken over.
import fs from 'node:fs';
import path from 'node:path';

export interface LockOwner {
  pid: number;
  /** What holds it: `server`, `merchant CLI`, ... */
  role: string;
  since: string;
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

export const lockFile = (dir: string) => path.join(dir, 'payrail.lock');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live owner of the directory's lock, or null. */
export function lockOwner(dir: string): LockOwner | null {
  const owner = readOwner(lockFile(dir));
  return owner && typeof owner.pid === 'number' && alive(owner.pid) ? owner : null;
}

export interface HeldLock {
  release(): void;
  /** The owner of a lock left behind by a process that is gone: the database was not closed cleanly. */
  abandonedBy: LockOwner | null;
}

/** Takes the directory for this process; throws DatabaseInUseError while another live process holds it. */
export function acquireLock(dir: string, role: string): HeldLock {
  fs.mkdirSync(dir, { recursive: true });
  const file = lockFile(dir);
  const me: LockOwner = { pid: process.pid, role, since: new Date().toISOString() };
  let abandonedBy: LockOwner | null = null;
  for (let attempt = 0; ; attempt++) {
    try {
      // `wx`: created only if absent, atomically, so of two starting processes one wins.
      fs.writeFileSync(file, JSON.stringify(me), { flag: 'wx', mode: 0o600 });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw e;
      const owner = lockOwner(dir);
      if (owner) throw new DatabaseInUseError(dir, owner);
      // Left by a process that is gone: take it over.
      abandonedBy = readOwner(file);
      fs.rmSync(file, { force: true });
    }
  }
  return {
    abandonedBy,
    release() {
      if (readOwner(file)?.pid === process.pid) fs.rmSync(file, { force: true });
    },
  };
}

function readOwner(file: string): LockOwner | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as LockOwner;
  } catch {
    return null;
  }
}
