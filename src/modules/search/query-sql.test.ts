// The SQL form of the condition language means what the in-memory compiler means: every
// operator, on columns and on jsonb paths (plain, indexed and [*]), positive and negative, is
// run both ways over the same events and must select the same ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../core/ids.js';
import { inTransaction } from '../../platform/db/ambient.js';
import type { Condition } from '../../pipeline/conditions/types.js';
import { storedCopies } from '../../pipeline/delivery/routing-write.js';
import type { NormalizedRecord } from '../../pipeline/envelope.js';
import { compileRecordCondition } from '../../pipeline/route/conditions.js';
import { CONDITION_EVENTS, conditionLeaves } from '../../../test/support/condition-cases.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.js';
import { createEventsStore } from './event-store/postgres-table.js';
import { createStoreQueries, type StoreQueries } from './store-query.js';

let t: TestDatabase;
let queries: StoreQueries;
const NOW = Date.now();
const EVENTS = CONDITION_EVENTS;
const records: NormalizedRecord[] = EVENTS.map((ocsf, i) => ({
  id: newId(),
  organization_id: 1,
  integration_id: i % 2 ? 9 : 8,
  stream: i % 2 ? 'b' : 'a',
  received_at: new Date(NOW - i * 1000).toISOString(),
  mapping_version_id: 'v',
  valid: true,
  ocsf: { ...ocsf, time: NOW - i * 1000 },
}));

beforeAll(async () => {
  t = await createTestDatabase();
  const store = createEventsStore(t.database.db);
  for (const integration of [8, 9]) {
    const mine = records.filter((r) => r.integration_id === integration);
    const stored = storedCopies(
      'd',
      { organization_id: 1, integration_id: integration, stream: mine[0]!.stream },
      mine.map((r) => JSON.stringify(r.ocsf)),
      (i) => ({ id: mine[i]!.id, received: Date.parse(mine[i]!.received_at), ocsf: mine[i]!.ocsf }),
    );
    await store.prepare([stored]);
    await inTransaction(t.database.db, () => store.write([stored]));
  }
  queries = createStoreQueries(t.database.db, 10_000);
});
afterAll(async () => t?.close());

const scope = (condition: Condition | null) => ({
  organizationIds: [1],
  from: new Date(NOW - 3_600_000),
  to: new Date(NOW + 1),
  condition,
});

async function sqlSelects(cond: Condition): Promise<string[]> {
  const rows = await queries.rows(scope(cond), { fields: [], sort: [{ field: 'time', order: 'asc' }], limit: 100 });
  return rows.map((r) => r.event_id).sort();
}

function memorySelects(cond: Condition): string[] {
  const problems: unknown[] = [];
  const pred = compileRecordCondition(cond, problems as never, 'c', 'any')!;
  expect(problems).toEqual([]);
  return records
    .filter((r) => pred(r))
    .map((r) => r.id)
    .sort();
}

const LEAVES: Condition[] = conditionLeaves(records, NOW);

describe('conditions in SQL', () => {
  for (const leaf of LEAVES) {
    it(`${JSON.stringify(leaf)} selects the same events as in memory, and so does its negation`, async () => {
      expect(await sqlSelects(leaf)).toEqual(memorySelects(leaf));
      const l = leaf as { op: string };
      const neg = { eq: 'ne', in: 'not_in', exists: 'not_exists' }[l.op];
      const negation: Condition = neg ? ({ ...(leaf as object), op: neg } as Condition) : { not: leaf };
      expect(await sqlSelects(negation)).toEqual(memorySelects(negation));
    });
  }

  it('combines with all, any and not', async () => {
    const cond: Condition = {
      any: [{ all: [LEAVES[0]!, { not: LEAVES[13]! }] }, { field: 'count', op: 'gt', value: 6 }],
    };
    expect(await sqlSelects(cond)).toEqual(memorySelects(cond));
  });

  it('keeps to the organizations and the time range asked', async () => {
    expect(await queries.count({ ...scope(null), organizationIds: [2] })).toBe(0);
    expect(await queries.count({ ...scope(null), from: new Date(NOW - 2500) })).toBe(3);
    expect(await queries.count(scope(null))).toBe(5);
  });

  it('aggregates: count by, top (with [*]) and a histogram with empty buckets', async () => {
    expect(await queries.countBy(scope(null), ['class_uid', 'status'], 10)).toEqual([
      { key: { class_uid: 4001, status: null }, count: 2 },
      { key: { class_uid: 3002, status: 'Failure' }, count: 1 },
      { key: { class_uid: 3002, status: 'Success' }, count: 1 },
      { key: { class_uid: 6003, status: 'Success' }, count: 1 },
    ]);
    expect(await queries.top(scope(null), 'status', 1)).toEqual([{ value: 'Success', count: 2 }]);
    expect(await queries.top(scope(null), 'observables[*].value', 2)).toEqual([
      { value: '10.1.2.3', count: 1 },
      { value: 'admin', count: 1 },
    ]);
    const h = await queries.histogram({ ...scope(null), from: new Date(NOW - 10_000), to: new Date(NOW + 1) }, 5_000);
    expect(h.map((b) => b.count).reduce((a, b) => a + b, 0)).toBe(5);
    expect(h).toHaveLength(3);
  });

  it('projects fields and sorts by a jsonb field (numbers before text, as jsonb orders them)', async () => {
    const rows = await queries.rows(scope(null), {
      fields: ['actor.user.name', 'count'],
      sort: [{ field: 'count', order: 'desc' }],
      limit: 3,
    });
    expect(rows.map((r) => r.fields)).toEqual([
      { 'actor.user.name': 'Bob', count: 15 },
      { 'actor.user.name': 'admin', count: 5 },
      { 'actor.user.name': null, count: 0 },
    ]);
  });
});
