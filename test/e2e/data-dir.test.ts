// End-to-end: the embedded data directory belongs to one process. A second `weir all` or
// `weir migrate` on a running one's WEIR_DATA_DIR exits naming it; after the holder is
// killed, the next start takes the stale lock over. A bare `weir` only prints the usage.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROLES } from '../../src/config.js';
import { LOCK_FILE } from '../../src/platform/data-dir-lock.js';
import { spawnWeir, type WeirProcess } from '../support/process.js';

const distributed = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const started = (l: Record<string, unknown>) => l.msg === 'weir started';
const running: WeirProcess[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const p of running) if (p.proc.exitCode === null && p.proc.signalCode === null) p.kill('SIGKILL');
  await Promise.all(running.map((p) => p.exited));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function start(role: string | undefined, dataDir: string): WeirProcess {
  const p = spawnWeir(role, { WEIR_DATA_DIR: dataDir, PORT: '0' });
  running.push(p);
  return p;
}

describe('one process per embedded data directory', () => {
  it('`weir` without a role prints the roles and exits 2 without opening the data directory', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'weir-usage-'));
    dirs.push(root);
    const dataDir = path.join(root, 'data');
    const p = start(undefined, dataDir);
    expect(await p.exited).toBe(2);
    const stderr = p.stderr.join('');
    expect(stderr).toContain('usage: weir <role>');
    for (const role of ROLES) expect(stderr).toMatch(new RegExp(`^  ${role} +\\S`, 'm'));
    expect(p.lines).toEqual([]);
    expect(existsSync(dataDir)).toBe(false);
  }, 60_000);

  it.skipIf(distributed)(
    'refuses a second process naming the first, and takes over after the first is killed',
    async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-dir-'));
      dirs.push(dataDir);
      const first = start('all', dataDir);
      await first.waitFor(started, 90_000);
      const pid = first.proc.pid!;

      for (const role of ['all', 'migrate']) {
        const second = start(role, dataDir);
        expect(await second.exited).toBe(1);
        const stderr = second.stderr.join('');
        expect(stderr).toContain(`is in use by process ${pid}`);
        expect(stderr).toContain('weir all');
        expect(second.lines.some(started)).toBe(false);
      }
      // The refused processes left the holder's lock alone.
      expect(JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), 'utf8'))).toMatchObject({ pid });

      first.kill('SIGKILL');
      await first.exited;
      const third = start('all', dataDir);
      await third.waitFor(started, 90_000);
      const takeover = await third.waitFor(
        (l) => l.msg === 'took over the data directory lock of a process that is gone',
        5_000,
      );
      expect(takeover.previous).toMatchObject({ pid });
      third.kill('SIGTERM');
      expect(await third.exited).toBe(0);
      expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
    },
    240_000,
  );
});
