// The data directory lock against lock files as other processes leave them: live, dead,
// reused pid, other host, unreadable. (Two real `weir` processes: test/e2e/data-dir.test.ts.)
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, LOCK_FILE, lockDataDir, startTicks, type LockHolder } from './data-dir-lock.js';

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'weir-lock-'));
  dirs.push(d);
  return d;
}

function holder(pid: number, extra: Partial<LockHolder> = {}): LockHolder {
  return {
    pid,
    host: hostname(),
    started_at: '2030-01-02T03:04:05.000Z',
    command: 'weir all (src/main.ts all)',
    ...extra,
  };
}

function plant(d: string, h: LockHolder | string): void {
  writeFileSync(path.join(d, LOCK_FILE), typeof h === 'string' ? h : JSON.stringify(h));
}

/** A process that is alive for the test's duration. */
function liveProcess(): number {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(child);
  return child.pid!;
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

function refusal(fn: () => unknown): DataDirLockedError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DataDirLockedError);
    return err as DataDirLockedError;
  }
  throw new Error('the lock was granted');
}

describe('lockDataDir', () => {
  it('writes a lock naming this process, refuses a second holder, and removes it on release', () => {
    const d = dir();
    const lock = lockDataDir(d, { command: 'weir all' });
    const written = JSON.parse(readFileSync(lock.file, 'utf8')) as LockHolder;
    expect(written).toMatchObject({ pid: process.pid, host: hostname(), command: 'weir all' });
    expect(Date.parse(written.started_at)).not.toBeNaN();
    expect(lock.tookOverFrom).toBeUndefined();
    expect(refusal(() => lockDataDir(d)).holder?.pid).toBe(process.pid);
    lock.release();
    expect(existsSync(lock.file)).toBe(false);
    lockDataDir(d).release();
  });

  it('refuses while a live process holds the directory, naming its pid, start and command', () => {
    const d = dir();
    const pid = liveProcess();
    plant(d, holder(pid, { start_ticks: startTicks(pid) }));
    const err = refusal(() => lockDataDir(d));
    expect(err.message).toContain(`process ${pid} on ${hostname()}`);
    expect(err.message).toContain('started 2030-01-02T03:04:05.000Z: weir all (src/main.ts all)');
    expect(JSON.parse(readFileSync(path.join(d, LOCK_FILE), 'utf8'))).toMatchObject({ pid });
  });

  it('takes over the lock of a process that is gone', async () => {
    const d = dir();
    const pid = await deadPid();
    plant(d, holder(pid));
    const lock = lockDataDir(d);
    expect(lock.tookOverFrom?.pid).toBe(pid);
    expect(JSON.parse(readFileSync(lock.file, 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it.runIf(process.platform === 'linux')(
    'takes over a lock whose pid now belongs to another process (start time differs)',
    () => {
      const d = dir();
      const pid = liveProcess();
      plant(d, holder(pid, { start_ticks: (startTicks(pid) ?? 0) + 1 }));
      const lock = lockDataDir(d);
      expect(lock.tookOverFrom?.pid).toBe(pid);
      lock.release();
    },
  );

  it.runIf(process.platform === 'linux')('takes over a lock from before the last boot', () => {
    const d = dir();
    plant(d, holder(liveProcess(), { boot_id: 'an-earlier-boot' }));
    lockDataDir(d).release();
  });

  it('takes over a lock with its own pid that it does not hold (an earlier life of a container)', () => {
    const d = dir();
    plant(d, holder(process.pid));
    const lock = lockDataDir(d);
    expect(lock.tookOverFrom?.pid).toBe(process.pid);
    lock.release();
  });

  it('never takes over a lock from another host, and says how to remove it', async () => {
    const d = dir();
    plant(d, holder(await deadPid(), { host: 'another-host' }));
    const err = refusal(() => lockDataDir(d));
    expect(err.message).toContain('on another-host');
    expect(err.message).toContain(`If that process is gone, delete ${path.join(d, LOCK_FILE)}`);
  });

  it('refuses an unreadable lock file instead of guessing', () => {
    const d = dir();
    plant(d, '{"pid": ');
    expect(refusal(() => lockDataDir(d)).message).toContain('cannot be read');
  });

  it('release leaves a lock that is no longer its own', () => {
    const d = dir();
    const lock = lockDataDir(d);
    const other = holder(liveProcess());
    plant(d, other);
    lock.release();
    expect(JSON.parse(readFileSync(lock.file, 'utf8'))).toMatchObject({ pid: other.pid });
  });
});
