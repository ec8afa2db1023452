// POST /api/ingest/{stream}: authentication by ingestion token, format detection, per-line
// reports, encodings and limits, durable accept on the normalize queue, backpressure.
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { failEnqueue, ingestTarget } from '../../../test/support/ingest-target.js';
import { isUuid } from '../../core/ids.js';
import { NORMALIZE_JOB, NORMALIZE_QUEUE, type IngestBatch } from '../../pipeline/envelope.js';

type Json = Record<string, unknown>;

let t: TestApp;
let orgA: number;
let adminA: Principal;

const LIMITS = {
  WEIR_TOKEN_RATE_LIMIT: '1000000',
  WEIR_INGEST_MAX_BODY_BYTES: String(64 * 1024),
  WEIR_INGEST_MAX_DECODED_BYTES: String(256 * 1024),
  WEIR_INGEST_BATCH_MAX_EVENTS: '3',
};

beforeAll(async () => {
  t = await createTestApp({ env: LIMITS });
  orgA = await createOrganization(t, 'Org A');
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
});
afterAll(async () => t?.close());

function push(
  token: string,
  payload: string | Buffer,
  headers: Record<string, string> = {},
  stream = 'events',
  app = t,
) {
  return app.app.inject({
    method: 'POST',
    url: `/api/ingest/${stream}`,
    headers: { authorization: `Bearer ${token}`, ...headers },
    payload,
  });
}

// What reached the normalize queue, read through the queue port so that the same test holds
// for the database queue and for BullMQ: a consumer records every job it is given.
const seen = new Map<string, { id: string; name: string; max_attempts: number; payload: IngestBatch }>();
beforeAll(() => {
  t.container.queue.consume<IngestBatch>(NORMALIZE_QUEUE, async (job) => {
    seen.set(job.id, { id: job.id, name: job.name, max_attempts: job.maxAttempts, payload: job.payload });
  });
});

