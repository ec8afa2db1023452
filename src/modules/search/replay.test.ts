// Replay, retention and deletion of the event store: stored events matching a query go again
// to a file destination (outbox rows of kind replay, counted `replayed` in the ledger, which
// balances before and after the lane delivers them); the permission and scope rules; retention
// drops what an organization no longer keeps; deleting an organization's data clears its events,
// and ends `partial` when the store cannot be reached (PostgreSQL: a lock held elsewhere).
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { usingPostgres } from '../../../test/support/db.js';
import { createPrincipal, injectAs, type Method, type Principal } from '../../../test/support/identity.js';
import { loginDocument } from '../../../test/support/mappings.js';
import { createIntegration, ingestBatch, publishMapping, runNormalize } from '../../../test/support/normalization.js';
import { inTransaction } from '../../platform/db/ambient.js';
import type { Consumer } from '../../platform/queue/port.js';
import { storedCopies } from '../../pipeline/delivery/routing-write.js';
import { startConsumers } from '../../roles/jobs.js';
import { ORGANIZATIONS_QUEUE } from '../organizations/jobs.js';
import { SEARCH_QUEUE } from './runs.js';
import { ledgerRows } from '../../../test/support/ledger.js';

type Json = Record<string, unknown>;
const DAY = 86_400_000;
let t: TestApp;
let root: string;
let platform: Principal;
let org: number;
let other: number;
let admin: Principal;
let operator: Principal;
let otherAdmin: Principal;
let consumers: Consumer[] = [];

const call = (method: string, url: string, who: Principal, payload?: unknown) =>
  injectAs(t, who, method as Method, url, payload);

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function countEvents(organizationId: number): Promise<number> {
  return t.container.eventStore.count({
    organizationIds: [organizationId],
    from: new Date(0),
    to: new Date(Date.now() + 2 * DAY),
    condition: null,
  });
}

async function newOrg(name: string): Promise<number> {
  const res = await call('POST', '/api/organizations/', platform, { name });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: number }>().id;
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'weir-replay-'));
  t = await createTestApp({
    env: {
      WEIR_TOKEN_RATE_LIMIT: '1000000',
      WEIR_FILE_SINK_ROOT: root,
      WEIR_DISPATCH_POLL_MS: '50',
      WEIR_MAPPING_REFRESH_MS: '100',
    },
  });
  platform = await createPrincipal(t, { role: 'admin', organizationId: null });
  org = await newOrg('Replay A');
  other = await newOrg('Replay B');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  operator = await createPrincipal(t, { role: 'operator', organizationId: org });
  otherAdmin = await createPrincipal(t, { role: 'admin', organizationId: other });
  const integration = await createIntegration(t, org);
  await publishMapping(t, org, 'custom', 'auth', loginDocument());
  await new Promise((r) => setTimeout(r, 300));
  const ts = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
  await runNormalize(
    t,
    ingestBatch(
      org,
      integration,
      'auth',
      ['alice', 'bob', 'alice'].map((name, i) => ({
        type: 'login',
        ts: ts(5 + i),
        user: { name },
        client: { ip: '10.0.0.1' },
        host: 'h',
      })),
    ),
  );
  consumers = startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => j.queue === SEARCH_QUEUE || j.queue === ORGANIZATIONS_QUEUE),
    t.container.logger,
  );
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  await rm(root, { recursive: true, force: true });
});

