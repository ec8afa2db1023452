// The database queue when the database is the process's alone (embedded PGlite: `exclusive`):
// an idle consumer does not poll, yet every job runs when it is due: at once when enqueued,
// after its delay, after a retry's backoff, on its repeat schedule, and after a sweep gave
// back a job whose consumer died. Idle, a consumer sleeps until woken.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, statementCounter, type TestDatabase } from '../../../test/support/db.js';
import { DatabaseQueue } from './database.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let t: TestDatabase;
let queue: DatabaseQueue;
/** Counts every statement the queue sends. */
const statements = statementCounter();

beforeAll(async () => {
  t = await createTestDatabase();
  queue = new DatabaseQueue({ db: t.database.db.withPlugin(statements.plugin), leaseMs: 30_000, exclusive: true });
});
afterAll(async () => {
  await queue?.close();
  await t?.close();
});

async function until(check: () => boolean, ms: number): Promise<number> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await sleep(10);
  }
  return Date.now() - start;
}

describe('the database queue, exclusive', () => {
  it('sends next to no statement while idle', async () => {
    const consumers = ['a', 'b', 'c'].map((q) => queue.consume(`idle-${q}`, async () => undefined));
    await sleep(300);
    statements.reset();
    await sleep(2_000);
    // Three consumers polling every 200 ms would send ~60 claims and as many due-time reads.
    expect(statements.count()).toBeLessThanOrEqual(3);
    await Promise.all(consumers.map((c) => c.close()));
  });

  it('runs an enqueued job at once, a delayed one when due, a retry after its backoff', async () => {
    const seen: { name: string; attempt: number; at: number }[] = [];
    const consumer = queue.consume('work', async (job) => {
      seen.push({ name: job.name, attempt: job.attempt, at: Date.now() });
      if (job.name === 'flaky' && job.attempt === 1) throw new Error('first attempt fails');
    });
    await sleep(200); // idle: the consumer sleeps its long sleep now
    const t0 = Date.now();
    await queue.enqueue('work', 'now', {});
    await until(() => seen.some((s) => s.name === 'now'), 1_000);
    await queue.enqueue('work', 'later', {}, { delayMs: 600 });
    await queue.enqueue('work', 'flaky', {}, { attempts: 2, backoffMs: 400 });
    await until(
      () => seen.some((s) => s.name === 'later') && seen.some((s) => s.name === 'flaky' && s.attempt === 2),
      3_000,
    );
    const later = seen.find((s) => s.name === 'later')!;
    expect(later.at - t0).toBeGreaterThanOrEqual(550);
    const [first, second] = seen.filter((s) => s.name === 'flaky');
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(350);
    await consumer.close();
  });

  it('runs a repeating job on its schedule', async () => {
    let runs = 0;
    const consumer = queue.consume('tick', async () => void (runs += 1));
    await queue.repeat('tick', 'every-300', 'tick', {}, { everyMs: 300 });
    await until(() => runs >= 3, 3_000);
    await queue.removeRepeat('tick', 'every-300');
    await consumer.close();
  });
});
