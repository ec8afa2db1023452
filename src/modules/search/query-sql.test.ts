// The SQL form of the condition language means what the in-memory compiler means: every
// operator, on columns and on jsonb paths (plain, indexed and [*]), positive and negative, is
// run both ways over the same events and must select the same ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../core/ids.js';
import { inTransaction } from '../../platform/db/ambient.js';
import type { Condition } from '../../pipeline/conditions/types.js';
import { storedCopies } from '../../pipeline/delivery/router.js';
import type { NormalizedRecord } from '../../pipeline/envelope.js';
import { compileCondition } from '../../pipeline/route/conditions.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.js';
import { createEventsStore } from './events-store.js';
import { createStoreQueries, type StoreQueries } from './store-query.js';

let t: TestDatabase;
let queries: StoreQueries;
const NOW = Date.now();
const EVENTS: Record<string, unknown>[] = [
  { class_uid: 3002, severity_id: 1, status: 'Success', actor: { user: { name: 'admin', groups: [{ name: 'ops' }, { name: 'sec' }] } }, src_endpoint: { ip: '10.1.2.3' }, count: 5, message: 'User admin logged in', observables: [{ value: 'admin' }, { value: '10.1.2.3' }], unmapped: { code: '4624', tags: ['a', 'b'], n: null, empty: '', none: [] } },
  { class_uid: 3002, severity_id: 4, status: 'Failure', actor: { user: { name: 'Bob', groups: [] } }, src_endpoint: { ip: '192.168.7.1' }, count: 15, message: 'bad password for bob', observables: [{ value: 'bob' }], unmapped: { code: 4625, tags: 'a' } },
  { class_uid: 6003, severity_id: 2, status: 'Success', actor: { user: { name: 'svc-deploy' } }, src_endpoint: { ip: '::ffff:10.9.9.9' }, count: '7', message: 'API call', unmapped: { code: ' 12 ', tags: [['x'], 'y'] } },
  { class_uid: 4001, activity_id: 6, src_endpoint: { ip: '2001:db8::1' }, count: 0, message: 'conn', observables: [], unmapped: { code: 'abc' } },
  { class_uid: 4001, src_endpoint: { ip: 'not an ip' }, message: 'x', unmapped: { tags: [1, 2, 3] } },
];
const records: NormalizedRecord[] = EVENTS.map((ocsf, i) => ({ id: newId(), organization_id: 1, integration_id: i % 2 ? 9 : 8, stream: i % 2 ? 'b' : 'a', received_at: new Date(NOW - i * 1000).toISOString(), mapping_version_id: 'v', valid: true, ocsf: { ...ocsf, time: NOW - i * 1000 } }));

beforeAll(async () => {
  t = await createTestDatabase();
  const store = createEventsStore(t.database.db);
  for (const integration of [8, 9]) {
    const mine = records.filter((r) => r.integration_id === integration);
    const stored = storedCopies('d', { organization_id: 1, integration_id: integration, stream: mine[0]!.stream }, mine.map((r) => JSON.stringify(r.ocsf)), (i) => ({ id: mine[i]!.id, received: Date.parse(mine[i]!.received_at), ocsf: mine[i]!.ocsf }));
    await store.prepare([stored]);
    await inTransaction(t.database.db, () => store.write([stored]));
  }
  queries = createStoreQueries(t.database.db, 10_000);
});
afterAll(async () => t?.close());

const scope = (condition: Condition | null) => ({ organizationIds: [1], from: new Date(NOW - 3_600_000), to: new Date(NOW + 1), condition });

async function sqlSelects(cond: Condition): Promise<string[]> {
  const rows = await queries.rows(scope(cond), { fields: [], sort: [{ field: 'time', order: 'asc' }], limit: 100 });
  return rows.map((r) => r.event_id).sort();
}

function memorySelects(cond: Condition): string[] {
  const problems: unknown[] = [];
  const pred = compileCondition(cond, problems as never, 'c', 'any')!;
  expect(problems).toEqual([]);
  return records.filter((r) => pred(r)).map((r) => r.id).sort();
}

