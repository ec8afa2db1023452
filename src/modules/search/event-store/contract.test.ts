// The event store's contract (port.ts): every adapter passes the same suite. DuckDB (the
// embedded default, in memory here) and PostgreSQL (on the test database: PGlite, or PostgreSQL
// with DATABASE_URL) store a batch's copies once even when the batch's transaction fails and
// runs again, keep organizations apart, answer rows, counts, aggregations and replay pages the
// same way, count retention from receipt (an old event received now stays; one received before
// the retention goes, counted by organization), keep within a size budget (the events received
// first go, counted the same on every engine) and delete an organization's events in chunks.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { inTransaction } from '../../../platform/db/ambient.js';
import type { StoredCopies } from '../../../pipeline/delivery/engine-port.js';
import { storedCopies } from '../../../pipeline/delivery/routing-write.js';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/db.js';
import { createDuckDbEventStore } from './duckdb/store.js';
import type { EventStore, StoreScope } from './port.js';
import { createPostgresEventStore } from './postgres.js';

const DAY = 86_400_000;
const NOW = Date.now();

interface Adapter {
  store: EventStore;
  /** Runs the pass's write of one batch: prepare, then write inside a transaction that fails when `fail`. */
  pass(batchId: string, stored: StoredCopies[], fail?: boolean): Promise<void>;
  close(): Promise<void>;
}

let db: TestDatabase;

/** The pass's write of one batch: prepare, then write inside a transaction that fails when `fail` (the batch then runs again). */
function adapter(store: EventStore, close: () => Promise<void>): Adapter {
  return {
    store,
    async pass(batchId, stored, fail = false) {
      await store.prepare(batchId, stored);
      await inTransaction(db.database.db, async () => {
        await store.write(stored);
        if (fail) throw new Error('the batch transaction failed');
      }).catch((err: unknown) => {
        if (!fail) throw err;
      });
    },
    close,
  };
}

const postgresAdapter = async () =>
  adapter(createPostgresEventStore(db.database.db, { statementTimeoutMs: 10_000 }), async () => {});
async function duckdbAdapter(): Promise<Adapter> {
  const store = await createDuckDbEventStore({
    path: ':memory:',
    statementTimeoutMs: 10_000,
    memoryLimit: '128MB',
    threads: 1,
  });
  return adapter(store, () => store.close());
}

interface Made {
  id: string;
  ocsf: Record<string, unknown>;
  received: number;
}

function batch(
  org: number,
  integration: number,
  events: { ocsf: Record<string, unknown>; received?: number }[],
): { stored: StoredCopies; made: Made[] } {
  const made = events.map((e) => ({ id: newId(), ocsf: e.ocsf, received: e.received ?? NOW }));
  const stored = storedCopies(
    'dest',
    { organization_id: org, integration_id: integration, stream: 'logs' },
    made.map((m) => JSON.stringify(m.ocsf)),
    (i) => made[i]!,
  );
  return { stored, made };
}

const login = (i: number, extra: Record<string, unknown> = {}) => ({
  class_uid: 3002,
  category_uid: 3,
  activity_id: 1,
  severity_id: 1 + (i % 3),
  time: NOW - i * 60_000,
  src_endpoint: { ip: `10.0.0.${i % 4}` },
  user: { name: `user${i % 5}` },
  actor: { user: { name: i % 2 ? 'alice' : 'bob' } },
  observables: [{ value: `10.0.0.${i % 4}` }, { value: `user${i % 5}` }],
  unmapped: { code: i % 2 ? '4624' : 4625, n: i },
  ...extra,
});

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.close());

const adapters: [string, () => Promise<Adapter>][] = [
  ['duckdb', duckdbAdapter],
  ['postgres', postgresAdapter],
];

