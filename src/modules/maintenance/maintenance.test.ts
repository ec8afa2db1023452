import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createPrincipal } from '../../../test/support/identity.js';
import { MAINTENANCE_QUEUE } from './jobs.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const handler = (name: string) => {
  const reg = t.container.jobs.find((j) => j.queue === MAINTENANCE_QUEUE);
  const h = reg?.handlers[name];
  if (!h) throw new Error(`no handler ${name}`);
  return () =>
    h(
      { id: 'x', queue: MAINTENANCE_QUEUE, name, payload: {}, attempt: 1, maxAttempts: 1 },
      new AbortController().signal,
    );
};

describe('maintenance jobs', () => {
  it('prune expired sessions and the heartbeats of dead processes, and keep live ones', async () => {
    const db = t.container.database.db;
    const u = await createPrincipal(t, { role: 'viewer' });
    await db
      .insertInto('sessions')
      .values([
        { id_hash: 'expired', user_id: u.id, expires_at: new Date(Date.now() - 1000) },
        { id_hash: 'live', user_id: u.id, expires_at: new Date(Date.now() + 3_600_000) },
      ])
      .execute();
    const old = new Date(Date.now() - 2 * 3_600_000);
    await db
      .insertInto('process_heartbeats')
      .values([
        {
          id: 'dead',
          role: 'worker',
          hostname: 'h',
          pid: 1,
          started_at: old,
          last_seen_at: old,
          queue_backend: 'database',
        },
        {
          id: 'alive',
          role: 'worker',
          hostname: 'h',
          pid: 2,
          started_at: new Date(),
          last_seen_at: new Date(),
          queue_backend: 'database',
        },
      ])
      .execute();
    await handler('sessions.prune')();
    await handler('processes.prune')();
    expect((await db.selectFrom('sessions').select('id_hash').execute()).map((r) => r.id_hash)).toEqual(['live']);
    expect((await db.selectFrom('process_heartbeats').select('id').execute()).map((r) => r.id)).toEqual(['alive']);
  });

  it('beat enqueues one job per task and hour, however often it runs', async () => {
    const now = new Date('2026-11-21T10:15:00Z');
    const tasks = t.container.beatTasks.filter((x) =>
      ['processes.prune', 'sessions.prune', 'queue.prune'].includes(x.name),
    );
    expect(tasks).toHaveLength(3);
    for (const task of tasks) {
      await task.run(now);
      await task.run(new Date(now.getTime() + 60_000));
    }
    const counts = await t.container.queue.counts(MAINTENANCE_QUEUE);
    expect(counts.waiting + counts.delayed).toBe(3);
  });
});
