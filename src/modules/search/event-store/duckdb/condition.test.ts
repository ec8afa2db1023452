// The DuckDB form of the condition language means what the in-memory compiler means: every
// operator, on columns, on the searched h_* columns and on paths of the event (plain, deep,
// indexed and [*]), positive and negative, is run both ways over the same events and must select
// the same ones (the twin of ../../query-sql.test.ts). Also the field projection, the sort keys
// and what `top` counts.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../../core/ids.js';
import type { Condition } from '../../../../pipeline/conditions/types.js';
import { STORED_COLUMNS, storedColumnValues } from '../../../../pipeline/delivery/stored-columns.js';
import type { NormalizedRecord } from '../../../../pipeline/envelope.js';
import { compileRecordCondition } from '../../../../pipeline/route/conditions.js';
import { compileField } from '../../../../pipeline/route/paths.js';
import { duckCondition } from './condition.js';
import { duckFieldJson, duckJsonSortKeys, duckSortKeys, duckTopValues } from './fields.js';
import { duckRegex, ipKey, numberOfText, registerConditionFunctions } from './operators.js';
import { sqlString } from './sql.js';
import { SCHEMA_SQL } from './schema.js';
import { CONDITION_EVENTS, conditionLeaves } from '../../../../../test/support/condition-cases.js';

const NOW = Date.now();
const EVENTS: Record<string, unknown>[] = [
  ...CONDITION_EVENTS,
  // Searched columns holding strings, numbers, numeric text, lists, objects, booleans, "" and [].
  {
    class_uid: 4001,
    category_uid: 4,
    src_endpoint: { ip: '10.200.0.1', port: 443, hostname: 'Web-01.example.com' },
    dst_endpoint: { ip: '::FFFF:192.168.1.9', port: '8080', hostname: 'db' },
    actor: { user: { name: ['alice', 'Bob', null] }, process: { name: '0x1F' } },
    user: { name: { first: 'x', last: 'y' } },
    device: { hostname: null, ip: '2001:db8::ff' },
    metadata: { product: { name: `It's "quoted" \\ back`, vendor_name: '' } },
    type_uid: 400101,
    status_id: 1.5,
    disposition_id: true,
    file: { name: 'a\nb.txt' },
    process: { name: ' 42 ' },
    count: 15.5,
    unmapped: { code: '1e3', tags: [] },
  },
  {
    class_uid: 2004,
    severity_id: 5,
    src_endpoint: { ip: 'fe80::1%eth0', port: 0, hostname: 'web-02' },
    dst_endpoint: { ip: '10.0.0.256', port: 22 },
    actor: { user: { name: [] }, process: { name: '\u00a012\u3000' } },
    user: { name: '' },
    device: { hostname: 'HOST', ip: ['10.1.1.1', '2001:db8::1'] },
    metadata: { product: { name: 'Ünïcödé ß', vendor_name: 'Micro"soft' } },
    type_uid: '400101',
    status_id: 99,
    disposition_id: false,
    file: { name: '😀 smile.txt' },
    process: { name: 'cmd.exe' },
    count: true,
    message: "it's a 'quote' and 50% of_it",
    unmapped: { code: '-0x1F', tags: 'b' },
  },
  // Deep paths, odd keys and the number forms JavaScript's Number reads.
  {
    class_uid: 1001,
    src_endpoint: { ip: '1.2.3.4', port: -1 },
    dst_endpoint: { ip: '0:0:0:0:0:ffff:a01:203', hostname: 'Very.Long.Name' },
    actor: { user: { name: 'BOB' } },
    user: { name: ['x', 'y'] },
    device: { ip: '010.1.2.3' },
    file: { name: 'C:\\Windows\\x.exe' },
    type_uid: 12345678901234567000,
    status_id: -0.5,
    count: 1e21,
    message: 'line1\nline2',
    unmapped: {
      code: '0b101',
      n1: '1e3',
      n2: ' -1.5 ',
      n3: '0x1F',
      n4: '\u00a012\u3000',
      n5: '1e400',
      n6: '.5',
      n7: '5.',
      n8: '1_000',
      n9: 'Infinity',
      n10: '',
      n11: '0o17',
      n12: '+7',
      n13: '\t8\n',
      big: 12345678901234567000,
      neg: -0.5,
      f: 1e21,
      t: true,
      fa: false,
      obj: {
        '0': 'zero',
        'a.b': 'dot',
        '*': 'star',
        '': 'empty',
        'x/y': 'slash',
        'q"k': 'quote',
        '~1': 'tilde',
        'b\\s': 'backslash',
      },
      arr: [[1, [2]], null, { k: 'v' }, 'null', [null]],
      mixed: [null, 1, 'a', true],
      nested: [{ k: [{ v: 1 }, { v: 2 }] }, { k: { v: 3 } }, { k: null }, null, 7],
      constructor: null,
      toString: 'ts',
      lone: 'solo',
      ls: ['first', 'second', 'third'],
      zero: { '0': 'key zero' },
      caps: 'ÀÉÎ',
      ctl: 'a\u001fb',
      q: 'say "hi" \\ there',
      emoji: '😀x',
    },
    observables: { value: 'not a list' },
  },
  // Nulls where values usually are.
  {
    class_uid: 1001,
    activity_id: 1,
    src_endpoint: null,
    actor: { user: null },
    status: null,
    message: null,
    observables: [null, { value: null }, { value: 'x' }],
    unmapped: { tags: [null], code: null, nested: [[{ k: 'deep' }]], ls: 'lone' },
  },
];