async function jobs(ids: unknown): Promise<{ id: string; name: string; max_attempts: number; payload: IngestBatch }[]> {
  const list = ids as string[];
  const deadline = Date.now() + 10_000;
  while (!list.every((id) => seen.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return list.map((id) => seen.get(id)) as never;
}

let target: { id: number; token: string };
beforeAll(async () => {
  target = await ingestTarget(t, adminA, orgA);
});

describe('accepting events', () => {
  it('accepts one object (200) and enqueues it with its envelope', async () => {
    const before = Date.now();
    const res = await push(target.token, '{"user":"ann","action":"login"}', {}, 'system_log');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Json>();
    expect(body).toMatchObject({ accepted: 1, rejected: 0, errors: [], errors_omitted: 0 });
    const [job] = await jobs(body.batch_ids);
    expect(job).toMatchObject({ id: (body.batch_ids as string[])[0], name: NORMALIZE_JOB, max_attempts: 10 });
    const batch = job!.payload;
    expect(batch).toMatchObject({
      id: job!.id,
      organization_id: orgA,
      integration_id: target.id,
      platform: 'custom',
      stream: 'system_log',
      source: 'push',
      events: ['{"user":"ann","action":"login"}'], // the text as received, not re-encoded
      bytes: Buffer.byteLength('{"user":"ann","action":"login"}'),
    });
    expect(batch.ids).toHaveLength(1);
    expect(isUuid(batch.ids[0]!)).toBe(true);
    expect(batch.ids[0]!.charAt(14)).toBe('7'); // UUIDv7: time-ordered
    expect(Date.parse(batch.received_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(batch.received_at).toMatch(/Z$/);
    expect(batch.trace).toBeUndefined(); // telemetry is off
  });

  it('reads a compact array as one event per element, in batches of WEIR_INGEST_BATCH_MAX_EVENTS', async () => {
    const events = Array.from({ length: 7 }, (_, i) => ({ i }));
    const res = await push(target.token, JSON.stringify(events));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Json>();
    expect(body).toMatchObject({ accepted: 7, rejected: 0 });
    const batches = (await jobs(body.batch_ids)).map((j) => j.payload);
    expect(batches.map((b) => b.events.length)).toEqual([3, 3, 1]);
    expect(batches.flatMap((b) => b.events).map((e) => JSON.parse(e as string) as unknown)).toEqual(events);
    expect(batches.reduce((s, b) => s + b.bytes, 0)).toBe(events.reduce((s, e) => s + JSON.stringify(e).length, 0));
    const ids = batches.flatMap((b) => b.ids);
    expect(new Set(ids).size).toBe(7);
    expect([...ids].sort()).toEqual(ids); // time-ordered within the push
  });

  it("reads a pretty-printed object as ONE event (the spec's hazard, fixed)", async () => {
    const event = { actor: { user: 'ann', groups: ['a', 'b'] }, outcome: 'success' };
    const res = await push(target.token, JSON.stringify(event, null, 2), { 'content-type': 'application/x-ndjson' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ accepted: 1, rejected: 0 });
    const [job] = await jobs(res.json<Json>().batch_ids);
    expect(job!.payload.events.map((e) => JSON.parse(e as string) as unknown)).toEqual([event]);
  });

  it('reads a pretty-printed array as one document', async () => {
    const res = await push(target.token, JSON.stringify([{ a: 1 }, { b: { c: 2 } }], null, 4));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ accepted: 2, rejected: 0 });
  });

  it('reads NDJSON under any accepted Content-Type, or none (the format comes from the content)', async () => {
    const body = '{"n":1}\n{"n":2}\n';
    const variants: Record<string, string>[] = [
      {},
      { 'content-type': 'application/json' },
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-ndjson' },
      { 'content-type': 'application/x-www-form-urlencoded' },
    ];
    for (const headers of variants) {
      const res = await push(target.token, body, headers);
      expect(res.statusCode, `${JSON.stringify(headers)} ${res.body}`).toBe(200);
      expect(res.json()).toMatchObject({ accepted: 2 });
    }
  });

  it('takes gzip bodies', async () => {
    const res = await push(target.token, gzipSync('{"z":1}\n{"z":2}\n{"z":3}\n'), { 'content-encoding': 'gzip' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ accepted: 3 });
  });

  it('accepts a stream named like the management path', async () => {
    const res = await push(target.token, '{"a":1}', {}, 'integrations');
    expect(res.statusCode, res.body).toBe(200);
  });

  it('writes no audit entry per push', async () => {
    const res = await push(target.token, '{"a":1}', { 'x-correlation-id': 'push-no-audit' });
    expect(res.statusCode).toBe(200);
    const entries = await t.container.database.db
      .selectFrom('audit_log')
      .select('seq')
      .where('correlation_id', '=', 'push-no-audit')
      .execute();
    expect(entries).toEqual([]);
  });
});

describe('per-line reports', () => {
  it('answers 207 with the line numbers of bad NDJSON lines', async () => {
    const res = await push(target.token, '{"ok":1}\n{"broken":\n\n{"ok":2}\n42\n');
    expect(res.statusCode, res.body).toBe(207);
    expect(res.json()).toMatchObject({
      accepted: 2,
      rejected: 2,
      errors: [
        { line: 2, reason: 'invalid JSON' },
        { line: 5, reason: 'not a JSON object (a number)' },
      ],
    });
  });

  it('answers 400 ingest.no_events_accepted when every line is bad, with the errors', async () => {
    const res = await push(target.token, 'null\n"x"\n[1]\n{bad');
    expect(res.statusCode).toBe(400);
    const body = res.json<{ detail: string; error: { code: string; details: Json } }>();
    expect(body.error.code).toBe('ingest.no_events_accepted');
    expect(typeof body.detail).toBe('string');
    expect(body.error.details).toMatchObject({ accepted: 0, rejected: 4, errors_omitted: 0 });
    expect((body.error.details.errors as unknown[]).length).toBe(4);
  });

  it('caps the listed errors at 100 and says how many more', async () => {
    const res = await push(target.token, '{"ok":1}\n' + '1\n'.repeat(150));
    expect(res.statusCode).toBe(207);
    expect(res.json()).toMatchObject({ accepted: 1, rejected: 150, errors_omitted: 50 });
    expect((res.json<Json>().errors as unknown[]).length).toBe(100);
  });

  it('answers 400 for an empty body or an empty array', async () => {
    for (const payload of ['', '  \n ']) {
      const res = await push(target.token, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().detail).toMatch(/empty/);
    }
    expect((await push(target.token, '[]')).json()).toMatchObject({ error: { code: 'ingest.no_events_accepted' } });
  });

  it('refuses prototype-poisoning lines', async () => {
    const res = await push(target.token, '{"__proto__":{"x":1}}\n{"a":1}');
    expect(res.statusCode).toBe(207);
    expect(res.json<Json>().errors).toEqual([
      { line: 1, reason: 'forbidden key (__proto__ or constructor.prototype)' },
    ]);
  });
});

describe('encodings and limits', () => {
  it('answers 400 for a body that is not gzip data', async () => {
    const res = await push(target.token, '{"a":1}', { 'content-encoding': 'gzip' });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/gzip/);
  });

  it('answers 415 for other encodings', async () => {
    for (const enc of ['br', 'deflate', 'gzip, br']) {
      const res = await push(target.token, '{"a":1}', { 'content-encoding': enc });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toMatchObject({ error: { code: 'ingest.unsupported_encoding' } });
    }
    expect((await push(target.token, '{"a":1}', { 'content-encoding': 'identity' })).statusCode).toBe(200);
  });

  it('answers 413 over the body limit', async () => {
    const big = `{"pad":"${'x'.repeat(70 * 1024)}"}`;
    const res = await push(target.token, big);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({
      error: { code: 'request.body_too_large', details: { limit_bytes: 64 * 1024 } },
    });
  });

  it('answers 413 when a small gzip body expands past the decompressed limit (zip bomb)', async () => {
    const bomb = gzipSync(`{"pad":"${'x'.repeat(4 * 1024 * 1024)}"}`);
    expect(bomb.length).toBeLessThan(64 * 1024);
    const res = await push(target.token, bomb, { 'content-encoding': 'gzip' });
    expect(res.statusCode).toBe(413);
    expect(res.json().detail).toMatch(/decompressed/);
  });

  it('answers 413 over real HTTP to a streamed body, without resetting the connection', async () => {
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const line = new TextEncoder().encode(`{"pad":"${'x'.repeat(1000)}"}\n`);
    const body = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 100; i++) controller.enqueue(line);
        controller.close();
      },
    });
    const res = await fetch(`${url}/api/ingest/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.token}` },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(res.headers.get('connection')).toBe('close');
    expect(((await res.json()) as Json).detail).toMatch(/larger than the limit/);
  });

  it('answers 422 for an unsafe stream name', async () => {
    for (const stream of ['_x', 'a%20b', 'x'.repeat(65)]) {
      const res = await push(target.token, '{"a":1}', {}, stream);
      expect(res.statusCode, stream).toBe(422);
    }
  });
});

