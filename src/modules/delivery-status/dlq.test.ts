import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { outboxText } from '../../../test/support/normalization.js';
import {
  createOrganization,
  createPrincipal,
  type Principal,
  injectAs,
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
type Page = { total: number; limit: number; offset: number; items: Json[] };
const db = () => t.container.database.db;

const call = (who: Principal, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);

const destination = (organizationId: number | null, name: string, extra: { enabled?: boolean; delivery?: Json } = {}) =>
  insertDestination(t, organizationId, name, {
    config: JSON.stringify({ url: 'https://example.test/' }),
    delivery: JSON.stringify(extra.delivery ?? {}),
    enabled: extra.enabled ?? true,
  });

let minute = Date.parse('2025-06-01T00:00:00Z');
async function dead(
  destinationId: string,
  organizationId: number,
  integrationId: number,
  extra: { errorKind?: string; status?: 'dead' | 'reprocessed'; event?: Json; stream?: string } = {},
): Promise<string> {
  const id = newId();
  minute += 60_000;
  await db()
    .insertInto('dlq_events')
    .values({
      id,
      destination_id: destinationId,
      organization_id: organizationId,
      integration_id: integrationId,
      stream: extra.stream ?? 'events',
      event_id: newId(),
      delivery_batch_id: newId(),
      event: JSON.stringify(
        extra.event ?? { class_uid: 3002, user: { email_addr: 'alice@example.com' }, message: `event ${id}` },
      ),
      error_kind: extra.errorKind ?? 'rejected',
      reason: 'HTTP 400: mapper_parsing_exception token=abcd1234',
      status_code: 400,
      attempts: 1,
      status: extra.status ?? 'dead',
      created_at: new Date(minute),
      reprocessed_at: extra.status === 'reprocessed' ? new Date(minute) : null,
    })
    .execute();
  return id;
}

async function ledgerCount(destinationId: string, outcome: string): Promise<number> {
  const rows = await db()
    .selectFrom('ledger')
    .select('count')
    .where('destination_id', '=', destinationId)
    .where('outcome', '=', outcome)
    .execute();
  return rows.reduce((n, r) => n + Number(r.count), 0);
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
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
beforeEach(async () => {
  for (const table of ['dlq_events', 'delivery_batches', 'ledger', 'stream_counters'] as const)
    await db().deleteFrom(table).execute();
});

describe('GET /destinations/{id}/dlq', () => {
  it('lists dead letters newest first in the envelope, with the parsed event', async () => {
    const older = await dead(destA, orgA, intA);
    const done = await dead(destA, orgA, intA, { status: 'reprocessed' });
    const newer = await dead(destA, orgA, intA, { errorKind: 'retries_exhausted', stream: 'audit' });
    const res = await call(adminA, 'GET', `/api/collectors/destinations/${destA}/dlq`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Page>();
    expect(body).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(body.items.map((i) => i.id)).toEqual([newer, older]);
    expect(body.items[0]).toMatchObject({
      organization_id: orgA,
      integration_id: intA,
      stream: 'audit',
      error_kind: 'retries_exhausted',
      status_code: 400,
      attempts: 1,
      status: 'dead',
      reprocessed_at: null,
      created_at: expect.stringMatching(/Z$/),
      event: { class_uid: 3002, user: { email_addr: 'alice@example.com' } },
      event_masked: false,
    });
    // The destination's answer is redacted on the way out.
    expect(String(body.items[0]!.reason)).not.toContain('abcd1234');
    const all = (await call(adminA, 'GET', `/api/collectors/destinations/${destA}/dlq?status=all`)).json<Page>();
    expect(all.items.map((i) => i.id)).toEqual([newer, done, older]);
    expect(
      (await call(adminA, 'GET', `/api/collectors/destinations/${destA}/dlq?status=reprocessed`))
        .json<Page>()
        .items.map((i) => i.id),
    ).toEqual([done]);
    expect(
      (await call(adminA, 'GET', `/api/collectors/destinations/${destA}/dlq?error_kind=rejected`))
        .json<Page>()
        .items.map((i) => i.id),
    ).toEqual([older]);
    const page = (await call(adminA, 'GET', `/api/collectors/destinations/${destA}/dlq?limit=1&offset=1`)).json<Page>();
    expect(page).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect(page.items.map((i) => i.id)).toEqual([older]);
  });

  it('masks personal data for a caller without user.manage', async () => {
    await dead(destA, orgA, intA);
    const res = await call(viewerA, 'GET', `/api/collectors/destinations/${destA}/dlq`);
    expect(res.statusCode).toBe(200);
    const item = res.json<Page>().items[0]!;
    expect(item.event_masked).toBe(true);
    expect(JSON.stringify(item.event)).not.toContain('alice@example.com');
  });

  it("answers 404 for another organization's destination and an unknown one, 422 for a bad filter", async () => {
    await dead(destB, orgB, intB);
    expect((await call(adminA, 'GET', `/api/collectors/destinations/${destB}/dlq`)).statusCode).toBe(404);
    expect((await call(adminA, 'GET', '/api/collectors/destinations/nope/dlq')).statusCode).toBe(404);
    expect((await call(root, 'GET', `/api/collectors/destinations/${destB}/dlq`)).json<Page>().total).toBe(1);
    for (const q of ['status=gone', 'since=yesterday', 'limit=0', 'limit=501', 'colour=red']) {
      const res = await call(adminA, 'GET', `/api/collectors/destinations/${destA}/dlq?${q}`);
      expect(res.statusCode, q).toBe(422);
      expect(typeof res.json().detail).toBe('string');
    }
  });

  it('shows an organization only its own events in a global destination; platform scope sees all', async () => {
    const mine = await dead(destGlobal, orgA, intA);
    await dead(destGlobal, orgB, intB);
    const a = (await call(adminA, 'GET', `/api/collectors/destinations/${destGlobal}/dlq`)).json<Page>();
    expect(a.items.map((i) => i.id)).toEqual([mine]);
    expect((await call(root, 'GET', `/api/collectors/destinations/${destGlobal}/dlq`)).json<Page>().total).toBe(2);
    expect(
      (await call(root, 'GET', `/api/collectors/destinations/${destGlobal}/dlq?org_id=${orgB}`)).json<Page>().total,
    ).toBe(1);
  });
});

describe('POST /destinations/{id}/dlq/reprocess', () => {
  const url = (id: string) => `/api/collectors/destinations/${id}/dlq/reprocess`;

  it('writes the events back to the outbox, marks them and counts them, in one go', async () => {
    const events = [
      { class_uid: 1, n: 1 },
      { class_uid: 1, n: 2 },
    ];
    const ids = [
      await dead(destA, orgA, intA, { event: events[0] }),
      await dead(destA, orgA, intA, { event: events[1] }),
    ];
    const res = await call(adminA, 'POST', url(destA), { ids });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ reprocessed: 2, batches: 1, errors: [], remaining: 0, destination_enabled: true });

    const batches = await db().selectFrom('delivery_batches').selectAll().execute();
    expect(batches).toHaveLength(1);
    const batch = batches[0]!;
    expect(batch).toMatchObject({
      destination_id: destA,
      organization_id: orgA,
      integration_id: intA,
      stream: 'events',
      kind: 'reprocess',
      event_count: 2,
      attempts: 0,
    });
    const rows = await db()
      .selectFrom('dlq_events')
      .select(['event_id', 'status', 'reprocessed_at'])
      .where('id', 'in', ids)
      .orderBy('created_at')
      .execute();
    expect(batch.event_ids).toBe(rows.map((r) => r.event_id).join(','));
    expect((await outboxText(t, batch.events)).split('\n').map((l) => JSON.parse(l) as Json)).toEqual(events);
    expect(batch.source_batch_id).not.toBe(batch.id);
    expect(rows.every((r) => r.status === 'reprocessed' && r.reprocessed_at instanceof Date)).toBe(true);
    expect(await ledgerCount(destA, 'dlq_reprocessed')).toBe(2);
    const ledger = await db()
      .selectFrom('ledger')
      .selectAll()
      .where('outcome', '=', 'dlq_reprocessed')
      .executeTakeFirstOrThrow();
    expect(ledger).toMatchObject({ organization_id: orgA, integration_id: intA, stream: 'events', reason: 'rejected' });

    const audit = await db()
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'destinations.dlq_reprocess')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      outcome: 'success',
      target_type: 'destination',
      target_id: destA,
      organization_id: orgA,
    });
    expect(audit.details).toMatchObject({ reprocessed: 2, selection: 'ids' });
  });

  it('lists unknown, foreign and already reprocessed ids as errors', async () => {
    const ok = await dead(destA, orgA, intA);
    const done = await dead(destA, orgA, intA, { status: 'reprocessed' });
    const foreign = await dead(destB, orgB, intB);
    const unknown = newId();
    const res = await call(adminA, 'POST', url(destA), { ids: [ok, done, foreign, unknown, ok] });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ reprocessed: number; errors: { id: string; reason: string }[] }>();
    expect(body.reprocessed).toBe(1);
    expect(body.errors).toEqual(
      expect.arrayContaining([
        { id: foreign, reason: 'not_found' },
        { id: unknown, reason: 'not_found' },
        { id: done, reason: 'already_reprocessed' },
      ]),
    );
    expect(body.errors).toHaveLength(3);
    expect(
      (await db().selectFrom('dlq_events').select('status').where('id', '=', foreign).executeTakeFirstOrThrow()).status,
    ).toBe('dead');
  });

  it("on a global destination resends only the caller's organizations' events, all of them with platform scope", async () => {
    await dead(destGlobal, orgA, intA);
    await dead(destGlobal, orgA, intA, { stream: 'audit' });
    const theirs = await dead(destGlobal, orgB, intB);
    const a = await call(adminA, 'POST', url(destGlobal), { all: true });
    expect(a.statusCode, a.body).toBe(200);
    expect(a.json()).toMatchObject({ reprocessed: 2, batches: 2, remaining: 0, errors: [] });
    expect(
      (await db().selectFrom('dlq_events').select('status').where('id', '=', theirs).executeTakeFirstOrThrow()).status,
    ).toBe('dead');
    const outbox = await db()
      .selectFrom('delivery_batches')
      .select(['organization_id', 'stream'])
      .orderBy('stream')
      .execute();
    expect(outbox).toEqual([
      { organization_id: orgA, stream: 'audit' },
      { organization_id: orgA, stream: 'events' },
    ]);
    // An organization administrator's entry is filed under the organization.
    const audit = await db()
      .selectFrom('audit_log')
      .select('organization_id')
      .where('operation_id', '=', 'destinations.dlq_reprocess')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    expect(audit.organization_id).toBe(orgA);

    const r = await call(root, 'POST', url(destGlobal), { all: true });
    expect(r.json()).toMatchObject({ reprocessed: 1, remaining: 0 });
    expect(
      await db().selectFrom('delivery_batches').select('organization_id').where('organization_id', '=', orgB).execute(),
    ).toHaveLength(1);
    // Platform scope by id reaches every organization too; an organization admin's by id does not.
    const more = await dead(destGlobal, orgB, intB);
    expect((await call(adminA, 'POST', url(destGlobal), { ids: [more] })).json()).toMatchObject({
      reprocessed: 0,
      errors: [{ id: more, reason: 'not_found' }],
    });
    expect((await call(root, 'POST', url(destGlobal), { ids: [more] })).json()).toMatchObject({ reprocessed: 1 });
  });

  it("filters all by error kind and cuts the outbox rows to the destination's batch size", async () => {
    const small = await destination(orgA, `small-${newId()}`, { delivery: { max_events: 2 }, enabled: false });
    for (let i = 0; i < 5; i++) await dead(small, orgA, intA, { errorKind: 'retries_exhausted' });
    await dead(small, orgA, intA, { errorKind: 'rejected' });
    const res = await call(adminA, 'POST', url(small), { all: true, error_kind: 'retries_exhausted' });
    expect(res.statusCode, res.body).toBe(200);
    // A disabled destination keeps them in its outbox; the answer says so.
    expect(res.json()).toEqual({ reprocessed: 5, batches: 3, errors: [], remaining: 0, destination_enabled: false });
    const sizes = (
      await db().selectFrom('delivery_batches').select('event_count').where('destination_id', '=', small).execute()
    ).map((b) => b.event_count);
    expect(sizes.sort()).toEqual([1, 2, 2]);
    expect(
      (
        await db()
          .selectFrom('dlq_events')
          .select('status')
          .where('destination_id', '=', small)
          .where('error_kind', '=', 'rejected')
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe('dead');
  });

  it('keeps the ledger balanced: dead-lettered events become pending', async () => {
    const day = new Date().toISOString().slice(0, 10);
    const key = { organization_id: orgA, integration_id: intA, stream: 'events', day };
    await db()
      .insertInto('stream_counters')
      .values({ ...key, events_in: 3, bytes_in: 300, normalized: 3, flagged: 0, quarantined: 0 })
      .execute();
    await db()
      .insertInto('ledger')
      .values([
        { ...key, outcome: 'routed', count: 3 },
        { ...key, outcome: 'copies', destination_id: destA, reason: destA, count: 3 },
        { ...key, outcome: 'delivered', destination_id: destA, count: 1 },
        { ...key, outcome: 'dead_lettered', destination_id: destA, reason: 'rejected', count: 2 },
      ])
      .execute();
    const ids = [await dead(destA, orgA, intA), await dead(destA, orgA, intA)];
    const balance = async () =>
      (await call(adminA, 'GET', '/api/collectors/destinations/health')).json<{ ledger: { totals: Json } }>().ledger
        .totals;
    expect(await balance()).toMatchObject({ events_in: 3, delivered: 1, dead_lettered: 2, pending: 0, unaccounted: 0 });
    expect((await call(adminA, 'POST', url(destA), { ids })).statusCode).toBe(200);
    expect(await balance()).toMatchObject({
      events_in: 3,
      delivered: 1,
      dead_lettered: 0,
      dlq_reprocessed: 2,
      pending: 2,
      unaccounted: 0,
    });
  });

  it('refuses an ambiguous selection with 422, a viewer with 403 and a foreign destination with 404', async () => {
    const id = await dead(destA, orgA, intA);
    for (const body of [
      {},
      { ids: [id], all: true },
      { all: false },
      { ids: [id], error_kind: 'rejected' },
      { ids: [] },
      { ids: ['not-a-uuid'] },
      { all: true, extra: 1 },
    ]) {
      const res = await call(adminA, 'POST', url(destA), body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(typeof res.json().detail).toBe('string');
    }
    expect(
      (await call(adminA, 'POST', url(destA), { ids: Array.from({ length: 501 }, () => newId()) })).statusCode,
    ).toBe(422);
    expect((await call(viewerA, 'POST', url(destA), { all: true })).statusCode).toBe(403);
    expect((await call(adminA, 'POST', url(destB), { all: true })).statusCode).toBe(404);
    expect(
      (await db().selectFrom('dlq_events').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status,
    ).toBe('dead');
  });
});
