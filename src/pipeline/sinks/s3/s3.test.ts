import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { arrayBufferOf, startFakeS3, type FakeS3 } from '../../../../test/support/fake-s3.js';
import { ocsfEvents, sinkBatch, failure } from '../../../../test/support/sink-batch.js';
import { createLogger } from '../../../platform/logger.js';
import { createNetPolicy } from '../../../platform/net/ssrf.js';
import type { NetPolicy } from '../../../platform/net/policy.js';
import { destinationRedactor } from '../secrets.js';
import type { Sink } from '../types.js';
import { s3SinkType } from './index.js';

const KEY = { access_key_id: 'AKIDWEIRTEST0001', secret_access_key: 'weir-secret-key-0123456789' };
const TEMP = {
  access_key_id: 'ASIAWEIRTEMP0001',
  secret_access_key: 'weir-temp-secret-999',
  session_token: 'weir-session-token-abc',
};
const PUT_ONLY = { access_key_id: 'AKIDWEIRPUTONLY1', secret_access_key: 'weir-put-only-secret' };
const ACCOUNT = '123456789012';
const loopback = createNetPolicy({ allowCidrs: ['127.0.0.0/8', '::1/128'] });
const logger = createLogger({ level: 'silent', role: 'dispatcher' });

let s3: FakeS3;
const sinks: Sink[] = [];

beforeAll(async () => {
  s3 = await startFakeS3({
    credentials: [
      { accessKeyId: KEY.access_key_id, secretAccessKey: KEY.secret_access_key },
      { accessKeyId: TEMP.access_key_id, secretAccessKey: TEMP.secret_access_key, sessionToken: TEMP.session_token },
      { accessKeyId: PUT_ONLY.access_key_id, secretAccessKey: PUT_ONLY.secret_access_key, allow: ['put'] },
    ],
    buckets: ['weir-logs', 'weir-lake', { name: 'weir-eu', region: 'eu-west-1' }],
  });
});
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.close()));
});
afterAll(async () => s3?.close());

function sink(
  config: Record<string, unknown>,
  options: { credential?: Record<string, string> | null; net?: NetPolicy } = {},
): Sink {
  const created = s3SinkType.create({
    destinationId: 'dest-s3',
    organizationId: 1,
    config: {
      region: 'us-east-1',
      prefix: 'weir/',
      format: 'ndjson_gz',
      endpoint: s3.url,
      bucket: 'weir-logs',
      ...config,
    },
    credential: options.credential === undefined ? KEY : options.credential,
    redact: destinationRedactor(s3SinkType, options.credential === undefined ? KEY : options.credential, config),
    net: options.net ?? loopback,
    fileRoot: '/nonexistent',
    logger,
  });
  sinks.push(created);
  return created;
}

const signal = () => AbortSignal.timeout(10_000);
const at = Date.UTC(2024, 0, 15, 12, 34, 56, 789);
/** A batch whose envelope ids are UUIDv7 created at `at` (+i ms), as Weir's are. */
const v7Batch = (events: Record<string, unknown>[], base = at) =>
  sinkBatch(events, { ids: events.map((_, i) => uuidv7({ msecs: base + i })) });

describe('ndjson_gz', () => {
  it('writes one gzipped NDJSON object per batch, keyed by the ids, and a resend overwrites it', async () => {
    const out = sink({ storage_class: 'STANDARD_IA', sse: 'AES256', prefix: '/archive/ocsf' });
    const batch = v7Batch(ocsfEvents(3));
    const before = s3.keys('weir-logs').length;
    expect(await out.send(batch, signal())).toEqual({});
    const keys = s3.keys('weir-logs').filter((k) => k.startsWith('archive/ocsf/'));
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(
      /^archive\/ocsf\/year=2024\/month=01\/day=15\/hour=12\/20240115T123456Z-[0-9a-f]{16}\.ndjson\.gz$/,
    );
    const obj = s3.object('weir-logs', keys[0]!)!;
    expect(gunzipSync(obj.body).toString()).toBe(batch.lines.join('\n') + '\n');
    expect(obj.headers).toMatchObject({
      'content-type': 'application/x-ndjson',
      'content-encoding': 'gzip',
      'x-amz-storage-class': 'STANDARD_IA',
      'x-amz-server-side-encryption': 'AES256',
    });
    // The same ids again (a redelivered claim): same key, no second object.
    await out.send(sinkBatch(ocsfEvents(3), { ids: batch.ids }), signal());
    expect(s3.keys('weir-logs').length).toBe(before + 1);
    // Other ids: another object.
    await out.send(v7Batch(ocsfEvents(2), at + 10), signal());
    expect(s3.keys('weir-logs').length).toBe(before + 2);
  });

  it('signs with a session token when the credential has one; an empty batch writes nothing', async () => {
    const out = sink({ prefix: 'temp/' }, { credential: TEMP });
    await out.send(v7Batch(ocsfEvents(1)), signal());
    expect(s3.keys('weir-logs').some((k) => k.startsWith('temp/year=2024/'))).toBe(true);
    const count = s3.requests.length;
    expect(await out.send(sinkBatch([]), signal())).toEqual({});
    expect(s3.requests.length).toBe(count);
  });
});