describe.each(adapters)('event store contract (%s)', (name, make) => {
  let a: Adapter;
  // Each adapter gets organizations of its own (the PostgreSQL one shares the test database).
  const base = name === 'duckdb' ? 100 : 200;
  const orgA = base + 1;
  const orgB = base + 2;
  const scope = (over: Partial<StoreScope> = {}): StoreScope => ({
    organizationIds: [orgA],
    from: new Date(NOW - DAY),
    to: new Date(NOW + 1),
    condition: null,
    ...over,
  });
  let first: { stored: StoredCopies; made: Made[] };

  beforeAll(async () => {
    a = await make();
    first = batch(
      orgA,
      7,
      Array.from({ length: 20 }, (_, i) => ({ ocsf: login(i) })),
    );
    const other = batch(
      orgB,
      8,
      Array.from({ length: 5 }, (_, i) => ({ ocsf: login(i, { class_uid: 4001, category_uid: 4 }) })),
    );
    const batchId = newId();
    // The batch's transaction fails once and runs again: its copies are stored once.
    await a.pass(batchId, [first.stored], true);
    await a.pass(batchId, [first.stored]);
    await a.pass(newId(), [other.stored]);
  });
  afterAll(async () => a?.close());

  it('stores a batch once, though its transaction failed and ran again, and keeps organizations apart', async () => {
    expect(await a.store.count(scope())).toBe(20);
    expect(await a.store.count(scope({ organizationIds: [orgB] }))).toBe(5);
    expect(await a.store.count(scope({ organizationIds: [orgA, orgB] }))).toBe(25);
    expect(await a.store.count(scope({ organizationIds: [] }))).toBe(0);
  });

  it('answers rows newest first with the whole event, or the asked fields, within the time range', async () => {
    const rows = await a.store.rows(scope({ from: new Date(NOW - 5 * 60_000 + 1) }), {
      fields: null,
      sort: [{ field: 'time', order: 'desc' }],
      limit: 100,
    });
    expect(rows.map((r) => r.event_id)).toEqual(first.made.slice(0, 5).map((m) => m.id));
    expect(rows[0]).toMatchObject({
      organization_id: orgA,
      integration_id: 7,
      stream: 'logs',
      time: new Date(NOW).toISOString(),
    });
    expect(rows[0]!.event).toEqual(first.made[0]!.ocsf);
    const picked = await a.store.rows(scope(), {
      fields: ['src_endpoint.ip', 'unmapped.code', 'user.name', 'missing.field'],
      sort: [{ field: 'unmapped.n', order: 'asc' }],
      limit: 2,
      offset: 1,
    });
    expect(picked.map((r) => r.fields)).toEqual([
      { 'src_endpoint.ip': '10.0.0.1', 'unmapped.code': '4624', 'user.name': 'user1', 'missing.field': null },
      { 'src_endpoint.ip': '10.0.0.2', 'unmapped.code': 4625, 'user.name': 'user2', 'missing.field': null },
    ]);
  });

  it('filters with the condition language on searched columns, event paths and [*] paths', async () => {
    expect(await a.store.count(scope({ condition: { field: 'src_endpoint.ip', op: 'eq', value: '10.0.0.1' } }))).toBe(
      5,
    );
    expect(
      await a.store.count(scope({ condition: { field: 'src_endpoint.ip', op: 'cidr', value: '10.0.0.0/31' } })),
    ).toBe(10);
    expect(await a.store.count(scope({ condition: { field: 'unmapped.code', op: 'eq', value: 4625 } }))).toBe(10);
    expect(
      await a.store.count(
        scope({
          condition: {
            all: [
              { field: 'observables[*].value', op: 'eq', value: 'user3' },
              { field: 'actor.user.name', op: 'ne', value: 'alice' },
            ],
          },
        }),
      ),
    ).toBe(2);
    expect(await a.store.count(scope({ condition: { field: 'severity_id', op: 'gte', value: 3 } }))).toBe(6);
  });

  it('counts by fields, takes the top values (a [*] path counts every element) and buckets a histogram with its zeros', async () => {
    expect(await a.store.countBy(scope({ organizationIds: [orgA, orgB] }), ['class_uid'], 10)).toEqual([
      { key: { class_uid: 3002 }, count: 20 },
      { key: { class_uid: 4001 }, count: 5 },
    ]);
    expect(await a.store.top(scope(), 'actor.user.name', 1)).toEqual([{ value: 'alice', count: 10 }]);
    expect(await a.store.top(scope(), 'observables[*].value', 3)).toEqual([
      { value: '10.0.0.0', count: 5 },
      { value: '10.0.0.1', count: 5 },
      { value: '10.0.0.2', count: 5 },
    ]);
    const hist = await a.store.histogram(
      scope({ from: new Date(NOW - 10 * 60_000 + 1), to: new Date(NOW + 1) }),
      5 * 60_000,
    );
    expect(hist.map((b) => b.count)).toEqual([5, 5]);
    const sparse = await a.store.histogram(
      scope({ from: new Date(NOW - 3 * 3_600_000), to: new Date(NOW - 3_600_000) }),
      3_600_000,
    );
    expect(sparse).toEqual([
      { start: new Date(NOW - 3 * 3_600_000).toISOString(), count: 0 },
      { start: new Date(NOW - 2 * 3_600_000).toISOString(), count: 0 },
    ]);
  });

  it('pages through the matching events in (time, id) order with their stored texts (replay)', async () => {
    const seen: string[] = [];
    let after: { time: Date; id: string } | null = null;
    for (;;) {
      const page = await a.store.page(scope(), after, 6);
      if (page.length === 0) break;
      for (const e of page) {
        expect(JSON.parse(e.line)).toEqual(first.made.find((m) => m.id === e.event_id)!.ocsf);
        seen.push(e.event_id);
      }
      const last = page[page.length - 1]!;
      after = { time: last.time, id: last.event_id };
    }
    expect(seen).toEqual([...first.made].reverse().map((m) => m.id));
  });

  it('replaces events by id on the lane path, so a resent batch is not stored twice', async () => {
    const c = batch(orgB, 9, [{ ocsf: login(50) }, { ocsf: login(51) }]);
    await a.store.replace(c.stored);
    await a.store.replace(c.stored);
    expect(
      await a.store.count(
        scope({ organizationIds: [orgB], condition: { field: 'envelope.integration_id', op: 'eq', value: 9 } }),
      ),
    ).toBe(2);
  });

  it('counts retention from receipt: an old event received now stays, one received before the retention goes, counted by organization', async () => {
    const org = base + 3;
    const old = batch(org, 7, [
      // An event dated 30 days back, received now (a backfill): kept.
      { ocsf: login(1, { time: NOW - 30 * DAY }) },
      // Received 10 days ago: past a 7-day retention.
      { ocsf: login(2, { time: NOW - 10 * DAY }), received: NOW - 10 * DAY },
      { ocsf: login(3, { time: NOW - 10 * DAY - 1 }), received: NOW - 10 * DAY },
    ]);
    await a.pass(newId(), [old.stored]);
    const everything = {
      organizationIds: [org],
      from: new Date(NOW - 400 * DAY),
      to: new Date(NOW + 1),
      condition: null,
    };
    expect(await a.store.count(everything)).toBe(3);
    const retentions = new Map([100, 200].flatMap((b) => [1, 2, 3, 5].map((k) => [b + k, 7] as [number, number])));
    const out = await a.store.retain(new Date(NOW), retentions);
    expect(out.removed.get(org)).toBe(2);
    expect(out.removed.get(orgA)).toBeUndefined();
    const left = await a.store.rows(everything, { fields: null, sort: [], limit: 10 });
    expect(left.map((r) => r.event_id)).toEqual([old.made[0]!.id]);
    expect(await a.store.count(scope())).toBe(20);
  });

  it('keeps the store within a size budget: the events received first go, across organizations, counted by organization', async () => {
    const orgC = base + 6;
    const orgD = base + 7;
    // Received 3 days ago and on, alternating between two organizations (the oldest receipts in
    // the store), of different lengths; within every retention.
    const at = (k: number) => NOW - 3 * DAY + k * 60_000;
    const made = (org: number, ks: number[]) =>
      batch(
        org,
        7,
        ks.map((k) => ({ ocsf: login(k, { time: at(k), pad: 'é'.repeat(10 * (k + 1)) }), received: at(k) })),
      );
    const c = made(orgC, [0, 2, 4]);
    const d = made(orgD, [1, 3, 5]);
    const before = await a.store.size();
    await a.pass(newId(), [c.stored, d.stored]);
    // What the store counts: each event's JSON text in UTF-8 bytes, as written.
    const bytes = (m: Made) => Buffer.byteLength(JSON.stringify(m.ocsf));
    const size = await a.store.size();
    expect(size).toBe(before + c.stored.bytes + d.stored.bytes);
    const received = [c.made[0]!, d.made[0]!, c.made[1]!, d.made[1]!, c.made[2]!, d.made[2]!];
    // Two of the oldest leave it a byte over: three go.
    const budget = size - bytes(received[0]!) - bytes(received[1]!) - 1;
    const out = await a.store.trim(budget);
    expect(out.removed).toEqual(
      new Map([
        [orgC, 2],
        [orgD, 1],
      ]),
    );
    expect(out.bytes).toBe(bytes(received[0]!) + bytes(received[1]!) + bytes(received[2]!));
    expect(await a.store.size()).toBe(size - out.bytes);
    expect(await a.store.size()).toBeLessThanOrEqual(budget);
    // The rest are still searchable; under the budget, nothing more goes.
    const everything = scope({ organizationIds: [orgC, orgD], from: new Date(NOW - 4 * DAY) });
    const left = await a.store.rows(everything, { fields: null, sort: [{ field: 'time', order: 'asc' }], limit: 10 });
    expect(left.map((r) => r.event_id)).toEqual(received.slice(3).map((m) => m.id));
    expect(left[0]!.event).toEqual(received[3]!.ocsf);
    expect(
      await a.store.count({ ...everything, condition: { field: 'envelope.organization_id', op: 'eq', value: orgD } }),
    ).toBe(2);
    expect((await a.store.trim(budget)).removed.size).toBe(0);
    expect(await a.store.count(scope())).toBe(20);
    // Still the oldest receipts: a budget short by their bytes takes the three left of both organizations, nothing else.
    await a.store.trim((await a.store.size()) - bytes(received[3]!) - bytes(received[4]!) - bytes(received[5]!));
    expect(await a.store.count(everything)).toBe(0);
    expect(await a.store.count(scope())).toBe(20);
  });

  it("deletes an organization's events in chunks of the asked size", async () => {
    const org = base + 5;
    await a.pass(newId(), [
      batch(
        org,
        7,
        Array.from({ length: 5 }, (_, i) => ({ ocsf: login(i) })),
      ).stored,
    ]);
    const counts: number[] = [];
    let n: number;
    do {
      n = await a.store.deleteOrganization(org, 2);
      counts.push(n);
    } while (n === 2);
    expect(counts).toEqual([2, 2, 1]);
    expect(await a.store.count(scope({ organizationIds: [org] }))).toBe(0);
  });

  it("exports a time range as Parquet in Security Lake's layout, every attribute a column an independent reader reads", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), `weir-export-${name}-`));
    try {
      const out = await a.store.exportParquet({
        organizationIds: [orgA, orgB],
        from: new Date(NOW - DAY),
        to: new Date(NOW + 1),
        dir,
        region: 'eu-west-1',
        accountId: '123456789012',
      });
      expect(out.rows).toBe(20 + 5 + 2);
      const day = new Date(NOW).toISOString().slice(0, 10).replaceAll('-', '');
      const layout = new Set(out.files.map((f) => path.dirname(f)));
      expect([...layout].sort()).toEqual(
        expect.arrayContaining([
          `ext/weir-authentication/region=eu-west-1/accountId=123456789012/eventDay=${day}`,
          `ext/weir-network-activity/region=eu-west-1/accountId=123456789012/eventDay=${day}`,
        ]),
      );
      const authFiles = out.files.filter((f) => f.startsWith('ext/weir-authentication/'));
      const rows: Record<string, unknown>[] = [];
      for (const f of authFiles) {
        const buf = await readFile(path.join(dir, f));
        const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
        const names = parquetSchema(parquetMetadata(file)).children.map((c) => c.element.name);
        expect(names).toEqual(
          expect.arrayContaining(['class_uid', 'time', 'actor', 'src_endpoint', 'observables', 'unmapped']),
        );
        rows.push(...((await parquetReadObjects({ file })) as Record<string, unknown>[]));
      }
      // Rows of one class only, sorted by time, nested objects as structs (not JSON text).
      expect(rows).toHaveLength(22);
      expect(rows.every((r) => Number(r.class_uid) === 3002)).toBe(true);
      const times = rows.map((r) => Number(r.time));
      expect(times).toEqual([...times].sort((x, y) => x - y));
      const newest = rows[rows.length - 1]!;
      expect(newest.actor).toEqual({ user: { name: 'bob' } });
      expect(newest.src_endpoint).toEqual({ ip: '10.0.0.0' });
      expect(newest.observables).toEqual([{ value: '10.0.0.0' }, { value: 'user0' }]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('can be read and written (the destination test)', async () => {
    await expect(a.store.check()).resolves.toBeUndefined();
  });
});
