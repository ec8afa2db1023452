// The queue contract: one suite, run against every adapter (see test/support/queue-fixtures.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  bullmqFixture,
  databaseFixture,
  uniqueQueue,
  type QueueFixture,
} from '../../../test/support/queue-fixtures.js';
import { QueueOptionsError } from './errors.js';
import type { QueueAdapter } from './index.js';
import type { Job } from './port.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 8000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

const fixtures = [databaseFixture(), bullmqFixture()];

describe.each(fixtures)('queue contract: $title', (fx: QueueFixture) => {
  if (!fx.enabled) {
    it.skip('needs REDIS_URL', () => {});
    return;
  }
  let queue: QueueAdapter;
  const extra: { close(): Promise<void> }[] = [];

  beforeAll(() => fx.setup());
  afterAll(() => fx.teardown());
  beforeAll(() => {
    queue = fx.open();
  });
  afterAll(() => queue.close());
  afterEach(async () => {
    await Promise.all(extra.splice(0).map((c) => c.close()));
  });

  it('delivers the payload, name and attempt number', async () => {
    const q = uniqueQueue();
    const seen: Job<unknown>[] = [];
    const payload = { tenant: 't1', items: [1, 'two', { three: 3 }], empty: null };
    const id = await queue.enqueue(q, 'normalize', payload);
    extra.push(queue.consume(q, async (job) => void seen.push(job)));
    await waitFor(() => seen.length === 1, 8000, 'delivery');
    expect(seen[0]).toMatchObject({ id, queue: q, name: 'normalize', payload, attempt: 1, maxAttempts: 3 });
    await waitFor(async () => (await queue.counts(q)).completed === 1, 8000, 'completion');
  });

  it('runs up to `concurrency` jobs at once', async () => {
    const q = uniqueQueue();
    let running = 0;
    let peak = 0;
    let done = 0;
    for (let i = 0; i < 5; i++) await queue.enqueue(q, 'work', { i });
    extra.push(
      queue.consume(
        q,
        async () => {
          running += 1;
          peak = Math.max(peak, running);
          await sleep(150);
          running -= 1;
          done += 1;
        },
        { concurrency: 2 },
      ),
    );
    await waitFor(() => done === 5, 8000, 'five jobs');
    expect(peak).toBe(2);
  });

  it('retries with exponential backoff, then succeeds', async () => {
    const q = uniqueQueue();
    const starts: { attempt: number; at: number }[] = [];
    await queue.enqueue(q, 'flaky', {}, { attempts: 4, backoffMs: 60 });
    extra.push(
      queue.consume(q, async (job) => {
        starts.push({ attempt: job.attempt, at: Date.now() });
        if (job.attempt < 4) throw new Error(`attempt ${job.attempt} failed`);
      }),
    );
    await waitFor(async () => (await queue.counts(q)).completed === 1, 8000, 'success on attempt 4');
    expect(starts.map((s) => s.attempt)).toEqual([1, 2, 3, 4]);
    const gaps = starts.slice(1).map((s, i) => s.at - (starts[i]?.at ?? 0));
    // Backoff 60, 120, 240 ms: each gap at least its backoff (less a little clock slack),
    // the last clearly longer than the first; upper bounds only catch a stuck queue.
    expect(gaps[0]).toBeGreaterThanOrEqual(50);
    expect(gaps[1]).toBeGreaterThanOrEqual(110);
    expect(gaps[2]).toBeGreaterThanOrEqual(230);
    expect(gaps[2]).toBeGreaterThan(gaps[0] ?? 0);
    for (const gap of gaps) expect(gap).toBeLessThan(3000);
  });

  it('fails a job after its last attempt and keeps it as failed', async () => {
    const q = uniqueQueue();
    const attempts: number[] = [];
    await queue.enqueue(q, 'doomed', {}, { attempts: 2, backoffMs: 10 });
    extra.push(
      queue.consume(q, async (job) => {
        attempts.push(job.attempt);
        throw new Error('always');
      }),
    );
    await waitFor(async () => (await queue.counts(q)).failed === 1, 8000, 'failed');
    await sleep(200);
    expect(attempts).toEqual([1, 2]);
    expect(await queue.counts(q)).toMatchObject({ waiting: 0, active: 0, delayed: 0, failed: 1 });
  });

  it('does not run a delayed job before its delay', async () => {
    const q = uniqueQueue();
    const enqueuedAt = Date.now();
    let ranAt = 0;
    await queue.enqueue(q, 'later', {}, { delayMs: 500 });
    expect(await queue.counts(q)).toMatchObject({ delayed: 1, waiting: 0 });
    extra.push(
      queue.consume(q, async () => {
        ranAt = Date.now();
      }),
    );
    await waitFor(() => ranAt > 0, 8000, 'delayed run');
    expect(ranAt - enqueuedAt).toBeGreaterThanOrEqual(480);
  });

  it('ignores a second enqueue with the same jobId', async () => {
    const q = uniqueQueue();
    const payloads: unknown[] = [];
    expect(await queue.enqueue(q, 'once', { n: 1 }, { jobId: 'dedupe-a' })).toBe('dedupe-a');
    expect(await queue.enqueue(q, 'once', { n: 2 }, { jobId: 'dedupe-a' })).toBe('dedupe-a');
    expect((await queue.counts(q)).waiting).toBe(1);
    extra.push(queue.consume(q, async (job) => void payloads.push(job.payload)));
    await waitFor(async () => (await queue.counts(q)).completed === 1, 8000, 'completion');
    // Still ignored while the finished job is kept.
    await queue.enqueue(q, 'once', { n: 3 }, { jobId: 'dedupe-a' });
    await sleep(300);
    expect(payloads).toEqual([{ n: 1 }]);
  });

  it('rejects options no adapter can honour', async () => {
    await expect(queue.enqueue(uniqueQueue(), 'x', {}, { jobId: 'a:b' })).rejects.toBeInstanceOf(QueueOptionsError);
    await expect(queue.enqueue(uniqueQueue(), 'x', {}, { attempts: 0 })).rejects.toBeInstanceOf(QueueOptionsError);
    await expect(queue.repeat(uniqueQueue(), 'k', 'x', {}, { everyMs: 0 })).rejects.toBeInstanceOf(QueueOptionsError);
  });

  it('runs a repeating job until removeRepeat', async () => {
    const q = uniqueQueue();
    const runs: { at: number; payload: unknown }[] = [];
    await queue.repeat(q, 'tick', 'tick', { v: 1 }, { everyMs: 200 });
    // Re-registering (every process start does) keeps one pending occurrence.
    await queue.repeat(q, 'tick', 'tick', { v: 2 }, { everyMs: 200 });
    const c = await queue.counts(q);
    expect(c.waiting + c.delayed).toBe(1);
    const consumer = queue.consume(q, async (job) => void runs.push({ at: Date.now(), payload: job.payload }));
    extra.push(consumer);
    await waitFor(() => runs.length >= 3, 8000, 'three runs');
    expect(runs[0]?.payload).toEqual({ v: 2 });
    await queue.removeRepeat(q, 'tick');
    // An occurrence already due when the schedule went may still start once.
    await sleep(250);
    const after = runs.length;
    await sleep(700);
    expect(runs.length).toBe(after);
    const left = await queue.counts(q);
    expect(left.waiting + left.delayed).toBe(0);
  });

  it('starts each occurrence once with two consumers', async () => {
    const q = uniqueQueue();
    const other = fx.open();
    extra.push(other);
    const starts: { id: string; at: number }[] = [];
    const record = async (job: Job<unknown>) => void starts.push({ id: job.id, at: Date.now() });
    await queue.repeat(q, 'both', 'tick', {}, { everyMs: 150 });
    extra.push(queue.consume(q, record, { concurrency: 2 }));
    extra.push(other.consume(q, record, { concurrency: 2 }));
    await sleep(1300);
    await queue.removeRepeat(q, 'both');
    expect(starts.length).toBeGreaterThanOrEqual(4);
    expect(starts.length).toBeLessThanOrEqual(11);
    // No job is started twice, and there are no more starts than slots: a duplicated
    // occurrence per slot would roughly double the count. (Gaps between starts are not
    // asserted: on a loaded machine a late slot is legitimately followed closely by the next.)
    expect(new Set(starts.map((s) => s.id)).size).toBe(starts.length);
  });

  it('counts jobs by state', async () => {
    const q = uniqueQueue();
    const release = gate();
    await queue.enqueue(q, 'a', {}, { attempts: 1 });
    await queue.enqueue(q, 'b', {});
    await queue.enqueue(q, 'c', {}, { delayMs: 60_000 });
    expect(await queue.counts(q)).toEqual({ waiting: 2, active: 0, delayed: 1, completed: 0, failed: 0 });
    extra.push(
      queue.consume(q, async (job) => {
        if (job.name === 'a') throw new Error('no');
        await release.opened;
      }),
    );
    await waitFor(async () => (await queue.counts(q)).active === 1, 8000, 'one active');
    release.open();
    await waitFor(async () => (await queue.counts(q)).completed === 1, 8000, 'completion');
    expect(await queue.counts(q)).toEqual({ waiting: 0, active: 0, delayed: 1, completed: 1, failed: 1 });
  });

  it('close() waits for the running job to finish', async () => {
    const q = uniqueQueue();
    const started = gate();
    let finished = false;
    let aborted = false;
    await queue.enqueue(q, 'slow', {});
    const consumer = queue.consume(q, async (_job, signal) => {
      started.open();
      await sleep(400);
      aborted = signal.aborted;
      finished = true;
    });
    await started.opened;
    await consumer.close();
    expect(finished).toBe(true);
    expect(aborted).toBe(false);
    await waitFor(async () => (await queue.counts(q)).completed === 1, 8000, 'completion recorded');
  });

  it('close(deadline) aborts a job that outlives the deadline', async () => {
    const q = uniqueQueue();
    const own = fx.open();
    const started = gate();
    let aborted = false;
    await own.enqueue(q, 'stuck', {});
    own.consume(q, async (_job, signal) => {
      started.open();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted = true;
      throw new Error('aborted');
    });
    await started.opened;
    const t0 = Date.now();
    await own.close(200);
    expect(aborted).toBe(true);
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('prunes finished jobs', async () => {
    const q = uniqueQueue();
    await queue.enqueue(q, 'short-lived', {});
    extra.push(queue.consume(q, async () => {}));
    await waitFor(async () => (await queue.counts(q)).completed === 1, 8000, 'completion');
    expect(await queue.prune(3_600_000)).toBe(0);
    await sleep(20);
    expect(await queue.prune(0)).toBeGreaterThanOrEqual(1);
    expect((await queue.counts(q)).completed).toBe(0);
  });

  it('keeps a job that runs longer than its lease (heartbeat)', async () => {
    const q = uniqueQueue();
    const other = fx.open();
    extra.push(other);
    const starts: number[] = [];
    await queue.enqueue(q, 'long', {});
    const handler = async (job: Job<unknown>) => {
      starts.push(job.attempt);
      await sleep(fx.leaseMs * 1.6);
    };
    extra.push(queue.consume(q, handler));
    extra.push(other.consume(q, handler));
    await waitFor(async () => (await queue.counts(q)).completed === 1, 15_000, 'completion');
    expect(starts).toEqual([1]);
  }, 30_000);

  // Scheduling slack on top of the lease: polls (50 ms), a worker's start, a loaded machine.
  const RECOVERY_MARGIN_MS = 1000;

  it('redelivers the job of a consumer that died mid-job within the lease', async () => {
    const q = uniqueQueue();
    const reopened = await fx.killConsumerMidJob(q, 'stalled-1');
    extra.push(reopened);
    const seen: { job: Job<unknown>; at: number }[] = [];
    extra.push(reopened.queue.consume(q, async (job) => void seen.push({ job, at: Date.now() })));
    await waitFor(() => seen.length > 0, 15_000, 'redelivery');
    expect(seen[0]?.job).toMatchObject({ id: 'stalled-1', name: 'stall', payload: { from: 'child' }, attempt: 2 });
    expect(seen[0]!.at - reopened.reachableAt).toBeLessThan(fx.leaseMs + RECOVERY_MARGIN_MS);
    await waitFor(async () => (await reopened.queue.counts(q)).completed === 1, 8000, 'completion');
    expect(seen).toHaveLength(1);
  }, 60_000);

  it('recovers a job from consumers that died again and again while it has attempts left', async () => {
    const q = uniqueQueue();
    const reopened = await fx.killConsumerMidJob(q, 'stalled-2', { attempts: 3, times: 2 });
    extra.push(reopened);
    const attempts: number[] = [];
    extra.push(reopened.queue.consume(q, async (job) => void attempts.push(job.attempt)));
    await waitFor(
      async () => (await reopened.queue.counts(q)).completed === 1,
      15_000,
      'completion on the third attempt',
    );
    expect(attempts).toEqual([3]);
  }, 90_000);

  it('fails a job whose every attempt died with its consumer, without running it again', async () => {
    const q = uniqueQueue();
    const reopened = await fx.killConsumerMidJob(q, 'stalled-3', { attempts: 2, times: 2 });
    extra.push(reopened);
    const attempts: number[] = [];
    extra.push(reopened.queue.consume(q, async (job) => void attempts.push(job.attempt)));
    await waitFor(async () => (await reopened.queue.counts(q)).failed === 1, 15_000, 'failed after its attempts');
    await sleep(200);
    expect(attempts).toEqual([]);
    expect(await reopened.queue.counts(q)).toMatchObject({ waiting: 0, active: 0, completed: 0, failed: 1 });
  }, 90_000);
});