describe('parquet_security_lake', () => {
  const lake = {
    format: 'parquet_security_lake',
    bucket: 'weir-lake',
    security_lake: { source_name: 'weir_{class_name}', account_id: ACCOUNT },
  };
  const gunzip = { GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)) };

  it('writes one Parquet object per class and event day, typed and nested columns, rows by time, in the custom source layout', async () => {
    const auth = ocsfEvents(3, Date.UTC(2024, 0, 15, 23, 59, 58)); // the third one is on the 16th
    auth[0]!.time = Date.UTC(2024, 0, 15, 23, 59, 59, 500); // out of order: the object is sorted by time
    auth[1]!.extra_field = 'kept';
    auth[1]!.severity_id = 'high'; // not an integer: kept in unmapped, not lost
    auth[1]!.time_dt = new Date(auth[1]!.time as number).toISOString();
    auth[1]!.is_mfa = true;
    const net = {
      class_uid: 4001,
      category_uid: 4,
      activity_id: 6,
      type_uid: 400106,
      severity_id: 1,
      time: Date.UTC(2024, 0, 15, 8),
      src_endpoint: { ip: '10.0.0.1', port: 443 },
    };
    const classless = { message: 'no class' };
    const batch = v7Batch([...auth, net, classless]);

    const result = await sink(lake).send(batch, signal());
    expect(result).toEqual({ rejected: [{ index: 4, reason: expect.stringContaining('class_uid') }] });

    const keys = s3.keys('weir-lake');
    const prefix = `region=us-east-1/accountId=${ACCOUNT}`;
    expect(keys).toHaveLength(3);
    expect(keys.map((k) => k.replace(/[^/]+$/, ''))).toEqual([
      `ext/weir_authentication/${prefix}/eventDay=20240115/`,
      `ext/weir_authentication/${prefix}/eventDay=20240116/`,
      `ext/weir_network_activity/${prefix}/eventDay=20240115/`,
    ]);
    for (const k of keys) expect(k).toMatch(/\/20240115T123456Z-[0-9a-f]{16}\.gz\.parquet$/);

    const obj = s3.object('weir-lake', keys[0]!)!;
    expect(obj.headers['content-type']).toBe('application/vnd.apache.parquet');
    const file = arrayBufferOf(obj.body);
    const meta = parquetMetadata(file);
    const el = (name: string) => meta.schema.find((s) => s.name === name);
    expect(el('class_uid')).toMatchObject({ type: 'INT32' });
    expect(el('type_uid')).toMatchObject({ type: 'INT64' });
    expect(el('time')).toMatchObject({ type: 'INT64' });
    expect(el('time_dt')).toMatchObject({ type: 'INT64', converted_type: 'TIMESTAMP_MILLIS' });
    expect(el('is_mfa')).toMatchObject({ type: 'BOOLEAN' });
    expect(el('message')).toMatchObject({ type: 'BYTE_ARRAY', converted_type: 'UTF8' });
    expect(el('metadata')).toMatchObject({ num_children: expect.any(Number) });
    expect(el('unmapped')).toMatchObject({ converted_type: 'MAP' });
    // The class's columns the batch has, and the always-present ones: no event has type_uid.
    expect(el('enrichments')).toBeUndefined();
    expect(meta.schema.length).toBeLessThan(40);
    expect(meta.row_groups[0]!.columns.some((c) => c.meta_data?.codec === 'GZIP')).toBe(true);

    const rows = await parquetReadObjects({ file, compressors: gunzip });
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r.message)).toEqual(['login 1', 'login 0']);
    expect(rows[0]!.time).toBe(BigInt(Date.UTC(2024, 0, 15, 23, 59, 59)));
    expect(rows[0]!.class_uid).toBe(3002);
    expect(rows[0]!.severity_id).toBeNull();
    expect(rows[0]!.unmapped).toEqual({ extra_field: 'kept', severity_id: 'high' });
    expect(rows[1]!.metadata).toMatchObject({ version: '1.3.0', product: { name: 'test', vendor_name: 'weir' } });
    expect(rows[1]!.user).toMatchObject({ name: 'user0' });
    expect(rows[1]!.unmapped).toBeUndefined();

    const netObj = s3.object('weir-lake', keys[2]!)!;
    const netRows = await parquetReadObjects({ file: arrayBufferOf(netObj.body), compressors: gunzip });
    expect(netRows).toHaveLength(1);
    expect(netRows[0]).toMatchObject({ class_uid: 4001, type_uid: 400106n, activity_id: 6 });
    expect(netRows[0]!.src_endpoint).toMatchObject({ ip: '10.0.0.1', port: 443 });
    // No metadata in the event, but the column Security Lake requires is there, null.
    expect(parquetMetadata(arrayBufferOf(netObj.body)).schema.map((e) => e.name)).toEqual(
      expect.arrayContaining(['metadata', 'product', 'vendor_name', 'version']),
    );
    expect(netRows[0]!.metadata ?? null).toBeNull();

    // Sent again: the same three keys, overwritten.
    await sink(lake).send(sinkBatch([...auth, net, classless], { ids: batch.ids }), signal());
    expect(s3.keys('weir-lake')).toEqual(keys);
  });

  it('adds the source version and refuses the format without its security_lake settings', async () => {
    await sink({
      ...lake,
      security_lake: { source_name: 'weir-{class_uid}', source_version: '2.0', account_id: ACCOUNT },
    }).send(v7Batch(ocsfEvents(1)), signal());
    expect(s3.keys('weir-lake')).toContainEqual(
      expect.stringMatching(
        new RegExp(`^ext/weir-3002/2\\.0/region=us-east-1/accountId=${ACCOUNT}/eventDay=20240115/`),
      ),
    );
    const err = await failure(
      sink({ format: 'parquet_security_lake', bucket: 'weir-lake' }).send(v7Batch(ocsfEvents(1)), signal()),
    );
    expect(err).toMatchObject({ kind: 'config', retryable: false });
  });
});

