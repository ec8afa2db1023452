// Weir roles as real child processes (end-to-end tier): started from the TypeScript
// sources with tsx, their JSON log lines collected for assertions.
import { spawn, type ChildProcess } from 'node:child_process';
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
          reject(new Error(`timed out waiting for a log line; last lines: ${JSON.stringify(lines.slice(-5))}; stderr: ${stderr.join('').slice(-2000)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}
