// Weir roles as real child processes (end-to-end tier): started from the TypeScript
// sources with tsx, their JSON log lines collected for assertions.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface WeirProcess {
  proc: ChildProcess;
  lines: Record<string, unknown>[];
  stderr: string[];
  /** Resolves with the first log line matching, or rejects after timeoutMs. */
  waitFor(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  kill(signal: NodeJS.Signals): void;
}

/** Starts `weir <role>`; `weir` alone when role is undefined. */
export function spawnWeir(role: string | undefined, env: Record<string, string | undefined>): WeirProcess {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...(role === undefined ? [] : [role])], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  const waiters = new Set<() => void>();
  let buffer = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let i;
    while ((i = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        stderr.push(line);
      }
    }
    for (const w of waiters) w();
  });
  proc.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const exited = new Promise<number | string>((resolve) => {
    proc.on('exit', (code, signal) => {
      resolve(code ?? signal ?? -1);
      for (const w of waiters) w();
    });
  });

  return {
    proc,
    lines,
    stderr,
    exited,
    kill: (signal) => proc.kill(signal),
    waitFor(match, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = lines.find(match);
          if (hit) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(hit);
          } else if (proc.exitCode !== null || proc.signalCode !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`process exited before the awaited line; stderr: ${stderr.join('').slice(-2000)}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `timed out waiting for a log line; last lines: ${JSON.stringify(lines.slice(-5))}; stderr: ${stderr.join('').slice(-2000)}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

/** The log line every role writes once it serves. */
export const weirStarted = (l: Record<string, unknown>) => l.msg === 'weir started';

export interface Fleet {
  /** Starts `weir <role>` with the fleet's common environment under `env`. */
  start(role: string, env: Record<string, string | undefined>): WeirProcess;
  /** Starts a role that serves HTTP on a free port and resolves with its address once it serves. */
  startApi(role: string, env: Record<string, string | undefined>): Promise<{ p: WeirProcess; url: string }>;
  /** A directory to remove at cleanup (a data directory, a sink root). */
  keepDir(dir: string): string;
  /** Something else to close at cleanup (a simulator, a receiver). */
  onCleanup(close: () => Promise<void>): void;
  /** SIGKILLs what still runs, waits for every exit, removes the directories, closes the rest. */
  cleanup(): Promise<void>;
}

/** The processes of one end-to-end file, with what they leave behind, all undone by cleanup(). */
export function createFleet(common: Record<string, string | undefined> = {}): Fleet {
  const running: WeirProcess[] = [];
  const dirs: string[] = [];
  const closers: (() => Promise<void>)[] = [];
  const start = (role: string, env: Record<string, string | undefined>) => {
    const p = spawnWeir(role, { ...common, ...env });
    running.push(p);
    return p;
  };
  return {
    start,
    async startApi(role, env) {
      const p = start(role, { ...env, PORT: '0', LOG_LEVEL: 'info' });
      const line = await p.waitFor(weirStarted, 90_000);
      return { p, url: String(line.address) };
    },
    keepDir(dir) {
      dirs.push(dir);
      return dir;
    },
    onCleanup(close) {
      closers.push(close);
    },
    async cleanup() {
      for (const p of running) if (p.proc.exitCode === null) p.kill('SIGKILL');
      await Promise.all(running.map((p) => p.exited));
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
      await Promise.all(closers.map((close) => close()));
    },
  };
}