describe('failures', () => {
  it('maps a wrong secret and an unknown key to auth, never showing the secret', async () => {
    const wrong = { ...KEY, secret_access_key: 'definitely-not-the-secret' };
    const err = await failure(sink({}, { credential: wrong }).send(v7Batch(ocsfEvents(1)), signal()));
    expect(err).toMatchObject({ kind: 'auth', retryable: false, statusCode: 403 });
    expect(err.message).toContain('SignatureDoesNotMatch');
    expect(err.message).not.toContain(wrong.secret_access_key);
    const unknown = await failure(
      sink({}, { credential: { ...KEY, access_key_id: 'AKIDNOBODY000000' } }).send(v7Batch(ocsfEvents(1)), signal()),
    );
    expect(unknown).toMatchObject({ kind: 'auth', statusCode: 403 });
    expect(unknown.message).toContain('InvalidAccessKeyId');
    const badToken = await failure(
      sink({}, { credential: { ...TEMP, session_token: 'stolen' } }).send(v7Batch(ocsfEvents(1)), signal()),
    );
    expect(badToken).toMatchObject({ kind: 'auth' });
  });

  it('maps a missing bucket, a wrong region and a missing credential to config', async () => {
    expect(await failure(sink({ bucket: 'no-such-bucket' }).send(v7Batch(ocsfEvents(1)), signal()))).toMatchObject({
      kind: 'config',
      statusCode: 404,
      retryable: false,
    });
    const region = await failure(sink({ bucket: 'weir-eu' }).send(v7Batch(ocsfEvents(1)), signal()));
    expect(region).toMatchObject({ kind: 'config', statusCode: 400 });
    expect(region.message).toContain("expecting 'eu-west-1'");
    expect(await failure(sink({}, { credential: null }).send(v7Batch(ocsfEvents(1)), signal()))).toMatchObject({
      kind: 'config',
    });
  });

  it('maps SlowDown and 429 to rate_limited with Retry-After, 5xx to http_5xx, RequestTimeout to a retryable 4xx', async () => {
    const out = sink({});
    const send = () => failure(out.send(v7Batch(ocsfEvents(1)), signal()));
    s3.inject({
      status: 503,
      code: 'SlowDown',
      message: 'Please reduce your request rate.',
      headers: { 'retry-after': '7' },
    });
    expect(await send()).toMatchObject({ kind: 'rate_limited', retryable: true, statusCode: 503, retryAfterMs: 7000 });
    s3.inject({
      status: 429,
      code: 'TooManyRequests',
      headers: { 'retry-after': new Date(Date.now() + 30_000).toUTCString() },
    });
    const limited = await send();
    expect(limited).toMatchObject({ kind: 'rate_limited', statusCode: 429 });
    expect(limited.retryAfterMs).toBeGreaterThan(25_000);
    s3.inject({ status: 500, code: 'InternalError', message: 'We encountered an internal error. Please try again.' });
    expect(await send()).toMatchObject({ kind: 'http_5xx', retryable: true, statusCode: 500 });
    s3.inject({
      status: 400,
      code: 'RequestTimeout',
      message: 'Your socket connection to the server was not read from or written to within the timeout period.',
    });
    expect(await send()).toMatchObject({ kind: 'http_4xx', retryable: true, statusCode: 400 });
    s3.inject({ status: 400, code: 'EntityTooLarge' });
    expect(await send()).toMatchObject({ kind: 'http_4xx', retryable: false });
  });

  it('maps an abort to timeout, a reset and a refused connection to connection', async () => {
    s3.inject({ delayMs: 5000 });
    const started = Date.now();
    expect(await failure(sink({}).send(v7Batch(ocsfEvents(1)), AbortSignal.timeout(150)))).toMatchObject({
      kind: 'timeout',
      retryable: true,
    });
    expect(Date.now() - started).toBeLessThan(3000);
    s3.inject({ reset: true });
    expect(await failure(sink({}).send(v7Batch(ocsfEvents(1)), signal()))).toMatchObject({
      kind: 'connection',
      retryable: true,
    });

    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((r) => closed.close(() => r()));
    expect(
      await failure(sink({ endpoint: `http://127.0.0.1:${port}` }).send(v7Batch(ocsfEvents(1)), signal())),
    ).toMatchObject({ kind: 'connection' });
  });

  it('refuses loopback through the SSRF guard, by literal address and by name, before any request', async () => {
    const strict = createNetPolicy({ allowCidrs: [] });
    const count = s3.requests.length;
    const literal = await failure(sink({}, { net: strict }).send(v7Batch(ocsfEvents(1)), signal()));
    expect(literal).toMatchObject({ kind: 'blocked_address', retryable: false });
    const byName = await failure(
      sink({ endpoint: `http://localhost:${s3.port}` }, { net: strict }).send(v7Batch(ocsfEvents(1)), signal()),
    );
    expect(byName).toMatchObject({ kind: 'blocked_address', retryable: false });
    expect(s3.requests.length).toBe(count);
  });
});

