// The worker side of backfill, driven by calling the backfill.run handler the way the queue
// does (normalization consumers run, the backfill queue's do not): chunking, retention,
// cancel mid-run, rate limits, resuming after a crash without losing a page.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { BACKFILL_PLATFORM, fakeBackfillVendor, type FakeVendor } from '../../../test/support/backfill.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { DAY_MS, HOUR_MS, VendorError } from '../../connectors/sdk.js';
import { NORMALIZE_QUEUE, type AcceptBatch } from '../../pipeline/envelope.js';
import type { Consumer, Job, JobHandler } from '../../platform/queue/port.js';
import { startConsumers } from '../../roles/jobs.js';
import { BACKFILL_QUEUE, RUN_JOB, enqueueRun } from './jobs.js';
import { createBackfillRunner } from './runner.js';
import { createBackfillStore } from './store.js';

let t: TestApp;
let vendor: FakeVendor;
let org: number;
let admin: Principal;
let consumers: Consumer[] = [];
let run: JobHandler;

type Json = Record<string, unknown>;

beforeAll(async () => {
  vendor = fakeBackfillVendor();
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '100000' } });
  org = await createOrganization(t, 'Org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  consumers = startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => j.queue === NORMALIZE_QUEUE),
    t.container.logger,
  );
  run = t.container.jobs.find((j) => j.queue === BACKFILL_QUEUE)!.handlers[RUN_JOB]!;
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
});
beforeEach(() => vendor.reset());

function call(method: 'GET' | 'POST', url: string, payload?: unknown) {
  return t.app.inject({
    method,
    url,
    headers: admin.headers,
    ...(payload !== undefined ? { payload: payload as Json } : {}),
  });
}

let n = 0;
async function newJob(streams: string[], from: number, to: number): Promise<{ integrationId: number; jobId: string }> {
  const created = await call('POST', '/api/integrations/', {
    name: `r-${++n}`,
    platform: BACKFILL_PLATFORM,
    organization_id: org,
    config: { collect: true, api_key: 'secret-key-123456' },
  });
  expect(created.statusCode, created.body).toBe(201);
  const integrationId = created.json().id as number;
  const res = await call('POST', `/api/integrations/${integrationId}/backfill`, {
    streams,
    from_ts: new Date(from).toISOString(),
    to_ts: new Date(to).toISOString(),
  });
  expect(res.statusCode, res.body).toBe(201);
  return { integrationId, jobId: res.json().id as string };
}

function job(jobId: string, attempt = 1): Job {
  return {
    id: `q-${jobId}-${attempt}`,
    queue: BACKFILL_QUEUE,
    name: RUN_JOB,
    payload: { job_id: jobId },
    attempt,
    maxAttempts: 10,
  };
}

async function getJob(jobId: string): Promise<Json & { progress: Record<string, Json>; warnings: string[] }> {
  return (await call('GET', `/api/backfill-jobs/${jobId}`)).json();
}

