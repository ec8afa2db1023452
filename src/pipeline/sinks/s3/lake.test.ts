// Security Lake Parquet end to end: OCSF events produced by the built-in mappings from their
// vendor fixtures go through the real s3 sink to s3rver (a third-party S3 server), are read
// back over S3, and DuckDB (an independent Parquet reader) queries them: nested columns by
// path, the types Security Lake's own tables use, and every value of every event.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stream, type Raw } from '../../../../test/support/builtin.js';
import { sinkBatch, sinkContext } from '../../../../test/support/sink-batch.js';
import { s3SinkType } from './index.js';

interface S3rverServer {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverServer;
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;

const BUCKET = 'aws-security-data-lake-us-east-1-weirtest';
const KEY = { access_key_id: 'S3RVER', secret_access_key: 'S3RVER' };
const ACCOUNT = '123456789012';

let server: S3rverServer;
let endpoint: string;
let dir: string;
let db: DuckDBInstance;
let sql: DuckDBConnection;
/** Events sent, by class_uid. */
const sent = new Map<number, Raw[]>();
/** Parquet file paths on disk (fetched back over S3), by class_uid. */
const files = new Map<number, string[]>();
let keys: string[] = [];

const samples = (): Raw[] => [
  ...stream('okta', 'system_log').out,
  ...stream('sysmon', 'operational').out,
  ...stream('aws_vpc_flow', 'flow_logs').out,
  ...stream('aws_route53_resolver', 'query_logs').out,
  ...stream('aws_cloudtrail', 'cloudtrail').out,
];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'weir-lake-'));
  server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: path.join(dir, 's3'),
    configureBuckets: [{ name: BUCKET }],
  });
  endpoint = `http://127.0.0.1:${(await server.run()).port}`;

  const events = samples();
  // metadata.uid matches a row to its event below; the mappings leave it to the source.
  events.forEach((e, i) => (e.metadata.uid ??= `sample-${i}`));
  // An extension's attribute, a vendor key below an object, a value of the wrong type, and a
  // datetime profile attribute.
  const login = events.find((e) => e.class_uid === 3002 && e.actor?.user)!;
  events.push({
    ...login,
    metadata: { ...login.metadata, uid: 'with-extras' },
    time_dt: new Date(login.time as number).toISOString(),
    x_ext: { score: 7 },
    severity_id: 'high',
    actor: { ...login.actor, user: { ...login.actor.user, x_vendor_risk: ['a', 'b'] } },
  });
  for (const e of events) sent.set(e.class_uid as number, [...(sent.get(e.class_uid as number) ?? []), e]);
  const sink = s3SinkType.create(
    sinkContext({
      config: {
        bucket: BUCKET,
        region: 'us-east-1',
        endpoint,
        prefix: 'weir/',
        format: 'parquet_security_lake',
        security_lake: { source_name: 'weir_{class_name}', account_id: ACCOUNT },
      },
      credential: KEY,
    }),
  );
  const batch = sinkBatch(events, { ids: events.map((_, i) => uuidv7({ msecs: Date.UTC(2025, 2, 14) + i })) });
  expect(await sink.send(batch, AbortSignal.timeout(60_000))).toEqual({});
  await sink.close();

  const s3 = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: KEY.access_key_id, secretAccessKey: KEY.secret_access_key },
  });
  keys = ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((o) => o.Key!).sort();
  for (const [i, key] of keys.entries()) {
    const body = await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToByteArray();
    const file = path.join(dir, `${i}.parquet`);
    await writeFile(file, body);
    const uid = (await (await readMeta(file)).get('ocsf.class_uid')) as string;
    files.set(Number(uid), [...(files.get(Number(uid)) ?? []), file]);
  }
  s3.destroy();
}, 120_000);

