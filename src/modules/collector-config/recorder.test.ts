// The capture recorder: the in-memory view of active sessions (refreshed every 2 s), stream
// selection, max_events (full) and expiry, exact counts under concurrent batches, and the
// whole path: a push to /api/ingest/{stream} through the normalization worker into a session.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { createIntegration, ingestBatch } from '../../../test/support/normalization.js';
import { manualClock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import { NORMALIZE_JOB, NORMALIZE_QUEUE, type IngestBatch } from '../../pipeline/envelope.js';
import type { Consumer } from '../../platform/queue/port.js';
import { createCaptureRecorder, REFRESH_MS } from './recorder.js';

type Json = Record<string, unknown>;

let t: TestApp;
let orgA: number;
let intA: number;
let intA2: number;
let adminA: Principal;
const clock = manualClock(new Date());

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  intA = await createIntegration(t, orgA);
  intA2 = await createIntegration(t, orgA);
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await t.container.database.db.deleteFrom('capture_sessions').execute();
  clock.set(new Date());
});

async function session(
  options: { integrationId?: number; stream?: string | null; maxEvents?: number; ttlMs?: number } = {},
): Promise<string> {
  const id = newId();
  const now = clock.now();
  await t.container.database.db
    .insertInto('capture_sessions')
    .values({
      id,
      organization_id: orgA,
      integration_id: options.integrationId ?? intA,
      stream: options.stream ?? null,
      status: 'active',
      max_events: options.maxEvents ?? 100,
      created_by: null,
      created_at: now,
      expires_at: new Date(now.getTime() + (options.ttlMs ?? 600_000)),
      stopped_at: null,
    })
    .execute();
  return id;
}

async function state(id: string) {
  const db = t.container.database.db;
  const row = await db
    .selectFrom('capture_sessions')
    .select(['status', 'events_captured', 'stopped_at'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  const events = await db
    .selectFrom('capture_events')
    .select(['raw', 'stream', 'source'])
    .where('session_id', '=', id)
    .orderBy('captured_at')
    .orderBy('id')
    .execute();
  return { ...row, events };
}

const recorder = () => createCaptureRecorder({ db: t.container.database.db, clock, logger: t.container.logger });
const events = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ n: from + i }));

describe('capture recorder', () => {
  it('sees a new session only at its next refresh (one query per REFRESH_MS), unless invalidated', async () => {
    const r = recorder();
    await r.record(ingestBatch(orgA, intA, 's', events(1)));
    const id = await session();
    await r.record(ingestBatch(orgA, intA, 's', events(2)));
    expect((await state(id)).events_captured).toBe(0);
    clock.advance(REFRESH_MS);
    await r.record(ingestBatch(orgA, intA, 's', events(2, 10)));
    const s = await state(id);
    expect(s.events_captured).toBe(2);
    expect(s.events.map((e) => e.raw)).toEqual([{ n: 10 }, { n: 11 }]);
    expect(s.events[0]).toMatchObject({ stream: 's', source: 'push' });
    const other = await session({ integrationId: intA2 });
    r.invalidate();
    await r.record(ingestBatch(orgA, intA2, 's', events(1)));
    expect((await state(other)).events_captured).toBe(1);
  });

  it('captures only the batches of its integration and stream; a session without stream takes every stream', async () => {
    const one = await session({ stream: 'login' });
    const all = await session({ stream: null });
    const r = recorder();
    await r.record(ingestBatch(orgA, intA, 'login', events(2)));
    await r.record({ ...ingestBatch(orgA, intA, 'admin', events(3, 10)), source: 'pull' });
    await r.record(ingestBatch(orgA, intA2, 'login', events(4, 20)));
    expect((await state(one)).events.map((e) => e.raw)).toEqual([{ n: 0 }, { n: 1 }]);
    const everything = await state(all);
    expect(everything.events_captured).toBe(5);
    expect(everything.events.map((e) => e.source)).toEqual(['push', 'push', 'pull', 'pull', 'pull']);
  });

  it('stops at max_events: the session becomes full and the rest of the batch is not kept', async () => {
    const id = await session({ maxEvents: 5 });
    const r = recorder();
    await r.record(ingestBatch(orgA, intA, 's', events(3)));
    await r.record(ingestBatch(orgA, intA, 's', events(3, 3)));
    await r.record(ingestBatch(orgA, intA, 's', events(3, 6)));
    const s = await state(id);
    expect(s).toMatchObject({ status: 'full', events_captured: 5 });
    expect(s.stopped_at).not.toBeNull();
    expect(s.events.map((e) => (e.raw as { n: number }).n)).toEqual([0, 1, 2, 3, 4]);
  });

  it('stops at expires_at: the session becomes expired and captures nothing more', async () => {
    const id = await session({ ttlMs: 10_000 });
    const r = recorder();
    await r.record(ingestBatch(orgA, intA, 's', events(1)));
    clock.advance(10_000);
    await r.record(ingestBatch(orgA, intA, 's', events(1, 1)));
    expect(await state(id)).toMatchObject({ status: 'expired', events_captured: 1 });
  });

  it('captures nothing for a session stopped in another process, even before its refresh', async () => {
    const s = await t.app.inject({
      method: 'POST',
      url: '/api/collectors/config/capture-sessions',
      headers: adminA.headers,
      payload: { integration_id: intA },
    });
    const id = String(s.json<Json>().id);
    const r = recorder();
    await r.record(ingestBatch(orgA, intA, 's', events(1)));
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: `/api/collectors/config/capture-sessions/${id}/stop`,
          headers: adminA.headers,
        })
      ).statusCode,
    ).toBe(200);
    await r.record(ingestBatch(orgA, intA, 's', events(1, 1)));
    expect(await state(id)).toMatchObject({ status: 'stopped', events_captured: 1 });
  });

  it('keeps events_captured exact when several workers record at once', async () => {
    const id = await session({ maxEvents: 20 });
    const workers = [recorder(), recorder(), recorder()];
    await Promise.all(
      workers.flatMap((w, k) =>
        Array.from({ length: 4 }, (_, i) => w.record(ingestBatch(orgA, intA, 's', events(3, k * 100 + i * 10)))),
      ),
    );
    const s = await state(id);
    expect(s).toMatchObject({ status: 'full', events_captured: 20 });
    expect(s.events).toHaveLength(20);
  });
});