/** Waits until normalization has counted `total` events (new + duplicates) of the integration's stream. */
async function counters(
  integrationId: number,
  stream: string,
  total: number,
): Promise<{ events_in: number; duplicates: number }> {
  const until = Date.now() + 20_000;
  for (;;) {
    const rows = await t.container.database.db
      .selectFrom('stream_counters')
      .select(['events_in', 'duplicates'])
      .where('integration_id', '=', integrationId)
      .where('stream', '=', stream)
      .execute();
    const sum = {
      events_in: rows.reduce((s, r) => s + Number(r.events_in), 0),
      duplicates: rows.reduce((s, r) => s + Number(r.duplicates), 0),
    };
    if (sum.events_in + sum.duplicates >= total || Date.now() > until) return sum;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const hourFloor = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

/** A runner over the test app's parts, with some of them replaced. */
function customRunner(overrides: Partial<Parameters<typeof createBackfillRunner>[0]>) {
  const c = t.container;
  return createBackfillRunner({
    store: createBackfillStore(c.database.db),
    clock: c.clock,
    accept: c.ingest.accept,
    lock: c.lock,
    integrations: c.integrations.service,
    connectorFor: (p) => (p === BACKFILL_PLATFORM ? vendor.connector : undefined),
    connectorRuntime: c.connectorRuntime,
    enqueueRun: async (id, delayMs) => void (await enqueueRun(c.queue, id, { delayMs })),
    lockTtlMs: 5_000,
    ...overrides,
  });
}

describe('backfill.run', () => {
  it('walks each stream in chunks of its maxWindowMs, contiguous over [from, to), page by page', async () => {
    const from = hourFloor(Date.now() - 6 * DAY_MS) + 30 * 60_000;
    const to = from + 5 * DAY_MS + 3 * HOUR_MS;
    const { integrationId, jobId } = await newJob(['events', 'audit'], from, to);
    await run(job(jobId), new AbortController().signal);
    const done = await getJob(jobId);
    expect(done.status).toBe('completed');
    for (const [stream, maxWindow] of [
      ['events', DAY_MS],
      ['audit', 2 * DAY_MS],
    ] as const) {
      const firstPages = vendor.calls.filter((c) => c.stream === stream && c.cursor === null);
      expect(firstPages[0]!.from.getTime()).toBe(from);
      expect(firstPages.at(-1)!.to!.getTime()).toBe(to);
      for (let i = 0; i < firstPages.length; i++) {
        expect(firstPages[i]!.to!.getTime() - firstPages[i]!.from.getTime()).toBeLessThanOrEqual(maxWindow);
        if (i > 0) expect(firstPages[i]!.from.getTime()).toBe(firstPages[i - 1]!.to!.getTime());
      }
      expect(firstPages).toHaveLength(Math.ceil((to - from) / maxWindow));
      // Later pages of a chunk ask for the same window with the vendor's token.
      for (const c of vendor.calls.filter((x) => x.stream === stream && x.cursor !== null)) {
        expect(
          firstPages.some((f) => f.from.getTime() === c.from.getTime() && f.to!.getTime() === c.to!.getTime()),
        ).toBe(true);
      }
      const expected = vendor.eventsIn(stream, new Date(from), new Date(to)).length;
      expect(done.progress[stream]).toMatchObject({ done: true, events: expected });
      expect(await counters(integrationId, stream, expected)).toEqual({ events_in: expected, duplicates: 0 });
    }
  });

  it('clamps the start to the vendor retention with a warning', async () => {
    const from = Date.now() - 10 * DAY_MS;
    const to = Date.now() - 5 * DAY_MS;
    const { jobId } = await newJob(['audit'], from, to);
    await run(job(jobId), new AbortController().signal);
    const done = await getJob(jobId);
    expect(done.status).toBe('completed');
    expect(done.warnings.some((w) => w.startsWith('audit: the vendor keeps 7 days'))).toBe(true);
    const first = vendor.calls[0]!;
    expect(first.from.getTime()).toBeGreaterThanOrEqual(Date.now() - 7 * DAY_MS - 60_000);
    expect(first.from.getTime()).toBe(Date.parse(String(done.progress.audit!.clamped_from)));
  });

  it('cancel mid-run: the page in hand is finished, the next is not fetched, the job ends cancelled', async () => {
    const from = hourFloor(Date.now() - 4 * DAY_MS);
    const { integrationId, jobId } = await newJob(['events'], from, from + 3 * DAY_MS);
    vendor.beforePage = async (_call, index) => {
      if (index === 1) {
        const res = await call('POST', `/api/backfill-jobs/${jobId}/cancel`);
        expect(res.statusCode).toBe(202);
        expect(res.json()).toMatchObject({ status: 'running', cancel_requested: true });
      }
    };
    await run(job(jobId), new AbortController().signal);
    const done = await getJob(jobId);
    expect(vendor.calls).toHaveLength(2);
    expect(done).toMatchObject({ status: 'cancelled', pages: 2, events: 4 });
    expect(done.finished_at).not.toBeNull();
    expect(await counters(integrationId, 'events', 4)).toEqual({ events_in: 4, duplicates: 0 });
  });

  it('a long rate limit queues the job again, delayed, keeping its progress; it then resumes', async () => {
    const from = hourFloor(Date.now() - 4 * DAY_MS);
    const { integrationId, jobId } = await newJob(['events'], from, from + 3 * DAY_MS);
    vendor.beforePage = (_call, index) => {
      if (index === 2)
        throw new VendorError('rate_limited', 'vendor.test: rate limited (HTTP 429), retry in 3600 s', {
          status: 429,
          retryAfterMs: 3_600_000,
        });
    };
    const delayedBefore = (await t.container.queue.counts(BACKFILL_QUEUE)).delayed;
    await run(job(jobId), new AbortController().signal);
    const waiting = await getJob(jobId);
    expect(waiting).toMatchObject({ status: 'queued', pages: 2, events: 4 });
    expect(Date.parse(String(waiting.resume_at))).toBeGreaterThan(Date.now() + 3_500_000);
    expect(waiting.warnings.some((w) => w.startsWith('rate limited by the vendor; resuming at'))).toBe(true);
    expect((await t.container.queue.counts(BACKFILL_QUEUE)).delayed).toBe(delayedBefore + 1);

    vendor.reset();
    await run(job(jobId, 2), new AbortController().signal);
    const done = await getJob(jobId);
    expect(done).toMatchObject({ status: 'completed', pages: 6, events: 12, resume_at: null });
    // It resumed at the page that was refused, not at the start.
    expect(vendor.calls[0]!.from.getTime()).toBe(from + DAY_MS);
    expect(vendor.calls[0]!.cursor).toBeNull();
    expect(await counters(integrationId, 'events', 12)).toEqual({ events_in: 12, duplicates: 0 });
  });

  it('a worker stopped mid-fetch: the job is delivered again and resumes from its progress, no page lost', async () => {
    const from = hourFloor(Date.now() - 4 * DAY_MS);
    const { integrationId, jobId } = await newJob(['events'], from, from + 3 * DAY_MS);
    const stop = new AbortController();
    vendor.beforePage = (_call, index) => {
      if (index === 3) stop.abort(new Error('worker stopping'));
    };
    await expect(run(job(jobId), stop.signal)).rejects.toThrow(/stopping/);
    const interrupted = await getJob(jobId);
    expect(interrupted).toMatchObject({ status: 'running', pages: 3 });

    vendor.reset();
    await run(job(jobId, 2), new AbortController().signal);
    const done = await getJob(jobId);
    expect(done).toMatchObject({ status: 'completed', pages: 6, events: 12 });
    expect(vendor.calls).toHaveLength(3);
    expect(await counters(integrationId, 'events', 12)).toEqual({ events_in: 12, duplicates: 0 });
  });

  it('a crash after the page was accepted but before its progress was written: the page is fetched again and deduplicated', async () => {
    const from = hourFloor(Date.now() - 4 * DAY_MS);
    const { integrationId, jobId } = await newJob(['events'], from, from + 3 * DAY_MS);
    const c = t.container;
    let accepted = 0;
    // The third page is accepted, then the process "dies" before anything else.
    const crashing: AcceptBatch = async (batch) => {
      await c.ingest.accept(batch);
      if (++accepted === 3) throw new Error('process killed');
    };
    const runner = customRunner({ accept: crashing });
    await expect(runner.run(jobId, new AbortController().signal, { attempt: 1, maxAttempts: 10 })).rejects.toThrow(
      'process killed',
    );
    expect(await getJob(jobId)).toMatchObject({ status: 'running', pages: 2 });

    vendor.reset();
    await run(job(jobId, 2), new AbortController().signal);
    expect(await getJob(jobId)).toMatchObject({ status: 'completed', pages: 6 });
    expect(vendor.calls).toHaveLength(4);
    // 12 distinct events reach the pipeline; the re-fetched page's events are dropped as duplicates.
    expect(await counters(integrationId, 'events', 12 + 3)).toEqual({ events_in: 12, duplicates: 3 });
  });

  it('works in slices: after its slice a run queues the job again and the next run continues', async () => {
    const from = hourFloor(Date.now() - 4 * DAY_MS);
    const { integrationId, jobId } = await newJob(['events'], from, from + 3 * DAY_MS);
    const runner = customRunner({ sliceMs: 0 });
    const waitingBefore = (await t.container.queue.counts(BACKFILL_QUEUE)).waiting;
    await runner.run(jobId, new AbortController().signal, { attempt: 1, maxAttempts: 10 });
    expect(await getJob(jobId)).toMatchObject({ status: 'running', pages: 1 });
    expect((await t.container.queue.counts(BACKFILL_QUEUE)).waiting).toBe(waitingBefore + 1);
    let runs = 1;
    while ((await getJob(jobId)).status === 'running' && runs < 20) {
      await runner.run(jobId, new AbortController().signal, { attempt: 1, maxAttempts: 10 });
      runs += 1;
    }
    expect(await getJob(jobId)).toMatchObject({ status: 'completed', pages: 6, events: 12 });
    expect(runs).toBe(6);
    expect(vendor.calls).toHaveLength(6);
    expect(await counters(integrationId, 'events', 12)).toEqual({ events_in: 12, duplicates: 0 });
  });

  it('one worker at a time: while another holds the job lock, the run is queued again for later', async () => {
    const from = hourFloor(Date.now() - 3 * DAY_MS);
    const { jobId } = await newJob(['events'], from, from + DAY_MS);
    const held = await t.container.lock.acquire(`backfill:${jobId}`, 30_000);
    try {
      const delayedBefore = (await t.container.queue.counts(BACKFILL_QUEUE)).delayed;
      await run(job(jobId), new AbortController().signal);
      expect(vendor.calls).toHaveLength(0);
      expect((await getJob(jobId)).status).toBe('queued');
      expect((await t.container.queue.counts(BACKFILL_QUEUE)).delayed).toBe(delayedBefore + 1);
    } finally {
      await held?.release();
    }
    await run(job(jobId, 2), new AbortController().signal);
    expect((await getJob(jobId)).status).toBe('completed');
  });

  it("a vendor refusal fails the job with the vendor's message, never the secret", async () => {
    const from = hourFloor(Date.now() - 3 * DAY_MS);
    const { jobId } = await newJob(['events'], from, from + DAY_MS);
    vendor.beforePage = () => {
      throw new VendorError('auth', 'vendor.test: HTTP 401 (credentials refused)', { status: 401 });
    };
    await run(job(jobId), new AbortController().signal);
    const failed = await getJob(jobId);
    expect(failed).toMatchObject({ status: 'failed', error: 'vendor.test: HTTP 401 (credentials refused)' });
    expect(JSON.stringify(failed)).not.toContain('secret-key-123456');
  });
});