afterAll(async () => {
  sql?.closeSync();
  db?.closeSync();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function connection(): Promise<DuckDBConnection> {
  db ??= await DuckDBInstance.create(':memory:');
  sql ??= await db.connect();
  return sql;
}

async function readMeta(file: string): Promise<Map<string, string>> {
  const c = await connection();
  const rows = (
    await c.runAndReadAll(`select decode(key) k, decode(value) v from parquet_kv_metadata('${file}')`)
  ).getRowObjectsJS() as { k: string; v: string }[];
  return new Map(rows.map((r) => [r.k, r.v]));
}

/** Files of one class, merged by column name as Athena, Spark (mergeSchema) and DuckDB do. */
const union = (list: string[]) => `read_parquet([${list.map((f) => `'${f}'`).join(', ')}], union_by_name = true)`;
const from = (uid: number) => union(files.get(uid)!);

async function query(q: string): Promise<Record<string, unknown>[]> {
  return (await (await connection()).runAndReadAll(q)).getRowObjectsJson() as Record<string, unknown>[];
}

/** The value at an OCSF path of a row read back as JSON, parsing the JSON text of third-level objects on the way. */
function lookup(row: unknown, segments: (string | number)[]): unknown {
  let v: unknown = row;
  for (const s of segments) {
    if (typeof v === 'string') v = JSON.parse(v);
    if (v === null || v === undefined || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[s];
  }
  return v;
}

/** A value of the event's own unmapped object, from the map: dotted keys, arrays as JSON text, scalars as text. */
function unmappedValue(map: Record<string, string>, at: (string | number)[]): unknown {
  for (let i = at.length; i > 0; i--) {
    const head = at.slice(0, i);
    if (head.some((s) => typeof s === 'number')) continue;
    const raw = map[head.join('.')];
    if (raw === undefined) continue;
    if (i < at.length) return lookup(JSON.parse(raw), at.slice(i));
    return raw;
  }
  return undefined;
}

/** Every scalar of an event with its path, `unmapped` aside. */
function leaves(v: unknown, at: (string | number)[] = [], out: [(string | number)[], unknown][] = []) {
  if (Array.isArray(v)) v.forEach((e, i) => leaves(e, [...at, i], out));
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) if (!(at.length === 0 && k === 'unmapped')) leaves(x, [...at, k], out);
  } else if (v !== null && v !== undefined) out.push([at, v]);
  return out;
}

describe('Security Lake Parquet read by DuckDB', () => {
  it('writes one object per class in the custom source layout, each class in its own source', () => {
    expect(keys.length).toBeGreaterThanOrEqual(sent.size);
    for (const k of keys)
      expect(k).toMatch(
        new RegExp(
          `^ext/weir_[a-z_]+/region=us-east-1/accountId=${ACCOUNT}/eventDay=\\d{8}/\\d{8}T\\d{6}Z-[0-9a-f]{16}\\.gz\\.parquet$`,
        ),
      );
    expect([...files.keys()].sort()).toEqual([...sent.keys()].sort());
    expect(sent.size).toBeGreaterThanOrEqual(5);
  });

  it('has the column types of Security Lake tables: bigint time, int class_uid, structs, lists, a string map', async () => {
    const types = new Map(
      (await query(`describe select * from ${from(3002)}`)).map((r) => [r.column_name, String(r.column_type)]),
    );
    expect(types.get('time')).toBe('BIGINT');
    expect(types.get('time_dt')).toBe('TIMESTAMP WITH TIME ZONE');
    expect(types.get('class_uid')).toBe('INTEGER');
    expect(types.get('type_uid')).toBe('BIGINT');
    expect(types.get('severity_id')).toBe('INTEGER');
    expect(types.get('is_mfa')).toBe('BOOLEAN');
    expect(types.get('message')).toBe('VARCHAR');
    expect(types.get('unmapped')).toBe('MAP(VARCHAR, VARCHAR)');
    expect(types.get('metadata')).toMatch(/^STRUCT\(.*\bproduct STRUCT\(.*vendor_name VARCHAR.*profiles VARCHAR\[\]/);
    expect(types.get('actor')).toMatch(/^STRUCT\(.*"user" STRUCT\(.*"name" VARCHAR/);
    expect(types.get('observables')).toMatch(/^STRUCT\(.*\)\[\]$/);
    // Only what the batch has (and the always-present columns): no event of 3002 has `enrichments`.
    expect(types.has('enrichments')).toBe(false);
    const codecs = await query(`select distinct compression from parquet_metadata('${files.get(3002)![0]}')`);
    expect(codecs.map((r) => r.compression)).toContain('GZIP');
  });

  it('answers nested column queries with the events values, rows sorted by time', async () => {
    const auth = sent.get(3002)!;
    const rows = await query(`select actor.user.name as name, time, class_uid from ${from(3002)} order by time`);
    const byTime = [...auth].sort((a, b) => (a.time as number) - (b.time as number));
    expect(rows.map((r) => r.name ?? null)).toEqual(byTime.map((e) => e.actor?.user?.name ?? null));
    expect(rows.map((r) => Number(r.time))).toEqual(byTime.map((e) => e.time));
    expect(rows.every((r) => r.class_uid === 3002)).toBe(true);
    expect(rows.some((r) => typeof r.name === 'string')).toBe(true);
    // Within one object rows come sorted by time.
    for (const f of files.get(3002)!) {
      const t = (await query(`select time from read_parquet('${f}')`)).map((r) => Number(r.time));
      expect(t).toEqual([...t].sort((a, b) => a - b));
    }
    const dns = await query(`select query.hostname as h, src_endpoint.ip as ip from ${from(4003)}`);
    const pairs = (l: [unknown, unknown][]) => l.map((p) => JSON.stringify(p)).sort();
    expect(pairs(dns.map((r) => [r.h ?? null, r.ip ?? null]))).toEqual(
      pairs(sent.get(4003)!.map((e) => [e.query?.hostname ?? null, e.src_endpoint?.ip ?? null])),
    );
    expect(dns.some((r) => typeof r.h === 'string')).toBe(true);
  });

  it('puts what the schema does not define into unmapped under its path', async () => {
    const [row] = await query(`select unmapped, severity_id from ${from(3002)} where metadata.uid = 'with-extras'`);
    expect(row!.severity_id).toBeNull();
    const entries = row!.unmapped as { key: string; value: string }[];
    expect(Object.fromEntries(entries.map((e) => [e.key, e.value]))).toMatchObject({
      x_ext: '{"score":7}',
      severity_id: 'high',
      'actor.user.x_vendor_risk': '["a","b"]',
    });
  });

  it('keeps every value of every event: as a column, as JSON text below the third level, or in unmapped', async () => {
    for (const [uid, events] of sent) {
      const rows = await query(`select to_json(t) as j from ${from(uid)} t`);
      const byUid = new Map<string, Record<string, unknown>>();
      for (const r of rows) {
        const row = JSON.parse(r.j as string) as Record<string, unknown>;
        byUid.set(lookup(row, ['metadata', 'uid']) as string, row);
      }
      for (const e of events) {
        const row = byUid.get(e.metadata.uid as string)!;
        expect(row, `${uid} ${e.metadata.uid}`).toBeDefined();
        const unmapped = (row.unmapped ?? {}) as Record<string, string>;
        for (const [at, value] of leaves(e)) {
          const got = lookup(row, at);
          const name = at.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
          if (got === undefined || got === null) {
            // Not a column: a misfit, kept in unmapped under its path.
            expect(
              Object.keys(unmapped).some((k) => name.startsWith(k)),
              `${uid} ${name}`,
            ).toBe(true);
          } else if (String(at.at(-1)).endsWith('_dt')) {
            expect(
              Date.parse(
                String(got)
                  .replace(' ', 'T')
                  .replace(/([+-]\d\d)$/, '$1:00'),
              ),
              name,
            ).toBe(Date.parse(value as string));
          } else if (typeof got === 'string' && typeof value !== 'string') {
            expect(got, `${uid} ${name}: a number or boolean in a string attribute`).toBe(String(value));
          } else expect(got, `${uid} ${name}`).toEqual(value);
        }
        for (const [at, value] of leaves(e.unmapped ?? {}))
          expect([value, JSON.stringify(value)], `${uid} unmapped ${at.join('.')}`).toContainEqual(
            unmappedValue(unmapped, at),
          );
      }
    }
  });
});

/** Every leaf of a Parquet file's schema, by dotted path, with its physical and logical types. */
async function leafTypes(file: string): Promise<Map<string, string>> {
  const rows = await query(
    `select name, type, converted_type, logical_type, num_children from parquet_schema('${file}')`,
  );
  const out = new Map<string, string>();
  const walk = (i: number, prefix: string): number => {
    const r = rows[i]!;
    const at = prefix ? `${prefix}.${String(r.name)}` : String(r.name);
    let next = i + 1;
    const children = Number(r.num_children ?? 0);
    if (children === 0) out.set(at, `${r.type} ${r.converted_type} ${r.logical_type}`);
    for (let c = 0; c < children; c++) next = walk(next, at);
    return next;
  };
  for (let i = 1; i < rows.length;) i = walk(i, '');
  return out;
}

describe('objects of one class written from batches with different fields', () => {
  const logins = () =>
    samples().filter((e) => e.class_uid === 3002 && e.actor?.user?.name && e.actor.user.uid && e.src_endpoint?.ip);
  const written: string[] = [];

  beforeAll(async () => {
    const sink = s3SinkType.create(
      sinkContext({
        config: {
          bucket: BUCKET,
          region: 'us-east-1',
          endpoint,
          format: 'parquet_security_lake',
          security_lake: { source_name: 'merge_{class_name}', account_id: ACCOUNT },
        },
        credential: KEY,
      }),
    );
    // The first batch without src_endpoint and with actor.user.name alone, the second with
    // actor.user.uid alone: the actor struct differs in shape between the two objects.
    const batches = [
      logins().map(({ src_endpoint: _, ...e }, i) => ({
        ...e,
        actor: { user: { name: e.actor.user.name } },
        metadata: { ...e.metadata, uid: `a-${i}` },
      })),
      logins().map((e, i) => ({
        ...e,
        actor: { user: { uid: e.actor.user.uid } },
        metadata: { ...e.metadata, uid: `b-${i}` },
      })),
    ];
    for (const [b, events] of batches.entries()) {
      const ids = events.map((_, i) => uuidv7({ msecs: Date.UTC(2025, 2, 15, b) + i }));
      expect(await sink.send(sinkBatch(events, { ids }), AbortSignal.timeout(60_000))).toEqual({});
    }
    await sink.close();
    const s3 = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: KEY.access_key_id, secretAccessKey: KEY.secret_access_key },
    });
    const list = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'ext/merge_authentication/' }));
    for (const [i, o] of (list.Contents ?? []).entries()) {
      const body = await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: o.Key! }))).Body!;
      const file = path.join(dir, `merge-${i}.parquet`);
      await writeFile(file, await body.transformToByteArray());
      written.push(file);
    }
    s3.destroy();
  }, 120_000);

  it('writes only the columns each batch has, plus the always-present ones, each typed as in the class', async () => {
    expect(logins().length).toBeGreaterThan(0);
    expect(written).toHaveLength(2);
    const [a, b] = await Promise.all(written.map(leafTypes));
    const paths = (m: Map<string, string>, head: string) => [...m.keys()].filter((k) => k.startsWith(`${head}.`));
    // Listing order aside: one file has actor.user.name and no src_endpoint, the other actor.user.uid.
    const [first, second] = a!.has('actor.user.name') ? [a!, b!] : [b!, a!];
    expect(paths(first, 'actor')).toEqual(['actor.user.name']);
    expect(paths(first, 'src_endpoint')).toEqual([]);
    expect(paths(second, 'actor')).toEqual(['actor.user.uid']);
    expect(paths(second, 'src_endpoint')).toContain('src_endpoint.ip');
    for (const column of ['class_uid', 'category_uid', 'activity_id', 'type_uid', 'severity_id', 'time'])
      for (const m of [a!, b!]) expect(m.has(column), column).toBe(true);
    for (const m of [a!, b!]) expect(m.has('metadata.product.vendor_name')).toBe(true);
    // A column both files have has the same type in both.
    const shared = [...a!.keys()].filter((k) => b!.has(k));
    expect(shared.length).toBeGreaterThan(5);
    for (const k of shared) expect(b!.get(k), k).toBe(a!.get(k));
  });

  it('reads back together by column name, a column one file lacks being null', async () => {
    const rows = await query(
      `select metadata.uid as uid, actor.user.name as name, actor.user.uid as user, src_endpoint.ip as ip, time, class_uid from ${union(written)} order by uid`,
    );
    const events = logins();
    const row = (uid: string, e: Raw, name: unknown, user: unknown, ip: unknown) => ({
      uid,
      name,
      user,
      ip,
      time: e.time,
      class_uid: 3002,
    });
    const expected = [
      ...events.map((e, i) => row(`a-${i}`, e, e.actor.user.name, null, null)),
      ...events.map((e, i) => row(`b-${i}`, e, null, e.actor.user.uid, e.src_endpoint.ip)),
    ].sort((x, y) => (x.uid < y.uid ? -1 : 1));
    expect(rows.map((r) => ({ ...r, time: Number(r.time) }))).toEqual(expected);
    const types = await query(`describe select * from ${union(written)}`);
    expect(String(types.find((t) => t.column_name === 'actor')!.column_type)).toMatch(
      /^STRUCT\("user" STRUCT\(("name" VARCHAR, uid VARCHAR|uid VARCHAR, "name" VARCHAR)\)\)$/,
    );
  });
});
