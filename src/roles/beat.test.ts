import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createLock } from '../platform/lock/index.js';
import type { LockPort } from '../platform/lock/port.js';
import { startBeat, type Beat } from './beat.js';

const logger = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(20);
  }
}

describe('beat election (in-process lock)', () => {
  const started: Beat[] = [];
  let lock: LockPort;
  afterEach(async () => {
    await Promise.all(started.splice(0).map((b) => b.stop()));
    await lock?.close();
  });

  it('lets exactly one beat lead and run tasks; a standby takes over after a clean stop', async () => {
    lock = createLock({ redisUrl: undefined, redisPrefix: 'beat-test' });
    const runs: string[] = [];
    const mk = (name: string) =>
      startBeat({
        lock,
        logger,
        ttlMs: 300,
        tickMs: 20,
        tasks: [{ name: 'count', everyMs: 100, run: async () => void runs.push(name) }],
      });
    const a = mk('a');
    started.push(a);
    await until(() => a.leading);
    const b = mk('b');
    started.push(b);
    await sleep(400);
    expect(a.leading).toBe(true);
    expect(b.leading).toBe(false);
    expect(runs.length).toBeGreaterThan(1);
    expect(new Set(runs)).toEqual(new Set(['a']));

    await a.stop();
    started.splice(started.indexOf(a), 1);
    await until(() => b.leading, 2000);
    const before = runs.length;
    await sleep(250);
    expect(runs.slice(before).every((r) => r === 'b')).toBe(true);
    expect(runs.length).toBeGreaterThan(before);
  });

  it('takes over after the leader stops renewing (a dead leader) once its lease expires', async () => {
    lock = createLock({ redisUrl: undefined, redisPrefix: 'beat-test-2' });
    // A leader that dies: holds the lease, then never renews nor releases.
    const dead = await lock.acquire('beat:leader', 300);
    expect(dead).not.toBeNull();
    const b = startBeat({ lock, logger, ttlMs: 300, tickMs: 20, tasks: [] });
    started.push(b);
    await sleep(100);
    expect(b.leading).toBe(false);
    await until(() => b.leading, 2000);
  });
});