const records: NormalizedRecord[] = EVENTS.map((ocsf, i) => ({
  id: newId(),
  organization_id: 1,
  integration_id: i % 2 ? 9 : 8,
  stream: i % 3 === 2 ? '10.0.0.5' : i % 2 ? 'b' : 'a',
  received_at: new Date(NOW - i * 1000).toISOString(),
  mapping_version_id: 'v',
  valid: true,
  ocsf: { ...ocsf, time: NOW - i * 1000 },
}));

let instance: DuckDBInstance;
let connection: DuckDBConnection;

function int(v: unknown): string {
  return Number.isInteger(v) ? String(v) : 'NULL';
}

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
  registerConditionFunctions(connection);
  // The events table only (what conditions read).
  await connection.run(SCHEMA_SQL.find((s) => /create table if not exists events\b/.test(s))!);
  for (const r of records) {
    const o = r.ocsf;
    const hot = storedColumnValues(o).map((v) => (v === null ? 'NULL' : sqlString(v)));
    await connection.run(`insert into events (received, time, organization_id, integration_id, stream, class_uid, category_uid, activity_id, severity_id, event_id, ${STORED_COLUMNS.map((c) => c.column).join(', ')}, event)
      values (make_timestamp_ms(${Date.parse(r.received_at)}), make_timestamp_ms(${o.time as number}), ${r.organization_id}, ${r.integration_id}, ${sqlString(r.stream)},
        ${int(o.class_uid)}, ${int(o.category_uid)}, ${int(o.activity_id)}, ${int(o.severity_id)}, ${sqlString(r.id)}::UUID, ${hot.join(', ')}, ${sqlString(JSON.stringify(o))})`);
  }
});
afterAll(() => {
  connection?.closeSync();
  instance?.closeSync();
});