describe('authentication by the ingestion token', () => {
  it('accepts the Bearer scheme in any letter case and X-Ingest-Token', async () => {
    for (const headers of [
      { authorization: `bearer ${target.token}` },
      { authorization: `BEARER ${target.token}` },
      { 'x-ingest-token': target.token },
    ]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/ingest/events', headers, payload: '{"a":1}' });
      expect(res.statusCode, JSON.stringify(Object.keys(headers))).toBe(200);
    }
  });

  it('answers 401 ingest.invalid_token with WWW-Authenticate for a missing, wrong or foreign token', async () => {
    const forged = target.token.slice(0, -1) + (target.token.endsWith('A') ? 'B' : 'A');
    const cases: Record<string, string>[] = [
      {},
      { authorization: 'Bearer svcik_nope' },
      { authorization: `Bearer ${forged}` },
      { authorization: adminA.headers.authorization }, // a management token is not an ingestion token
      { authorization: `Basic ${target.token}` },
    ];
    for (const headers of cases) {
      const res = await t.app.inject({ method: 'POST', url: '/api/ingest/events', headers, payload: '{"a":1}' });
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="service"');
      expect(res.json()).toMatchObject({ error: { code: 'ingest.invalid_token' } });
    }
  });

  it('answers 403 for an inactive integration or organization', async () => {
    const db = t.container.database.db;
    const inactive = await ingestTarget(t, adminA, orgA);
    await db.updateTable('integrations').set({ is_active: false }).where('id', '=', inactive.id).execute();
    const res = await push(inactive.token, '{"a":1}');
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: { code: 'ingest.integration_inactive' } });

    const orgC = await createOrganization(t, 'Org C');
    const adminC = await createPrincipal(t, { role: 'admin', organizationId: orgC });
    const inC = await ingestTarget(t, adminC, orgC);
    await db.updateTable('organizations').set({ is_active: false }).where('id', '=', orgC).execute();
    expect((await push(inC.token, '{"a":1}')).statusCode).toBe(403);
  });

  it('stops a cached token at once when its integration is forgotten after deactivation', async () => {
    const other = await ingestTarget(t, adminA, orgA);
    expect((await push(other.token, '{"a":1}')).statusCode).toBe(200); // cached now
    await t.container.database.db
      .updateTable('integrations')
      .set({ is_active: false })
      .where('id', '=', other.id)
      .execute();
    await t.container.ingest.service.forgetIntegration(other.id);
    expect((await push(other.token, '{"a":1}')).statusCode).toBe(403);
  });
});

