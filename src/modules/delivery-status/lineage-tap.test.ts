import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import {
  createOrganization,
  createPrincipal,
  type Principal,
  insertDestination,
} from '../../../test/support/identity.js';
import { integration } from '../../../test/support/quarantine.js';
import { newId } from '../../core/ids.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let intA: number;
let intB: number;
let root: Principal;
let adminA: Principal;
let viewerA: Principal;
let destA: string;
let destB: string;
let destGlobal: string;

type Json = Record<string, unknown>;
const db = () => t.container.database.db;

function call(who: Principal, url: string, method: 'GET' | 'POST' = 'GET', payload?: Json) {
  return t.app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) });
}

const destination = (organizationId: number | null, name: string) => insertDestination(t, organizationId, name);

async function waitFor<T>(probe: () => Promise<T | undefined>, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out waiting');
    await sleep(20);
  }
}

const sessionOf = (destinationId: string) =>
  db().selectFrom('tap_sessions').selectAll().where('destination_id', '=', destinationId).executeTakeFirst();

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_LINEAGE_ENABLED: 'true' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  intA = await integration(t, orgA, 'a-push');
  intB = await integration(t, orgB, 'b-push');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  destA = await destination(orgA, 'a-siem');
  destB = await destination(orgB, 'b-siem');
  destGlobal = await destination(null, 'shared-lake');
});
afterAll(async () => t?.close());