describe('replay', () => {
  let fileDest: string;
  beforeAll(async () => {
    const res = await call('POST', '/api/collectors/destinations', admin, {
      name: 'files',
      type: 'file',
      organization_id: org,
      config: { path: 'replayed', idle_seconds: 1 },
    });
    expect(res.statusCode, res.body).toBe(201);
    fileDest = res.json<{ id: string }>().id;
  });

  it('needs user.manage, a destination of the organization (404 otherwise), and an enabled one', async () => {
    const body = { destination_id: fileDest, time: { last: '1h' } };
    expect((await call('POST', '/api/search/replay', operator, body)).statusCode).toBe(403);
    expect((await call('POST', '/api/search/replay', otherAdmin, body)).statusCode).toBe(404);
    const disabled = (
      await call('POST', '/api/collectors/destinations', admin, {
        name: 'off',
        type: 'file',
        organization_id: org,
        config: { path: 'off' },
        enabled: false,
      })
    ).json<{ id: string }>().id;
    expect(
      (await call('POST', '/api/search/replay', admin, { ...body, destination_id: disabled })).json(),
    ).toMatchObject({ error: { code: 'search.destination_unusable' } });
  });

  it("puts the matching stored events in the destination's outbox, counted replayed; the lane delivers them; the ledger balances throughout", async () => {
    const res = await call('POST', '/api/search/replay', admin, {
      destination_id: fileDest,
      time: { last: '1h' },
      query: 'user.name = "alice"',
    });
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json<{ id: string }>().id;
    const done = await until('the replay', async () => {
      const r = (await call('GET', `/api/search/replay/${id}`, admin)).json<Json>();
      return r.state === 'completed' ? r : undefined;
    });
    expect(done).toMatchObject({ total: 2, replayed: 2, progress: 1, destination_id: fileDest });
    const outbox = await t.container.database.db
      .selectFrom('delivery_batches')
      .select(['kind', 'event_count'])
      .where('destination_id', '=', fileDest)
      .execute();
    expect(outbox).toEqual([{ kind: 'replay', event_count: 2 }]);
    const [before] = await ledgerRows(t, { organization_id: org });
    expect(before).toMatchObject({ replayed: 2, pending: 2, unaccounted: 0 });

    const loop = t.container.loops.find((l) => l.name === 'delivery')!.start();
    try {
      await until('the file', async () => {
        const files = (await readdir(path.join(root, `org-${org}`, 'replayed')).catch(() => [])).filter((f) =>
          f.endsWith('.ndjson'),
        );
        return files.length > 0 ? files : undefined;
      });
    } finally {
      await loop.stop();
    }
    const dir = path.join(root, `org-${org}`, 'replayed');
    const lines = (
      await Promise.all(
        (await readdir(dir)).filter((f) => f.endsWith('.ndjson')).map((f) => readFile(path.join(dir, f), 'utf8')),
      )
    )
      .join('')
      .trim()
      .split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { user: { name: string } }).user.name)).toEqual(['alice', 'alice']);
    const [after] = await ledgerRows(t, { organization_id: org });
    expect(after).toMatchObject({ replayed: 2, pending: 0, unaccounted: 0 });
    expect(after!.delivered).toBe(before!.delivered + 2);
    // The ledger users read (destinations health) balances after a replay too.
    const health = (await call('GET', '/api/collectors/destinations/health', admin)).json<{
      ledger: { totals: Json; rows: Json[] };
    }>();
    expect(health.ledger.totals).toMatchObject({
      replayed: 2,
      delivered: after!.delivered,
      pending: 0,
      unaccounted: 0,
    });
    expect(health.ledger.rows.every((r) => r.unaccounted === 0)).toBe(true);
  });

  it("cancels a queued replay, and keeps another organization's out of reach", async () => {
    await Promise.all(consumers.map((c) => c.close()));
    const id = (
      await call('POST', '/api/search/replay', admin, { destination_id: fileDest, time: { last: '1h' } })
    ).json<{ id: string }>().id;
    expect((await call('GET', `/api/search/replay/${id}`, otherAdmin)).statusCode).toBe(404);
    expect((await call('POST', `/api/search/replay/${id}/cancel`, admin)).json()).toMatchObject({ state: 'cancelled' });
    consumers = startConsumers(
      t.container.queue,
      t.container.jobs.filter((j) => j.queue === SEARCH_QUEUE || j.queue === ORGANIZATIONS_QUEUE),
      t.container.logger,
    );
  });
});