describe('test()', () => {
  it('checks the bucket and the credential with HeadBucket', async () => {
    const ok = await sink({}).test(signal());
    expect(ok).toMatchObject({ ok: true, detail: expect.stringContaining('HeadBucket') });
    expect(ok.latency_ms).toBeGreaterThanOrEqual(0);
    expect(s3.requests.at(-1)).toMatchObject({ method: 'HEAD', bucket: 'weir-logs', key: '' });

    const denied = await sink({}, { credential: { ...KEY, secret_access_key: 'wrong-secret-value' } }).test(signal());
    expect(denied).toMatchObject({ ok: false, error_kind: 'auth' });
    expect(denied.detail).not.toContain('wrong-secret-value');
    expect(await sink({}, { credential: PUT_ONLY }).test(signal())).toMatchObject({
      ok: false,
      error_kind: 'auth',
      detail: expect.stringContaining('s3:ListBucket'),
    });
    expect(await sink({ bucket: 'no-such-bucket' }).test(signal())).toMatchObject({ ok: false, error_kind: 'config' });
    expect(await sink({}, { net: createNetPolicy({ allowCidrs: [] }) }).test(signal())).toMatchObject({
      ok: false,
      error_kind: 'blocked_address',
    });
    expect(await sink({}, { credential: null }).test(signal())).toMatchObject({ ok: false, error_kind: 'config' });
  });

  it('a put-only principal still delivers', async () => {
    await sink({ prefix: 'put-only/' }, { credential: PUT_ONLY }).send(v7Batch(ocsfEvents(1)), signal());
    expect(s3.keys('weir-logs').some((k) => k.startsWith('put-only/'))).toBe(true);
  });
});