describe('lineage when it is on', () => {
  const e1 = newId();
  const e2 = newId();
  const e3 = newId();
  const [b1, b2, b3, b4] = [newId(), newId(), newId(), newId()];
  const at = (minute: number) => new Date(Date.parse('2025-06-01T10:00:00Z') + minute * 60_000);

  beforeAll(async () => {
    const event = (event_id: string, organization_id: number, integration_id: number, routes: string[]) => ({
      event_id,
      organization_id,
      integration_id,
      stream: 'events',
      mapping_version_id: null,
      received_at: at(0),
      normalized_batch_id: newId(),
      routes: JSON.stringify(routes),
      filtered: null,
    });
    await db()
      .insertInto('lineage_events')
      .values([event(e1, orgA, intA, ['r1', 'r2']), event(e2, orgA, intA, ['r1']), event(e3, orgB, intB, ['r9'])])
      .execute();
    await db()
      .insertInto('lineage_copies')
      .values([
        {
          event_id: e1,
          destination_id: destA,
          delivery_batch_id: b1,
          route_id: 'r1',
          kind: 'primary',
          created_at: at(1),
        },
        {
          event_id: e1,
          destination_id: destGlobal,
          delivery_batch_id: b2,
          route_id: 'r2',
          kind: 'primary',
          created_at: at(1),
        },
        {
          event_id: e2,
          destination_id: destA,
          delivery_batch_id: b3,
          route_id: 'r1',
          kind: 'primary',
          created_at: at(2),
        },
        {
          event_id: e3,
          destination_id: destGlobal,
          delivery_batch_id: b4,
          route_id: 'r9',
          kind: 'primary',
          created_at: at(3),
        },
      ])
      .execute();
    await db()
      .insertInto('lineage_attempts')
      .values([
        {
          id: newId(),
          delivery_batch_id: b1,
          destination_id: destA,
          attempt: 1,
          outcome: 'retry',
          status_code: 503,
          error: 'HTTP 503 token=s3cr3tvalue',
          duration_ms: 40,
          at: at(2),
        },
        {
          id: newId(),
          delivery_batch_id: b1,
          destination_id: destA,
          attempt: 2,
          outcome: 'delivered',
          status_code: 200,
          error: null,
          duration_ms: 20,
          at: at(3),
        },
      ])
      .execute();
    await db()
      .insertInto('dlq_events')
      .values({
        id: newId(),
        destination_id: destA,
        organization_id: orgA,
        integration_id: intA,
        stream: 'events',
        event_id: e2,
        delivery_batch_id: b3,
        event: '{"n":2}',
        error_kind: 'rejected',
        reason: 'HTTP 400',
        status_code: 400,
        attempts: 1,
      })
      .execute();
  });

  it('lists the events copied to a destination, newest first, with every copy and attempt', async () => {
    const res = await call(viewerA, `/api/collectors/destinations/${destA}/lineage`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-total-count']).toBe('2');
    const records = res.json<Json[]>();
    expect(records.map((r) => r.event_id)).toEqual([e2, e1]);
    expect(records[1]).toEqual({
      event_id: e1,
      organization_id: orgA,
      integration_id: intA,
      stream: 'events',
      mapping_version_id: null,
      received_at: at(0).toISOString(),
      routes: ['r1', 'r2'],
      filtered: null,
      copies: [
        {
          destination_id: expect.any(String),
          route_id: expect.any(String),
          kind: 'primary',
          delivery_batch_id: expect.any(String),
          attempts: expect.any(Array),
          dead_lettered: false,
        },
        expect.objectContaining({ kind: 'primary' }),
      ],
    });
    const copies = records[1]!.copies as Json[];
    const toA = copies.find((c) => c.destination_id === destA)!;
    expect(toA).toMatchObject({ route_id: 'r1', delivery_batch_id: b1 });
    expect(toA.attempts).toEqual([
      {
        attempt: 1,
        outcome: 'retry',
        status_code: 503,
        error: expect.not.stringContaining('s3cr3tvalue'),
        duration_ms: 40,
        at: at(2).toISOString(),
      },
      { attempt: 2, outcome: 'delivered', status_code: 200, error: null, duration_ms: 20, at: at(3).toISOString() },
    ]);
    expect((records[0]!.copies as Json[])[0]).toMatchObject({ destination_id: destA, dead_lettered: true });
    const page = await call(viewerA, `/api/collectors/destinations/${destA}/lineage?limit=1&offset=1`);
    expect(page.json<Json[]>().map((r) => r.event_id)).toEqual([e1]);
    expect(page.headers['x-total-count']).toBe('2');
    expect((await call(viewerA, `/api/collectors/destinations/${destA}/lineage?limit=501`)).statusCode).toBe(422);
  });

  it('shows an organization only its own events in a global destination', async () => {
    expect(
      (await call(adminA, `/api/collectors/destinations/${destGlobal}/lineage`)).json<Json[]>().map((r) => r.event_id),
    ).toEqual([e1]);
    expect(
      (await call(root, `/api/collectors/destinations/${destGlobal}/lineage`)).json<Json[]>().map((r) => r.event_id),
    ).toEqual([e3, e1]);
    expect((await call(adminA, `/api/collectors/destinations/${destB}/lineage`)).statusCode).toBe(404);
  });

  it("answers one event's lineage; unknown or foreign events are 404", async () => {
    const res = await call(adminA, `/api/collectors/lineage/${e1}`);
    expect(res.statusCode, res.body).toBe(200);
    const [record] = res.json<Json[]>();
    expect(record).toMatchObject({ event_id: e1, routes: ['r1', 'r2'] });
    expect(record!.copies).toHaveLength(2);
    expect((await call(adminA, `/api/collectors/lineage/${e3}`)).statusCode).toBe(404);
    expect((await call(root, `/api/collectors/lineage/${e3}`)).statusCode).toBe(200);
    expect((await call(adminA, `/api/collectors/lineage/${newId()}`)).statusCode).toBe(404);
    expect((await call(adminA, '/api/collectors/lineage/not-an-id')).statusCode).toBe(404);
  });

  it('records the copy a DLQ reprocess makes', async () => {
    const dlq = await db().selectFrom('dlq_events').select('id').where('event_id', '=', e2).executeTakeFirstOrThrow();
    expect(
      (await call(adminA, `/api/collectors/destinations/${destA}/dlq/reprocess`, 'POST', { ids: [dlq.id] })).json(),
    ).toMatchObject({ reprocessed: 1 });
    const [record] = (await call(adminA, `/api/collectors/lineage/${e2}`)).json<{ copies: Json[] }[]>();
    const batch = await db()
      .selectFrom('delivery_batches')
      .select('id')
      .where('kind', '=', 'reprocess')
      .executeTakeFirstOrThrow();
    expect(record!.copies).toEqual([
      expect.objectContaining({ kind: 'primary', dead_lettered: false }),
      expect.objectContaining({
        kind: 'reprocess',
        delivery_batch_id: batch.id,
        route_id: null,
        destination_id: destA,
      }),
    ]);
  });
});

describe('GET /destinations/{id}/tap', () => {
  const url = (id: string, q: string) => `/api/collectors/destinations/${id}/tap?${q}`;

  it('streams the samples as masked NDJSON and stops at the limit; the session is removed', async () => {
    const started = Date.now();
    const pending = Promise.resolve(call(adminA, url(destA, 'seconds=20&limit=2')));
    const session = await waitFor(() => sessionOf(destA));
    expect(session.max_events).toBe(2);
    expect(session.expires_at.getTime() - started).toBeGreaterThan(15_000);
    await db()
      .insertInto('tap_samples')
      .values(
        [1, 2, 3].map((n) => ({
          destination_id: destA,
          session_id: session.id,
          event: JSON.stringify({
            n,
            user: { email_addr: 'bob@example.com', name: 'bob.jones' },
            observables: [{ name: 'user.name', value: 'bob.jones' }],
            message: 'bob.jones signed in',
          }),
        })),
      )
      .execute();
    const res = await pending;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(Date.now() - started).toBeLessThan(10_000);
    const lines = res.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { at: string; event: Json });
    expect(lines.map((l) => l.event.n)).toEqual([1, 2]);
    expect(lines[0]!.at).toMatch(/Z$/);
    expect(res.body).not.toContain('bob@example.com');
    // The masked user.name is masked in its other copies too.
    expect(res.body).not.toContain('bob.jones');
    expect(lines[0]!.event).toMatchObject({ observables: [{ value: 'b***' }], message: 'b*** signed in' });
    expect(await sessionOf(destA)).toBeUndefined();
    expect(await db().selectFrom('tap_samples').select('id').where('session_id', '=', session.id).execute()).toEqual(
      [],
    );
  });

  it('stops when the time is up, empty when nothing was sent', async () => {
    const started = Date.now();
    const res = await call(adminA, url(destA, 'seconds=1'));
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(await sessionOf(destA)).toBeUndefined();
  });

  it('ends the session when the client goes away', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const abort = new AbortController();
    const res = await fetch(`http://127.0.0.1:${port}${url(destA, 'seconds=30')}`, {
      headers: adminA.headers,
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    await waitFor(() => sessionOf(destA));
    abort.abort();
    await waitFor(async () => ((await sessionOf(destA)) ? undefined : true), 3000);
  });

  it('refuses a global destination without platform scope (403), a foreign one (404) and a viewer (403)', async () => {
    const res = await call(adminA, url(destGlobal, 'seconds=1'));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: { code: 'destination.tap_needs_platform_scope' } });
    expect((await call(root, url(destGlobal, 'seconds=1'))).statusCode).toBe(200);
    expect((await call(adminA, url(destB, 'seconds=1'))).statusCode).toBe(404);
    expect((await call(viewerA, url(destA, 'seconds=1'))).statusCode).toBe(403);
    for (const q of ['seconds=0', 'seconds=61', 'limit=1001', 'limit=0', 'follow=1'])
      expect((await call(adminA, url(destA, q))).statusCode, q).toBe(422);
    expect(await db().selectFrom('tap_sessions').select('id').execute()).toEqual([]);
  });
});
