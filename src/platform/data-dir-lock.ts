// One process per embedded data directory. PGlite opens its files without a lock of its
// own, so a second `weir all` (or `weir migrate`) on a running one's WEIR_DATA_DIR would
// write the same database from two processes. The lock is a file created with an atomic
// link() (it exists complete or not at all) naming its holder; a holder that died on this
// host is taken over at once (a restart after a crash needs no cleanup), a live one
// refuses the start with a message naming it. Why not proper-lockfile: docs/decisions/0025.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

export const LOCK_FILE = 'weir.lock';

export interface LockHolder {
  pid: number;
  host: string;
  /** ISO 8601. */
  started_at: string;
  /** How the holder was started (its argv), for the operator reading the refusal. */
  command: string;
  /** Linux: the boot this lock was taken in; a lock from an earlier boot is stale. */
  boot_id?: string;
  /** Linux: the holder's start time in clock ticks since boot, which tells a reused pid apart. */
  start_ticks?: number;
}

export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly file: string,
    readonly holder: LockHolder | undefined,
  ) {
    super(
      holder
        ? `the data directory ${dir} is in use by process ${holder.pid} on ${holder.host} (started ${holder.started_at}: ${holder.command}). ` +
            `The embedded mode runs one process per data directory: stop that process first, or run the roles on PostgreSQL and Redis` +
            (holder.host === hostname() ? '' : `. If that process is gone, delete ${file}`)
        : `the data directory ${dir} has a lock file that cannot be read (${file}); if no Weir process uses the directory, delete it`,
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  readonly file: string;
  /** The dead holder whose lock this one replaced, if any (worth a warning). */
  readonly tookOverFrom: LockHolder | undefined;
  /** Removes the lock file if it is still ours; idempotent. Also runs at process exit. */
  release(): void;
}

const held = new Set<string>();

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockHolder>;
    if (
      !Number.isInteger(v.pid) ||
      typeof v.host !== 'string' ||
      typeof v.started_at !== 'string' ||
      typeof v.command !== 'string'
    )
      return undefined;
    return v as LockHolder;
  } catch {
    return undefined;
  }
}

function bootId(): string | undefined {
  return readText('/proc/sys/kernel/random/boot_id')?.trim() || undefined;
}

/** Field 22 of /proc/<pid>/stat (after the parenthesized command, which may hold spaces). */
export function startTicks(pid: number): number | undefined {
  let stat: string | undefined;
  try {
    stat = readText(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
  if (!stat) return undefined;
  const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  return Number.isFinite(ticks) ? ticks : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the holder is certainly gone. A holder on another host cannot be checked: never stale. */
function stale(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return false;
  const boot = bootId();
  if (holder.boot_id && boot && holder.boot_id !== boot) return true;
  // Our own pid in a lock we do not hold: an earlier life of this container (pids repeat there).
  if (holder.pid === process.pid) return true;
  if (!alive(holder.pid)) return true;
  const ticks = holder.start_ticks === undefined ? undefined : startTicks(holder.pid);
  return ticks !== undefined && ticks !== holder.start_ticks;
}

/**
 * Moves a stale lock out of the way, unless it changed since it was read: a process that
 * took it over meanwhile keeps its fresh lock (it is put back if we moved it).
 */
function takeOver(file: string, staleText: string): void {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (readText(aside) !== staleText) {
    try {
      linkSync(aside, file);
    } catch {
      // Yet another process holds the name now; the next round reads it.
    }
  }
  unlinkSync(aside);
}

/** Takes the data directory's lock, or throws DataDirLockedError naming the live holder. */
export function lockDataDir(dir: string, options: { command?: string } = {}): DataDirLock {
  const root = path.resolve(dir);
  mkdirSync(root, { recursive: true });
  const file = path.join(root, LOCK_FILE);
  if (held.has(file)) throw new DataDirLockedError(root, file, parseHolder(readText(file) ?? ''));
  const boot = bootId();
  const ticks = startTicks(process.pid);
  const me: LockHolder = {
    pid: process.pid,
    host: hostname(),
    started_at: new Date().toISOString(),
    command: (options.command ?? process.argv.slice(1).join(' ')).slice(0, 300),
    ...(boot ? { boot_id: boot } : {}),
    ...(ticks !== undefined ? { start_ticks: ticks } : {}),
  };
  const text = `${JSON.stringify(me)}\n`;
  const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, text, { mode: 0o644 });
  let tookOverFrom: LockHolder | undefined;
  let locked = false;
  try {
    // A few rounds: each either takes the lock, refuses, or removes a dead holder's lock.
    for (let round = 0; round < 5 && !locked; round++) {
      try {
        linkSync(tmp, file);
        locked = true;
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const current = readText(file);
      if (current === undefined) continue;
      const holder = parseHolder(current);
      if (!holder || !stale(holder)) throw new DataDirLockedError(root, file, holder);
      takeOver(file, current);
      tookOverFrom = holder;
    }
  } finally {
    unlinkSync(tmp);
  }
  if (!locked) throw new DataDirLockedError(root, file, parseHolder(readText(file) ?? ''));
  held.add(file);
  const release = () => {
    if (!held.delete(file)) return;
    process.off('exit', release);
    try {
      if (readText(file) === text) unlinkSync(file);
    } catch {
      // Left behind, it is stale: the next start takes it over.
    }
  };
  process.on('exit', release);
  return { file, tookOverFrom, release };
}