async function all(sql: string): Promise<Record<string, unknown>[]> {
  return (await connection.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
}

async function sqlSelects(cond: Condition): Promise<string[]> {
  const rows = await all(`select event_id::VARCHAR as id from events where ${duckCondition(cond)}`);
  return rows.map((r) => r.id as string).sort();
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

const LEAVES: Condition[] = [
  ...conditionLeaves(records, NOW),

  // Columns: every operator on numbers, text and the event id.
  { field: 'class_uid', op: 'in', value: [1001, 2004.5, true, null] },
  { field: 'class_uid', op: 'gt', value: 3001.5 },
  { field: 'class_uid', op: 'lte', value: 3001.5 },
  { field: 'class_uid', op: 'gt', value: 1e12 },
  { field: 'class_uid', op: 'lt', value: -1e12 },
  { field: 'class_uid', op: 'prefix', value: '30' },
  { field: 'class_uid', op: 'contains', value: 3002 },
  { field: 'class_uid', op: 'cidr', value: '0.0.0.0/0' },
  { field: 'class_uid', op: 'eq', value: null },
  { field: 'category_uid', op: 'exists' },
  { field: 'category_uid', op: 'eq', value: 4 },
  { field: 'severity_id', op: 'gte', value: 4 },
  { field: 'activity_id', op: 'lt', value: 10 },
  { field: 'envelope.organization_id', op: 'eq', value: 1 },
  { field: 'envelope.integration_id', op: 'gt', value: 8.5 },
  { field: 'envelope.stream', op: 'in', value: ['a', 'zz', 3] },
  { field: 'envelope.stream', op: 'suffix', value: '.5' },
  { field: 'envelope.stream', op: 'contains', value: '0.0' },
  { field: 'envelope.stream', op: 'regex', value: '^[ab]$' },
  { field: 'envelope.stream', op: 'cidr', value: '10.0.0.0/24' },
  { field: 'envelope.stream', op: 'exists' },
  { field: 'envelope.stream', op: 'gt', value: 5 },
  { field: 'envelope.stream', op: 'eq', value: 1 },
  { field: 'envelope.stream', op: 'in', value: ['A', 'Q'], ignore_case: true },
  { field: 'envelope.stream', op: 'regex', value: '^A', ignore_case: true },
  {
    field: 'envelope.id',
    op: 'in',
    value: [records[0]!.id, records[5]!.id, 'not an id', records[1]!.id.toUpperCase()],
  },
  { field: 'envelope.id', op: 'eq', value: records[3]!.id.toUpperCase() },
  { field: 'envelope.id', op: 'eq', value: records[3]!.id.toUpperCase(), ignore_case: true },
  { field: 'envelope.id', op: 'prefix', value: records[4]!.id.slice(0, 20) },
  { field: 'envelope.id', op: 'exists' },
  { field: 'time', op: 'eq', value: NOW - 3000 },
  { field: 'time', op: 'in', value: [NOW, NOW - 1000, 'x'] },
  { field: 'time', op: 'lt', value: NOW - 4500.5 },
  { field: 'time', op: 'gt', value: NOW - 4500.5 },
  { field: 'time', op: 'lte', value: NOW - 4000 },
  { field: 'time', op: 'gt', value: 1e300 },
  { field: 'time', op: 'gte', value: -1e300 },
  { field: 'time', op: 'exists' },
  { field: 'time', op: 'contains', value: 'x' },

  // Searched (h_*) columns: strings, numbers, numeric text, lists, objects, booleans, nulls.
  { field: 'src_endpoint.ip', op: 'eq', value: '10.1.2.3' },
  { field: 'src_endpoint.ip', op: 'in', value: ['192.168.7.1', '2001:db8::1', 7, null] },
  { field: 'src_endpoint.ip', op: 'exists' },
  { field: 'src_endpoint.ip', op: 'eq', value: null },
  { field: 'src_endpoint.ip', op: 'prefix', value: '10.' },
  { field: 'src_endpoint.ip', op: 'suffix', value: '.1' },
  { field: 'src_endpoint.ip', op: 'contains', value: ':' },
  { field: 'src_endpoint.ip', op: 'regex', value: '^[0-9.]+$' },
  { field: 'src_endpoint.ip', op: 'cidr', value: ['fe80::/10'] },
  { field: 'src_endpoint.ip', op: 'cidr', value: '1.2.3.4' },
  { field: 'src_endpoint.ip', op: 'cidr', value: '::ffff:10.0.0.0/104' },
  { field: 'src_endpoint.ip', op: 'eq', value: '2001:DB8::1', ignore_case: true },
  { field: 'src_endpoint.port', op: 'eq', value: 443 },
  { field: 'src_endpoint.port', op: 'eq', value: 443.0 },
  { field: 'src_endpoint.port', op: 'eq', value: '443' },
  { field: 'src_endpoint.port', op: 'in', value: [0, -1, 22] },
  { field: 'src_endpoint.port', op: 'gt', value: -0.5 },
  { field: 'src_endpoint.port', op: 'exists' },
  { field: 'src_endpoint.hostname', op: 'prefix', value: 'web', ignore_case: true },
  { field: 'src_endpoint.hostname', op: 'prefix', value: 'Web-0' },
  { field: 'dst_endpoint.ip', op: 'cidr', value: ['192.168.1.0/24', '10.1.2.0/24'] },
  { field: 'dst_endpoint.ip', op: 'cidr', value: '10.0.0.0/8' },
  { field: 'dst_endpoint.port', op: 'eq', value: '8080' },
  { field: 'dst_endpoint.port', op: 'gte', value: 8080 },
  { field: 'dst_endpoint.port', op: 'lt', value: 100 },
  { field: 'dst_endpoint.hostname', op: 'regex', value: 'long', ignore_case: true },
  { field: 'device.hostname', op: 'exists' },
  { field: 'device.hostname', op: 'eq', value: 'host', ignore_case: true },
  { field: 'device.ip', op: 'cidr', value: '2001:db8::/64' },
  { field: 'device.ip', op: 'contains', value: '10.1.1.1' },
  { field: 'device.ip', op: 'cidr', value: '10.0.0.0/8' },
  { field: 'device.ip[*]', op: 'cidr', value: '10.0.0.0/8' },
  { field: 'device.ip[0]', op: 'cidr', value: '2001:db8::/32' },
  { field: 'device.ip[-1]', op: 'eq', value: '2001:db8::1' },
  { field: 'actor.user.name', op: 'eq', value: 'Bob' },
  { field: 'actor.user.name', op: 'contains', value: 'Bob' },
  { field: 'actor.user.name', op: 'contains', value: 'bob', ignore_case: true },
  { field: 'actor.user.name', op: 'contains', value: null },
  { field: 'actor.user.name', op: 'exists' },
  { field: 'actor.user.name[*]', op: 'eq', value: 'alice' },
  { field: 'actor.user.name[*]', op: 'eq', value: null },
  { field: 'actor.user.name[*]', op: 'exists' },
  { field: 'actor.user.name[1]', op: 'eq', value: 'Bob' },
  { field: 'actor.user.name[0]', op: 'prefix', value: 'ad' },
  { field: 'actor.user.name[-1]', op: 'eq', value: null },
  { field: 'user.name', op: 'exists' },
  { field: 'user.name', op: 'eq', value: '' },
  { field: 'user.name.first', op: 'eq', value: 'x' },
  { field: 'user.name', op: 'contains', value: 'y' },
  { field: 'actor.process.name', op: 'gt', value: 30 },
  { field: 'actor.process.name', op: 'eq', value: 12 },
  { field: 'actor.process.name', op: 'gte', value: 12 },
  { field: 'process.name', op: 'lt', value: 43 },
  { field: 'process.name', op: 'suffix', value: '.EXE', ignore_case: true },
  { field: 'metadata.product.name', op: 'eq', value: `It's "quoted" \\ back` },
  { field: 'metadata.product.name', op: 'prefix', value: `It's "quo` },
  { field: 'metadata.product.name', op: 'contains', value: `"quoted" \\` },
  { field: 'metadata.product.name', op: 'eq', value: 'ÜNÏCÖDÉ SS', ignore_case: true },
  { field: 'metadata.product.name', op: 'eq', value: 'ÜNÏCÖDÉ ß', ignore_case: true },
  { field: 'metadata.product.name', op: 'prefix', value: 'ünï', ignore_case: true },
  { field: 'metadata.product.vendor_name', op: 'exists' },
  { field: 'metadata.product.vendor_name', op: 'eq', value: '' },
  { field: 'metadata.product.vendor_name', op: 'suffix', value: '"soft' },
  { field: 'type_uid', op: 'eq', value: 400101 },
  { field: 'type_uid', op: 'eq', value: '400101' },
  { field: 'type_uid', op: 'eq', value: 12345678901234567000 },
  { field: 'type_uid', op: 'gt', value: 400100 },
  { field: 'status_id', op: 'eq', value: 1.5 },
  { field: 'status_id', op: 'in', value: [99, -0.5] },
  { field: 'status_id', op: 'lt', value: 0 },
  { field: 'disposition_id', op: 'eq', value: true },
  { field: 'disposition_id', op: 'in', value: [false, 'true'] },
  { field: 'disposition_id', op: 'exists' },
  { field: 'file.name', op: 'eq', value: 'a\nb.txt' },
  { field: 'file.name', op: 'prefix', value: 'a\n' },
  { field: 'file.name', op: 'suffix', value: 'n' },
  { field: 'file.name', op: 'contains', value: 'n' },
  { field: 'file.name', op: 'prefix', value: '😀' },
  { field: 'file.name', op: 'regex', value: '^.\\s' },
  { field: 'file.name', op: 'contains', value: '\\Windows\\' },
  { field: 'file.name', op: 'suffix', value: '.TXT', ignore_case: true },

  // Event paths: every operator, deep and odd keys, indexes, [*], numbers and numeric text.
  { field: 'unmapped.n1', op: 'eq', value: 1000 },
  { field: 'unmapped.n1', op: 'gte', value: 1000 },
  { field: 'unmapped.n2', op: 'lt', value: -1 },
  { field: 'unmapped.n3', op: 'eq', value: 31 },
  { field: 'unmapped.n3', op: 'gte', value: 31 },
  { field: 'unmapped.n4', op: 'lte', value: 12 },
  { field: 'unmapped.n5', op: 'gt', value: 0 },
  { field: 'unmapped.n6', op: 'lt', value: 1 },
  { field: 'unmapped.n7', op: 'gte', value: 5 },
  { field: 'unmapped.n8', op: 'gt', value: 0 },
  { field: 'unmapped.n9', op: 'gt', value: 0 },
  { field: 'unmapped.n10', op: 'lte', value: 0 },
  { field: 'unmapped.n11', op: 'eq', value: 15 },
  { field: 'unmapped.n11', op: 'lte', value: 15 },
  { field: 'unmapped.n12', op: 'gte', value: 7 },
  { field: 'unmapped.n13', op: 'gte', value: 8 },
  { field: 'unmapped.code', op: 'gte', value: 5 },
  { field: 'unmapped.code', op: 'lt', value: 0 },
  { field: 'unmapped.big', op: 'eq', value: 12345678901234567000 },
  { field: 'unmapped.big', op: 'gt', value: 1e19 },
  { field: 'unmapped.neg', op: 'eq', value: -0.5 },
  { field: 'unmapped.f', op: 'eq', value: 1e21 },
  { field: 'unmapped.f', op: 'in', value: [1e21, 'x'] },
  { field: 'count', op: 'eq', value: 1e21 },
  { field: 'count', op: 'eq', value: 15.5 },
  { field: 'count', op: 'eq', value: true },
  { field: 'count', op: 'gte', value: 15 },
  { field: 'count', op: 'exists' },
  { field: 'unmapped.t', op: 'eq', value: true },
  { field: 'unmapped.fa', op: 'eq', value: false },
  { field: 'unmapped.fa', op: 'exists' },
  { field: 'unmapped.t', op: 'eq', value: 'true' },
  { field: 'unmapped.t', op: 'in', value: [1, 'true', true] },
  { field: 'unmapped.obj.0', op: 'eq', value: 'zero' },
  { field: 'unmapped.obj["a.b"]', op: 'eq', value: 'dot' },
  { field: 'unmapped.obj["*"]', op: 'eq', value: 'star' },
  { field: 'unmapped.obj[""]', op: 'eq', value: 'empty' },
  { field: 'unmapped.obj["x/y"]', op: 'eq', value: 'slash' },
  { field: 'unmapped.obj["q\\"k"]', op: 'eq', value: 'quote' },
  { field: 'unmapped.obj["~1"]', op: 'eq', value: 'tilde' },
  { field: 'unmapped.obj["b\\\\s"]', op: 'eq', value: 'backslash' },
  { field: 'unmapped.obj', op: 'exists' },
  { field: 'unmapped.obj', op: 'contains', value: 'zero' },
  { field: 'unmapped.ls.0', op: 'eq', value: 'first' },
  { field: 'unmapped.zero.0', op: 'eq', value: 'key zero' },
  { field: 'unmapped.ls[0]', op: 'eq', value: 'first' },
  { field: 'unmapped.ls[2]', op: 'eq', value: 'third' },
  { field: 'unmapped.ls[-2]', op: 'eq', value: 'second' },
  { field: 'unmapped.ls[-4]', op: 'exists' },
  { field: 'unmapped.ls[5]', op: 'exists' },
  { field: 'unmapped.ls[0]', op: 'eq', value: 'lone' },
  { field: 'unmapped.ls[-1]', op: 'eq', value: 'lone' },
  { field: 'unmapped.ls[1]', op: 'exists' },
  { field: 'unmapped.lone[0]', op: 'eq', value: 'solo' },
  { field: 'unmapped.lone[*]', op: 'eq', value: 'solo' },
  { field: 'unmapped.ls[*]', op: 'eq', value: 'lone' },
  { field: 'unmapped.ls', op: 'contains', value: 'second' },
  { field: 'unmapped.ls', op: 'contains', value: 'SECOND', ignore_case: true },
  { field: 'unmapped.ls', op: 'contains', value: 'on' },
  { field: 'unmapped.arr', op: 'contains', value: null },
  { field: 'unmapped.arr', op: 'contains', value: 'null' },
  { field: 'unmapped.arr[*]', op: 'eq', value: 1 },
  { field: 'unmapped.arr[*]', op: 'eq', value: null },
  { field: 'unmapped.arr[*]', op: 'in', value: [null] },
  { field: 'unmapped.arr[*]', op: 'eq', value: 'null' },
  { field: 'unmapped.arr[*]', op: 'exists' },
  { field: 'unmapped.arr[*].k', op: 'eq', value: 'v' },
  { field: 'unmapped.arr[*][*]', op: 'eq', value: 2 },
  { field: 'unmapped.arr[*][*]', op: 'eq', value: null },
  { field: 'unmapped.arr[0][1]', op: 'contains', value: 2 },
  { field: 'unmapped.arr[0][1][0]', op: 'eq', value: 2 },
  { field: 'unmapped.arr[1]', op: 'eq', value: null },
  { field: 'unmapped.arr[4][0]', op: 'eq', value: null },
  { field: 'unmapped.mixed[*]', op: 'eq', value: true },
  { field: 'unmapped.mixed', op: 'contains', value: true },
  { field: 'unmapped.mixed', op: 'contains', value: 1 },
  { field: 'unmapped.mixed[*]', op: 'gt', value: 0 },
  { field: 'unmapped.mixed[1]', op: 'eq', value: 1 },
  { field: 'unmapped.nested[*].k[*].v', op: 'eq', value: 2 },
  { field: 'unmapped.nested[*].k[*].v', op: 'eq', value: 3 },
  { field: 'unmapped.nested[*].k.v', op: 'in', value: [3] },
  { field: 'unmapped.nested[*].k', op: 'exists' },
  { field: 'unmapped.nested[*].k', op: 'eq', value: 'deep' },
  { field: 'unmapped.nested[*][*].k', op: 'eq', value: 'deep' },
  { field: 'unmapped.nested[*]', op: 'eq', value: 7 },
  { field: 'unmapped.nested[0].k[1].v', op: 'eq', value: 2 },
  { field: 'unmapped.nested[-1]', op: 'eq', value: 7 },
  { field: 'unmapped.constructor', op: 'eq', value: null },
  { field: 'unmapped.constructor', op: 'exists' },
  { field: 'unmapped.toString', op: 'eq', value: 'ts' },
  { field: 'unmapped.code', op: 'eq', value: null },
  { field: 'unmapped.code', op: 'in', value: [null, 'abc'] },
  { field: 'unmapped.tags', op: 'contains', value: null },
  { field: 'unmapped.tags[*]', op: 'eq', value: null },
  { field: 'unmapped.tags[*]', op: 'not_exists' },
  { field: 'unmapped.tags[*]', op: 'gte', value: 2 },
  { field: 'unmapped.tags[*]', op: 'regex', value: '^[a-b]$' },
  { field: 'unmapped.caps', op: 'eq', value: 'àéî', ignore_case: true },
  { field: 'unmapped.ctl', op: 'eq', value: 'a\u001fb' },
  { field: 'unmapped.ctl', op: 'in', value: ['a\u001fb', 'zz'] },
  { field: 'unmapped.ctl', op: 'eq', value: 'A\u001fB', ignore_case: true },
  { field: 'unmapped.q', op: 'eq', value: 'say "hi" \\ there' },
  { field: 'unmapped.q', op: 'contains', value: '"hi" \\' },
  { field: 'unmapped.emoji', op: 'eq', value: '😀x' },
  { field: 'unmapped.emoji', op: 'prefix', value: '😀' },
  { field: 'unmapped.emoji', op: 'regex', value: '^.x$' },
  { field: 'message', op: 'eq', value: 'line1\nline2' },
  { field: 'unmapped.ls[*]', op: 'in', value: ['SECOND', 'LONE'], ignore_case: true },
  { field: 'unmapped.caps', op: 'regex', value: 'éî$', ignore_case: true },
  { field: 'observables.value', op: 'eq', value: 'not a list' },
  { field: 'observables[*].value', op: 'eq', value: 'not a list' },
  { field: 'observables[*].value', op: 'eq', value: null },
  { field: 'observables[*].value', op: 'exists' },
  { field: 'observables[*]', op: 'eq', value: null },
  { field: 'observables[*]', op: 'exists' },
  { field: 'observables[1].value', op: 'eq', value: null },
  { field: 'observables', op: 'exists' },
  { field: 'observables', op: 'contains', value: null },
  { field: 'status', op: 'eq', value: null },
  { field: 'status', op: 'exists' },
  { field: 'src_endpoint', op: 'eq', value: null },
  { field: 'src_endpoint', op: 'exists' },
  { field: 'actor.user', op: 'eq', value: null },
  { field: 'message', op: 'regex', value: '^line2$' },
  { field: 'message', op: 'regex', value: 'line1.line2' },
  { field: 'message', op: 'regex', value: '(?s)line1.line2' },
  { field: 'message', op: 'regex', value: '(?m)^line2$' },
  { field: 'message', op: 'regex', value: '(?<first>line)1' },
  { field: 'message', op: 'regex', value: '[(?<]x' },
  { field: 'message', op: 'contains', value: "'quote'" },
  { field: 'message', op: 'contains', value: '50%' },
  { field: 'message', op: 'contains', value: 'f_it' },
  { field: 'message', op: 'suffix', value: '% of_it' },
  { field: 'message', op: 'eq', value: "it's a 'quote' and 50% of_it" },
  { field: 'message', op: 'in', value: ['conn', 'x', 'API CALL'], ignore_case: true },
  { field: 'message', op: 'exists' },
  { field: 'message', op: 'gt', value: 0 },
  { field: 'message', op: 'cidr', value: '0.0.0.0/0' },
  { field: 'observables[*].value', op: 'cidr', value: ['0.0.0.0/0', '::/0'] },
  { field: 'observables[*].value', op: 'prefix', value: 'a' },
  { field: 'dst_endpoint.ip', op: 'cidr', value: '10.1.2.3' },
  { field: 'device.ip', op: 'eq', value: '010.1.2.3' },
  { field: 'device.ip', op: 'cidr', value: '0.0.0.0/0' },
];

function negationOf(leaf: Condition): Condition {
  const l = leaf as { op: string };
  const neg = { eq: 'ne', in: 'not_in', exists: 'not_exists', not_exists: 'exists' }[l.op];
  return neg ? ({ ...(leaf as object), op: neg } as Condition) : { not: leaf };
}

describe('conditions in DuckDB SQL', () => {
  for (const leaf of LEAVES) {
    it(`${JSON.stringify(leaf)} selects the same events as in memory, and so does its negation`, async () => {
      expect(await sqlSelects(leaf)).toEqual(memorySelects(leaf));
      const negation = negationOf(leaf);
      expect(await sqlSelects(negation)).toEqual(memorySelects(negation));
      // Beside another read of the event, the leaf is read from one shared json_extract.
      const shared: Condition = { any: [leaf, { field: 'zz.never', op: 'exists' }] };
      expect(await sqlSelects(shared)).toEqual(memorySelects(shared));
      const sharedNegation: Condition = { all: [negationOf(leaf), { field: 'zz.never', op: 'not_exists' }] };
      expect(await sqlSelects(sharedNegation)).toEqual(memorySelects(sharedNegation));
    });
  }

  it('combines with all, any and not (columns outside, event reads shared)', async () => {
    const conds: Condition[] = [
      { any: [{ all: [LEAVES[0]!, { not: LEAVES[13]! }] }, { field: 'count', op: 'gt', value: 6 }] },
      {
        all: [
          { field: 'class_uid', op: 'in', value: [3002, 4001, 1001] },
          { field: 'message', op: 'exists' },
          { field: 'src_endpoint.ip', op: 'exists' },
          { not: { field: 'unmapped.tags[*]', op: 'eq', value: 'b' } },
        ],
      },
      {
        all: [
          {
            all: [
              { field: 'envelope.stream', op: 'ne', value: 'a' },
              { field: 'count', op: 'exists' },
            ],
          },
          {
            any: [
              { field: 'unmapped.code', op: 'gt', value: 10 },
              { field: 'observables[*].value', op: 'eq', value: 'x' },
              { field: 'device.ip', op: 'cidr', value: '10.0.0.0/8' },
            ],
          },
        ],
      },
      {
        not: {
          all: [
            { field: 'time', op: 'gte', value: NOW - 4000 },
            { field: 'status', op: 'in', value: ['Success', 'Failure'] },
          ],
        },
      },
      {
        all: [
          { field: 'class_uid', op: 'gt', value: 0 },
          { field: 'envelope.organization_id', op: 'eq', value: 1 },
        ],
      },
    ];
    for (const cond of conds) expect(await sqlSelects(cond)).toEqual(memorySelects(cond));
    expect(duckCondition(null)).toBe('TRUE');
    expect(await sqlSelects({ all: [] })).toEqual(records.map((r) => r.id).sort());
    expect(await sqlSelects({ any: [] })).toEqual([]);
  });

  it('reads searched fields from their h_* columns, never from the event', () => {
    const sql = duckCondition({
      all: [
        { field: 'src_endpoint.ip', op: 'eq', value: '10.0.0.1' },
        { field: 'dst_endpoint.port', op: 'in', value: [443, 1.0, true, 'x'] },
        { field: 'actor.user.name', op: 'contains', value: 'x' },
        { field: 'device.ip[*]', op: 'cidr', value: '10.0.0.0/8' },
      ],
    });
    expect(sql).toContain(`h_src_ip = '"10.0.0.1"'`);
    expect(sql).toContain(`h_dst_port IN ('443', '1', 'true', '"x"')`);
    expect(sql).not.toMatch(/\bevent\b/);
    expect(duckCondition({ field: 'src_endpoint', op: 'exists' })).toMatch(/\bevent\b/);
  });

  it('inlines literals safely', async () => {
    expect(sqlString("it's")).toBe(`'it''s'`);
    expect(sqlString('a\u0000b')).toBe(`('a' || chr(0) || 'b')`);
    expect(() => sqlString('\ud800')).toThrow(RangeError);
    const nasty = `x'; drop table events; --`;
    expect(await sqlSelects({ field: 'message', op: 'eq', value: nasty })).toEqual([]);
    expect((await all(`select ${sqlString('a\u0000b')} as s`))[0]!.s).toBe('a\u0000b');
    expect(await sqlSelects({ field: 'message', op: 'contains', value: 'a\u0000b' })).toEqual([]);
    expect(await sqlSelects({ field: 'src_endpoint.ip', op: 'eq', value: '\ud800' })).toEqual([]);
    expect(() => duckCondition({ field: 'envelope.valid', op: 'eq', value: true })).toThrow(/not kept/);
  });

  it('passes named groups to DuckDB in the syntax its RE2 reads', () => {
    expect(duckRegex('(?<a>x)(?P<b>y)')).toBe('(?P<a>x)(?P<b>y)');
    expect(duckRegex('\\(?<a>[(?<b>]')).toBe('\\(?<a>[(?<b>]');
    expect(duckRegex('[]?<]x(?<=y)')).toBe('[]?<]x(?<=y)');
  });

  it("reads addresses and numeric text as the pass's helpers do", () => {
    expect(ipKey('::ffff:10.0.0.1')).toBe('40a000001');
    expect(ipKey('10.0.0.01')).toBeNull();
    expect(ipKey('fe80::1%eth0')).toBe('6fe800000000000000000000000000001');
    expect(numberOfText(' 0x1F ')).toBe(31);
    expect(numberOfText('')).toBeNull();
    expect(numberOfText('1e400')).toBeNull();
  });
});

/** What the pass reads for a field (compileField), as the store returns it: null when missing. */
function memoryValue(field: string, r: NormalizedRecord): unknown {
  const v = compileField(field).get(r);
  return v === undefined ? null : v;
}

describe('reading fields in DuckDB SQL', () => {
  const FIELDS = [
    'class_uid',
    'category_uid',
    'time',
    'envelope.id',
    'envelope.stream',
    'envelope.integration_id',
    'src_endpoint.ip',
    'dst_endpoint.port',
    'actor.user.name',
    'user.name',
    'status',
    'count',
    'unmapped.tags',
    'unmapped.tags[*]',
    'observables[*].value',
    'observables[0].value',
    'unmapped.arr[*]',
    'unmapped.obj["a.b"]',
    'unmapped.ls[-1]',
    'nothing',
  ];

  it('projects every field as the pass reads it (a [*] path: the list of its values)', async () => {
    const rows = await all(
      `select event_id::VARCHAR as id, ${FIELDS.map((f, i) => `(${duckFieldJson(f)})::VARCHAR as f${i}`).join(', ')} from events`,
    );
    expect(rows).toHaveLength(records.length);
    for (const row of rows) {
      const r = records.find((x) => x.id === row.id)!;
      FIELDS.forEach((f, i) => {
        const got = row[`f${i}`] === null ? null : JSON.parse(row[`f${i}`] as string);
        expect([f, got]).toEqual([f, memoryValue(f, r)]);
      });
    }
  });

  /** PostgreSQL's jsonb order: strings < numbers < booleans < arrays < objects. */
  function jsonbCompare(a: unknown, b: unknown): number {
    const rank = (v: unknown) =>
      typeof v === 'string' ? 1 : typeof v === 'number' ? 2 : typeof v === 'boolean' ? 3 : Array.isArray(v) ? 4 : 5;
    if (rank(a) !== rank(b)) return rank(a) - rank(b);
    if (typeof a === 'number') return a - (b as number);
    if (typeof a === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b as string));
    if (typeof a === 'boolean') return Number(a) - Number(b);
    return JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0;
  }

  function memoryOrder(field: string, order: 'asc' | 'desc'): string[] {
    const first = (r: NormalizedRecord) => {
      const v = memoryValue(field, r);
      return compileField(field).many ? ((v as unknown[] | null)?.find((x) => x !== null) ?? null) : v;
    };
    return [...records]
      .sort((x, y) => {
        const a = first(x);
        const b = first(y);
        if (a === null || b === null) {
          if (a === null && b === null) return x.id < y.id ? -1 : 1;
          return (a === null ? -1 : 1) * (order === 'asc' ? 1 : -1);
        }
        const c = jsonbCompare(a, b) * (order === 'asc' ? 1 : -1);
        return c !== 0 ? c : x.id < y.id ? -1 : 1;
      })
      .map((r) => r.id);
  }

  for (const field of [
    'count',
    'class_uid',
    'time',
    'src_endpoint.ip',
    'src_endpoint.port',
    'unmapped.code',
    'dst_endpoint.port',
    'type_uid',
    'status_id',
    'observables[*].value',
    'disposition_id',
  ]) {
    for (const order of ['asc', 'desc'] as const) {
      it(`sorts by ${field} ${order} as the PostgreSQL store does`, async () => {
        const rows = await all(
          `select event_id::VARCHAR as id from events order by ${[...duckSortKeys(field, order), 'event_id'].join(', ')}`,
        );
        expect(rows.map((r) => r.id)).toEqual(memoryOrder(field, order));
      });
    }
  }

  function memoryTop(field: string): Map<string, number> {
    const counts = new Map<string, number>();
    const many = compileField(field).many;
    for (const r of records) {
      const v = memoryValue(field, r);
      const values = many ? ((v as unknown[] | null) ?? []) : [v];
      for (const x of values) if (x !== null) counts.set(JSON.stringify(x), (counts.get(JSON.stringify(x)) ?? 0) + 1);
    }
    return counts;
  }

  for (const field of [
    'observables[*].value',
    'unmapped.tags[*]',
    'unmapped.arr[*]',
    'actor.user.name[*]',
    'device.ip[*]',
    'status',
    'src_endpoint.ip',
    'class_uid',
    'envelope.stream',
    'unmapped.code',
    'observables[0].value',
  ]) {
    it(`counts the values of ${field} for top (every element of a [*] path), ties in jsonb order`, async () => {
      const t = duckTopValues(field);
      const rows = await all(
        `select (${t.value})::VARCHAR as value, count(*) as n from events ${t.from} where ${t.value} is not null group by 1 order by n desc, ${t.order.join(', ')}`,
      );
      const got = rows.map((r) => [JSON.stringify(JSON.parse(r.value as string)), Number(r.n)] as const);
      expect(new Map(got)).toEqual(memoryTop(field));
      expect(got).toHaveLength(memoryTop(field).size);
      for (let i = 1; i < got.length; i++) {
        const [a, n] = got[i - 1]!;
        const [b, m] = got[i]!;
        expect(n >= m).toBe(true);
        if (n === m) expect(jsonbCompare(JSON.parse(a), JSON.parse(b))).toBeLessThan(0);
      }
    });
  }

  it('orders a JSON expression as jsonb does', async () => {
    const rows = await all(
      `select v from (values ('"b"'), ('2'), ('10'), ('"a"'), ('true'), ('[1]'), ('{"a":1}'), (NULL), ('null')) t(v) order by ${duckJsonSortKeys('v::JSON', 'asc').join(', ')}`,
    );
    // JSON null sorts with missing values (first ascending), then strings, numbers, booleans, lists, objects.
    expect(
      rows
        .slice(0, 2)
        .map((r) => String(r.v))
        .sort(),
    ).toEqual(['null', 'null']);
    expect(rows.slice(2).map((r) => r.v)).toEqual(['"a"', '"b"', '2', '10', 'true', '[1]', '{"a":1}']);
  });
});