describe('capture end to end', () => {
  let consumer: Consumer | undefined;
  afterAll(async () => consumer?.close());

  it('captures what is pushed to /api/ingest/{stream} once the worker has normalized it', async () => {
    const tokenRes = await t.app.inject({
      method: 'POST',
      url: `/api/ingest/integrations/${intA}/token`,
      headers: adminA.headers,
    });
    expect(tokenRes.statusCode, tokenRes.body).toBe(201);
    const token = String(tokenRes.json<Json>().token);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/collectors/config/capture-sessions',
      headers: adminA.headers,
      payload: { integration_id: intA, stream: 'audit' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = String(created.json<Json>().id);

    const handler = t.container.jobs.find((j) => j.queue === NORMALIZE_QUEUE)?.handlers[NORMALIZE_JOB];
    expect(handler).toBeDefined();
    const done = new Set<string>();
    consumer = t.container.queue.consume<IngestBatch>(NORMALIZE_QUEUE, async (job, signal) => {
      await handler!(job, signal);
      done.add(job.id);
    });
    const push = async (stream: string, body: string) => {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/ingest/${stream}`,
        headers: { authorization: `Bearer ${token}` },
        payload: body,
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ batch_ids: string[] }>().batch_ids;
    };
    const ids = [
      ...(await push('audit', '{"actor":"ann@example.com","action":"login"}\n{"actor":"bob","action":"logout"}')),
      ...(await push('other', '{"x":1}')),
    ];
    const deadline = Date.now() + 20_000;
    while (!ids.every((b) => done.has(b)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(ids.every((b) => done.has(b))).toBe(true);

    const res = await t.app.inject({
      method: 'GET',
      url: `/api/collectors/config/capture-sessions/${id}/events`,
      headers: adminA.headers,
    });
    expect(res.statusCode).toBe(200);
    const page = res.json<{ total: number; items: Json[] }>();
    expect(page.total).toBe(2);
    expect(page.items.map((e) => e.raw)).toEqual([
      { actor: 'ann@example.com', action: 'login' },
      { actor: 'bob', action: 'logout' },
    ]);
    expect(page.items[0]).toMatchObject({
      stream: 'audit',
      source: 'push',
      integration_id: intA,
      organization_id: orgA,
    });
  });
});
