// The condition language's shared cases: events and conditions that the store's SQL compilers
// (modules/search/query-sql.ts for PostgreSQL, event-store/duckdb/condition.ts) are each run
// over and held to the in-memory compiler's answer (query-sql.test.ts, condition.test.ts).
import type { Condition } from '../../src/pipeline/conditions/types.js';

/** Events of every shape the operators distinguish: strings, numbers, numeric text, lists, nulls, "" and [], IPv4, IPv6 and mapped addresses. */
export const CONDITION_EVENTS: Record<string, unknown>[] = [
  { class_uid: 3002, severity_id: 1, status: 'Success', actor: { user: { name: 'admin', groups: [{ name: 'ops' }, { name: 'sec' }] } }, src_endpoint: { ip: '10.1.2.3' }, count: 5, message: 'User admin logged in', observables: [{ value: 'admin' }, { value: '10.1.2.3' }], unmapped: { code: '4624', tags: ['a', 'b'], n: null, empty: '', none: [] } },
  { class_uid: 3002, severity_id: 4, status: 'Failure', actor: { user: { name: 'Bob', groups: [] } }, src_endpoint: { ip: '192.168.7.1' }, count: 15, message: 'bad password for bob', observables: [{ value: 'bob' }], unmapped: { code: 4625, tags: 'a' } },
  { class_uid: 6003, severity_id: 2, status: 'Success', actor: { user: { name: 'svc-deploy' } }, src_endpoint: { ip: '::ffff:10.9.9.9' }, count: '7', message: 'API call', unmapped: { code: ' 12 ', tags: [['x'], 'y'] } },
  { class_uid: 4001, activity_id: 6, src_endpoint: { ip: '2001:db8::1' }, count: 0, message: 'conn', observables: [], unmapped: { code: 'abc' } },
  { class_uid: 4001, src_endpoint: { ip: 'not an ip' }, message: 'x', unmapped: { tags: [1, 2, 3] } },
];

/** Every operator on columns and on plain, indexed and [*] paths, with ignore_case; `records` are the stored events (one's id is asked for), `NOW` their newest time. */
export function conditionLeaves(records: readonly { id: string }[], NOW: number): Condition[] {
  return [
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
}