describe('durability when the queue fails', () => {
  it('reports the lines of the chunks that could not be enqueued (207), keeping those that were', async () => {
    const queue = failEnqueue(t, 1);
    try {
      const lines = Array.from({ length: 7 }, (_, i) => JSON.stringify({ i })).join('\n');
      const res = await push(target.token, `${lines}\n[]`);
      expect(res.statusCode, res.body).toBe(207);
      const body = res.json<{
        accepted: number;
        rejected: number;
        errors: { line: number; reason: string }[];
        batch_ids: string[];
      }>();
      expect(body.accepted).toBe(3);
      expect(body.rejected).toBe(5);
      expect(body.errors.map((e) => e.line)).toEqual([4, 5, 6, 7, 8]);
      expect(body.errors[0]!.reason).toBe('not accepted: pipeline unavailable, resend');
      expect(body.batch_ids).toHaveLength(1);
      expect((await jobs(body.batch_ids))[0]!.payload.events.map((e) => JSON.parse(e as string) as unknown)).toEqual([
        { i: 0 },
        { i: 1 },
        { i: 2 },
      ]);
    } finally {
      queue.restore();
    }
  });

  it('answers 503 with Retry-After when nothing could be enqueued', async () => {
    const queue = failEnqueue(t);
    try {
      const res = await push(target.token, '{"a":1}');
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toMatchObject({ error: { code: 'dependency.unavailable' } });
    } finally {
      queue.restore();
    }
  });
});

describe('backpressure', () => {
  it('answers 503 ingest.saturated with Retry-After when the normalize queue is too deep', async () => {
    const s = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_INGEST_MAX_PENDING_BATCHES: '1' } });
    try {
      const org = await createOrganization(s, 'Org S');
      const admin = await createPrincipal(s, { role: 'admin', organizationId: org });
      const tgt = await ingestTarget(s, admin, org);
      expect((await push(tgt.token, '{"a":1}', {}, 'events', s)).statusCode).toBe(200);
      expect((await push(tgt.token, '{"a":2}', {}, 'events', s)).statusCode).toBe(200);
      const res = await push(tgt.token, '{"a":3}', {}, 'events', s);
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toMatchObject({ error: { code: 'ingest.saturated', details: { limit: 1 } } });
      const counts = await s.container.queue.counts(NORMALIZE_QUEUE);
      expect(counts.waiting).toBe(2);
    } finally {
      await s.close();
    }
  });

  it('answers 503 ingest.saturated naming WEIR_INGEST_MAX_PENDING_EVENTS when more events wait for normalization than the limit', async () => {
    const s = await createTestApp({
      env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_INGEST_MAX_PENDING_EVENTS: '1000' },
    });
    try {
      const org = await createOrganization(s, 'Org E');
      const admin = await createPrincipal(s, { role: 'admin', organizationId: org });
      const tgt = await ingestTarget(s, admin, org);
      const lines = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ n: i })).join('\n');
      // No worker runs: the 1,200 events stay accepted and not yet normalized.
      expect((await push(tgt.token, lines(1200), {}, 'events', s)).statusCode).toBe(200);
      // The count is read at most once a second.
      await new Promise((r) => setTimeout(r, 1100));
      const res = await push(tgt.token, lines(1), {}, 'events', s);
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toMatchObject({
        detail: expect.stringContaining('WEIR_INGEST_MAX_PENDING_EVENTS'),
        error: { code: 'ingest.saturated', details: { pending_events: 1200, limit: 1000 } },
      });
    } finally {
      await s.close();
    }
  });

  it('answers 429 with Retry-After: 1 when other pushes hold the in-flight byte budget', async () => {
    const s = await createTestApp({
      env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_INGEST_MAX_INFLIGHT_BYTES: '1024' },
    });
    try {
      const org = await createOrganization(s, 'Org B');
      const admin = await createPrincipal(s, { role: 'admin', organizationId: org });
      const tgt = await ingestTarget(s, admin, org);
      const slow = new PassThrough();
      const first = s.app.inject({
        method: 'POST',
        url: '/api/ingest/events',
        headers: { authorization: `Bearer ${tgt.token}`, 'transfer-encoding': 'chunked' },
        payload: slow,
      });
      slow.write(`{"pad":"${'x'.repeat(2000)}"}\n`);
      await new Promise((r) => setTimeout(r, 100));
      const refused = await push(tgt.token, '{"a":1}', {}, 'events', s);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      slow.end('{"b":2}\n');
      const done = await first;
      expect(done.statusCode, done.body).toBe(200);
      expect(done.json()).toMatchObject({ accepted: 2 });
      // The budget is returned once the push is answered.
      expect((await push(tgt.token, '{"a":1}', {}, 'events', s)).statusCode).toBe(200);
    } finally {
      await s.close();
    }
  });
});