const LEAVES: Condition[] = [
  { field: 'class_uid', op: 'eq', value: 3002 },
  { field: 'class_uid', op: 'eq', value: '3002' },
  { field: 'class_uid', op: 'in', value: [4001, 6003, 'x'] },
  { field: 'class_uid', op: 'gte', value: 4001 },
  { field: 'activity_id', op: 'exists' },
  { field: 'severity_id', op: 'lt', value: 3 },
  { field: 'status', op: 'eq', value: 'Success' },
  { field: 'status', op: 'in', value: ['Failure', 1] },
  { field: 'actor.user.name', op: 'prefix', value: 'svc' },
  { field: 'actor.user.name', op: 'suffix', value: 'ob' },
  { field: 'message', op: 'contains', value: 'admin' },
  { field: 'actor.user.name', op: 'regex', value: '^[a-z]+$' },
  { field: 'actor.user.name', op: 'regex', value: '(?i)^BOB' },
  { field: 'src_endpoint.ip', op: 'cidr', value: '10.0.0.0/8' },
  { field: 'src_endpoint.ip', op: 'cidr', value: ['192.168.0.0/16', '2001:db8::/32'] },
  { field: 'count', op: 'gt', value: 6 },
  { field: 'count', op: 'lte', value: 5 },
  { field: 'unmapped.code', op: 'gt', value: 100 },
  { field: 'unmapped.code', op: 'eq', value: '4624' },
  { field: 'unmapped.code', op: 'eq', value: 4625 },
  { field: 'unmapped.tags', op: 'contains', value: 'a' },
  { field: 'unmapped.tags', op: 'contains', value: 2 },
  { field: 'unmapped.tags', op: 'exists' },
  { field: 'unmapped.n', op: 'exists' },
  { field: 'unmapped.empty', op: 'exists' },
  { field: 'unmapped.none', op: 'exists' },
  { field: 'unmapped.n', op: 'eq', value: null },
  { field: 'observables[*].value', op: 'eq', value: 'bob' },
  { field: 'observables[*].value', op: 'cidr', value: '10.0.0.0/8' },
  { field: 'observables[0].value', op: 'eq', value: 'admin' },
  { field: 'observables[-1].value', op: 'eq', value: '10.1.2.3' },
  { field: 'actor.user.groups[*].name', op: 'in', value: ['sec'] },
  { field: 'actor.user.groups[*].name', op: 'exists' },
  { field: 'unmapped.tags[*]', op: 'eq', value: 'x' },
  { field: 'envelope.stream', op: 'eq', value: 'b' },
  { field: 'envelope.integration_id', op: 'in', value: [9] },
  { field: 'envelope.stream', op: 'prefix', value: 'a' },
  { field: 'envelope.id', op: 'eq', value: records[2]!.id },
  { field: 'time', op: 'gte', value: NOW - 2500 },
  { field: 'nothing.here', op: 'exists' },
  // ignore_case (Sigma's default matching) on jsonb values, lists, [*] paths and columns.
  { field: 'status', op: 'eq', value: 'SUCCESS', ignore_case: true },
  { field: 'status', op: 'in', value: ['failure', 'x'], ignore_case: true },
  { field: 'actor.user.name', op: 'prefix', value: 'SVC', ignore_case: true },
  { field: 'actor.user.name', op: 'suffix', value: 'OB', ignore_case: true },
  { field: 'message', op: 'contains', value: 'BOB', ignore_case: true },
  { field: 'actor.user.name', op: 'regex', value: '^b.b$', ignore_case: true },
  { field: 'unmapped.tags', op: 'contains', value: 'A', ignore_case: true },
  { field: 'unmapped.code', op: 'eq', value: 'ABC', ignore_case: true },
  { field: 'observables[*].value', op: 'eq', value: 'BOB', ignore_case: true },
  { field: 'envelope.stream', op: 'eq', value: 'B', ignore_case: true },
  { field: 'class_uid', op: 'eq', value: '3002', ignore_case: true },
];

describe('conditions in SQL', () => {
  for (const leaf of LEAVES) {
    it(`${JSON.stringify(leaf)} selects the same events as in memory, and so does its negation`, async () => {
      expect(await sqlSelects(leaf)).toEqual(memorySelects(leaf));
      const l = leaf as { op: string };
      const neg = { eq: 'ne', in: 'not_in', exists: 'not_exists' }[l.op];
      const negation: Condition = neg ? { ...(leaf as object), op: neg } as Condition : { not: leaf };
      expect(await sqlSelects(negation)).toEqual(memorySelects(negation));
    });
  }

  it('combines with all, any and not', async () => {
    const cond: Condition = { any: [{ all: [LEAVES[0]!, { not: LEAVES[13]! }] }, { field: 'count', op: 'gt', value: 6 }] };
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
    const rows = await queries.rows(scope(null), { fields: ['actor.user.name', 'count'], sort: [{ field: 'count', order: 'desc' }], limit: 3 });
    expect(rows.map((r) => r.fields)).toEqual([
      { 'actor.user.name': 'Bob', count: 15 },
      { 'actor.user.name': 'admin', count: 5 },
      { 'actor.user.name': null, count: 0 },
    ]);
  });
});