describe('retention and deletion', () => {
  /** Stores events of the given times, received at `received`, through the pass's path. */
  async function storeAt(organizationId: number, times: number[], received = Date.now()) {
    const ids = times.map(() => crypto.randomUUID());
    const ocsf = times.map((time) => ({ class_uid: 3002, time }));
    const copies = storedCopies(
      'd',
      { organization_id: organizationId, integration_id: 1, stream: 's' },
      ocsf.map((e) => JSON.stringify(e)),
      (i) => ({ id: ids[i]!, received, ocsf: ocsf[i]! }),
    );
    const store = t.container.eventStore;
    await store.prepare(crypto.randomUUID(), [copies]);
    await inTransaction(t.container.database.db, () => store.write([copies]));
  }

  it('removes what an organization no longer keeps, counted from receipt, and says how many', async () => {
    const now = Date.now();
    // Received 30 days ago (past every retention here: 7 and 2 days).
    await storeAt(org, [now - 30 * DAY], now - 30 * DAY);
    // A backfill: dated 30 days back, received now. Kept.
    await storeAt(org, [now - 30 * DAY + 5]);
    await storeAt(other, [now - 3 * DAY + 1000], now - 3 * DAY + 1000);
    await storeAt(other, [now + 1000]);
    expect(
      (await call('PUT', `/api/organizations/${other}/retention`, platform, { retention_days: 2 })).statusCode,
    ).toBe(200);
    const before = { org: await countEvents(org), other: await countEvents(other) };
    await t.container.jobs.find((j) => j.queue === SEARCH_QUEUE)!.handlers['search.retention']!(
      { id: 'r', queue: SEARCH_QUEUE, name: 'search.retention', payload: {}, attempt: 1, maxAttempts: 1 },
      new AbortController().signal,
    );
    expect(await countEvents(org)).toBe(before.org - 1);
    expect(await countEvents(other)).toBe(before.other - 1);
    const times = (
      await t.container.eventStore.rows(
        { organizationIds: [org, other], from: new Date(0), to: new Date(now + DAY), condition: null },
        { fields: ['time'], sort: [], limit: 1000 },
      )
    ).map((r) => r.fields!.time);
    expect(times).not.toContain(now - 30 * DAY);
    expect(times).toContain(now - 30 * DAY + 5);
    expect(times).not.toContain(now - 3 * DAY + 1000);
    expect(times).toContain(now + 1000);
    // What retention removed is counted where the retention is read.
    for (const id of [org, other]) {
      const res = await call('GET', `/api/organizations/${id}/retention`, platform);
      expect(res.json()).toMatchObject({ event_store: { removed: 1, last_removed_at: expect.any(String) } });
    }
  });

  it("clears an organization's events with its data, the rest untouched", async () => {
    const before = await countEvents(other);
    const mine = await countEvents(org);
    expect(before).toBeGreaterThan(0);
    expect(mine).toBeGreaterThan(0);
    const res = await call('DELETE', `/api/organizations/${org}/data`, platform, { confirm: 'DELETE Replay A' });
    expect(res.statusCode).toBe(202);
    const deletion = res.json<{ deletion_id: string }>().deletion_id;
    const done = await until('the deletion', async () => {
      const row = await t.container.database.db
        .selectFrom('org_data_deletions')
        .select(['state', 'detail'])
        .where('id', '=', deletion)
        .executeTakeFirstOrThrow();
      return ['completed', 'partial', 'failed'].includes(row.state) ? row : undefined;
    });
    expect(done.state).toBe('completed');
    expect((done.detail as { steps: Json[] }).steps).toContainEqual({
      name: 'search_index',
      state: 'done',
      rows: mine,
    });
    expect(await countEvents(org)).toBe(0);
    expect(await countEvents(other)).toBe(before);
  });

  it.skipIf(!usingPostgres)(
    'ends partial when the store cannot be reached, the rest completing (PostgreSQL)',
    async () => {
      expect(await countEvents(other)).toBeGreaterThan(0);
      // Another session holds the event store: the step's lock wait runs out.
      const holder = new pg.Client({ connectionString: t.databaseUrl });
      await holder.connect();
      try {
        await holder.query('begin');
        await holder.query('lock table events in access exclusive mode');
        const res = await call('DELETE', `/api/organizations/${other}/data`, platform, { confirm: 'DELETE Replay B' });
        const deletion = res.json<{ deletion_id: string }>().deletion_id;
        const done = await until('the deletion', async () => {
          const row = await t.container.database.db
            .selectFrom('org_data_deletions')
            .select(['state', 'detail'])
            .where('id', '=', deletion)
            .executeTakeFirstOrThrow();
          return ['completed', 'partial', 'failed'].includes(row.state) ? row : undefined;
        });
        expect(done.state).toBe('partial');
        expect(done.detail).toMatchObject({ failed_steps: ['search_index'] });
        expect((done.detail as { steps: Json[] }).steps).toContainEqual(
          expect.objectContaining({ name: 'integrations', state: 'done' }),
        );
      } finally {
        await holder.query('rollback').catch(() => undefined);
        await holder.end();
      }
      expect(await countEvents(other)).toBeGreaterThan(0);
    },
  );
});
