import { gunzipSync } from 'node:zlib';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { v7 as uuidv7 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { arrayBufferOf } from '../../../../test/support/fake-s3.js';
import { sinkBatch } from '../../../../test/support/sink-batch.js';
import { createNetPolicy } from '../../../platform/net/ssrf.js';
import { DeliveryError } from '../types.js';
import { createRedactor, redactPatterns } from '../../../core/redaction.js';
import { checkEndpointAddress, toDeliveryError } from './client.js';
import { batchTime, idsDigest, ndjsonKey, normalizePrefix, securityLakeKey, sourceName } from './layout.js';
import { classSchema, inferSchema, type LakeNode } from './lake-schema.js';
import { buildParquet, groupByClassAndDay } from './parquet.js';
import { s3Settings, settingsProblem } from './sink.js';

describe('layout', () => {
  it('takes the batch time from the earliest UUIDv7 id, else from the events, else the fallback', () => {
    const t = Date.UTC(2024, 5, 1, 8, 30);
    const ids = [uuidv7({ msecs: t + 5 }), uuidv7({ msecs: t }), uuidv7({ msecs: t + 9 })];
    expect(batchTime(sinkBatch([{}, {}, {}], { ids }))).toBe(t);
    expect(batchTime(sinkBatch([{ time: 2000 }, { time: 1000 }], { ids: ['a', 'b'] }))).toBe(1000);
    expect(batchTime(sinkBatch([{}], { ids: ['a'] }), () => 42)).toBe(42);
  });

  it('builds keys that depend only on the ids', () => {
    const digest = idsDigest(['a', 'b']);
    expect(digest).toMatch(/^[0-9a-f]{16}$/);
    expect(idsDigest(['a', 'b'])).toBe(digest);
    expect(idsDigest(['b', 'a'])).not.toBe(digest);
    expect(idsDigest(['ab'])).not.toBe(idsDigest(['a', 'b']));
    expect(ndjsonKey('logs', Date.UTC(2024, 11, 31, 23, 5, 9), digest)).toBe(
      `logs/year=2024/month=12/day=31/hour=23/20241231T230509Z-${digest}.ndjson.gz`,
    );
    expect(['', '/', 'a', '/a/b/', 'a/'].map(normalizePrefix)).toEqual(['', '', 'a/', 'a/b/', 'a/']);
  });

  it('fills the source name placeholders and keeps key segments safe', () => {
    expect(sourceName('weir_{class_name}', 3002, 'authentication')).toBe('weir_authentication');
    expect(sourceName('src-{class_uid}', 4001, 'network_activity')).toBe('src-4001');
    expect(sourceName('a/b {class_name}', 1, 'x/y')).toBe('a_b_x_y');
    expect(
      securityLakeKey(
        { source_name: 'x', account_id: '111122223333', source_version: '1.0' },
        'x',
        'eu-west-1',
        '20240101',
        0,
        'abc',
      ),
    ).toBe('ext/x/1.0/region=eu-west-1/accountId=111122223333/eventDay=20240101/19700101T000000Z-abc.gz.parquet');
  });
});

describe('parquet', () => {
  it('groups by class and event day, refusing events without a class', () => {
    const day = Date.UTC(2024, 0, 1);
    const events = [
      { class_uid: 3002, time: day },
      { class_uid: 4001, time: day },
      { class_uid: 3002, time: day + 86_400_000 },
      { time: day },
      { class_uid: 3002 },
      { class_uid: 9999, class_name: 'My Custom Thing' },
    ];
    const { groups, refused } = groupByClassAndDay(events, day);
    expect(refused).toEqual([3]);
    expect(groups.map((g) => [g.classUid, g.className, g.day, g.indexes])).toEqual([
      [3002, 'authentication', '20240101', [0, 4]],
      [4001, 'network_activity', '20240101', [1]],
      [3002, 'authentication', '20240102', [2]],
      [9999, 'my_custom_thing', '20240101', [5]],
    ]);
  });

  it('types the columns of a known class from the OCSF catalog, objects as structs three names deep', () => {
    const schema = classSchema(4001)!;
    const at = (path: string): LakeNode | undefined =>
      path.split('.').reduce<LakeNode | undefined>((n, name, i) => {
        if (i === 0) return schema.byName.get(name);
        return n?.kind === 'struct' ? n.byName.get(name) : undefined;
      }, undefined);
    expect(at('class_uid')).toMatchObject({ kind: 'leaf', leaf: 'int32', list: false });
    expect(at('type_uid')).toMatchObject({ leaf: 'int64' });
    expect(at('time')).toMatchObject({ leaf: 'int64' });
    expect(at('time_dt')).toMatchObject({ leaf: 'timestamp' });
    expect(at('src_endpoint')).toMatchObject({ kind: 'struct', list: false });
    expect(at('src_endpoint.port')).toMatchObject({ leaf: 'int32' });
    expect(at('src_endpoint.location.city')).toMatchObject({ leaf: 'string' });
    expect(at('observables')).toMatchObject({ kind: 'struct', list: true });
    expect(at('metadata.profiles')).toMatchObject({ kind: 'leaf', leaf: 'string', list: true });
    // Third level objects are JSON text; recursion stops there.
    expect(at('metadata.product.feature')).toMatchObject({ kind: 'leaf', leaf: 'json', list: false });
    expect(at('actor.process.parent_process')).toMatchObject({ leaf: 'json' });
    expect(at('unmapped')).toMatchObject({ kind: 'map' });
    expect(classSchema(999_999)).toBeNull();
  });

  it('infers the columns of an unknown class from its values', () => {
    const schema = inferSchema([
      { a: 1, b: 'x', time: 5, f: 1.5, o: { k: 1 } },
      { a: 2.5, b: 3, flag: true },
    ]);
    expect(schema.columns.map((c) => [c.name, c.kind === 'leaf' ? c.leaf : c.kind])).toEqual([
      ['a', 'double'],
      ['b', 'json'],
      ['f', 'double'],
      ['flag', 'boolean'],
      ['o', 'json'],
      ['time', 'int64'],
      ['unmapped', 'map'],
    ]);
  });

  it('writes a readable file for an unknown class, keeping the event own unmapped object', async () => {
    const events = [
      { class_uid: 9999, time: 2000, n: 7, unmapped: { vendor: 'x', deep: { k: [1, 2] } } },
      { class_uid: 9999, time: 1000, n: 8 },
    ];
    const bytes = buildParquet(events, 9999);
    const file = arrayBufferOf(bytes);
    expect(parquetMetadata(file).key_value_metadata).toContainEqual({ key: 'ocsf.class_uid', value: '9999' });
    const rows = await parquetReadObjects({
      file,
      compressors: { GZIP: (i: Uint8Array) => new Uint8Array(gunzipSync(i)) },
    });
    expect(rows.map((r) => [r.n, r.time, r.unmapped])).toEqual([
      [8n, 1000n, undefined],
      [7n, 2000n, { vendor: 'x', 'deep.k': '[1,2]' }],
    ]);
  });
});

describe('settings and errors', () => {
  it('defaults path-style addressing to whether an endpoint is set, and names what cannot work', () => {
    expect(s3Settings({ bucket: 'b' })).toMatchObject({
      region: 'us-east-1',
      forcePathStyle: false,
      prefix: 'weir/',
      format: 'ndjson_gz',
    });
    expect(s3Settings({ bucket: 'b', endpoint: 'https://minio:9000' }).forcePathStyle).toBe(true);
    expect(s3Settings({ bucket: 'b', endpoint: 'https://r2', force_path_style: false }).forcePathStyle).toBe(false);
    const cred = { access_key_id: 'a', secret_access_key: 'b' };
    expect(settingsProblem(s3Settings({ bucket: 'b' }), null)).toMatch(/credential/);
    expect(settingsProblem(s3Settings({ bucket: 'b', format: 'parquet_security_lake' }), cred)).toMatch(
      /security_lake/,
    );
    expect(settingsProblem(s3Settings({ bucket: 'b', kms_key_id: 'k' }), cred)).toMatch(/aws:kms/);
    expect(settingsProblem(s3Settings({ bucket: 'b', sse: 'aws:kms', kms_key_id: 'k' }), cred)).toBeUndefined();
  });

  it('checks literal endpoint addresses against the guard', () => {
    const strict = createNetPolicy({ allowCidrs: [] });
    expect(() => checkEndpointAddress('http://169.254.169.254', strict)).toThrow(DeliveryError);
    expect(() => checkEndpointAddress('http://[::1]:9000', strict)).toThrow(/blocked|refused/);
    expect(() => checkEndpointAddress('https://s3.example.net', strict)).not.toThrow();
    expect(() => checkEndpointAddress('https://10.1.2.3:9000', strict)).not.toThrow();
  });

  it('maps SDK failures without a status by their system code, and S3 codes by meaning', () => {
    const sys = (code: string, name = 'Error') => Object.assign(new Error(`boom ${code}`), { code, name });
    expect(toDeliveryError(sys('ENOTFOUND'), 'PutObject', redactPatterns).kind).toBe('dns');
    expect(toDeliveryError(sys('DEPTH_ZERO_SELF_SIGNED_CERT'), 'PutObject', redactPatterns).kind).toBe('tls');
    expect(toDeliveryError(sys('ECONNRESET', 'TimeoutError'), 'PutObject', redactPatterns).kind).toBe('connection');
    expect(
      toDeliveryError(Object.assign(new Error('x'), { name: 'TimeoutError' }), 'PutObject', redactPatterns).kind,
    ).toBe('timeout');
    const s3err = (name: string, status: number, headers: Record<string, string> = {}, message = name) =>
      Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status }, $response: { headers } });
    const redirect = toDeliveryError(
      s3err('PermanentRedirect', 301, { 'x-amz-bucket-region': 'eu-central-1' }),
      'PutObject',
      redactPatterns,
    );
    expect(redirect).toMatchObject({ kind: 'config', retryable: false });
    expect(redirect.message).toContain('eu-central-1');
    expect(toDeliveryError(s3err('KMS.NotFoundException', 400), 'PutObject', redactPatterns).kind).toBe('config');
    expect(toDeliveryError(s3err('RequestTimeTooSkewed', 403), 'PutObject', redactPatterns)).toMatchObject({
      kind: 'http_4xx',
      retryable: true,
    });
    expect(toDeliveryError(s3err('403', 403, {}, 'UnknownError'), 'HeadBucket', redactPatterns).message).toBe(
      'S3 HeadBucket: 403',
    );
    expect(
      toDeliveryError(
        s3err('AccessDenied', 403, {}, 'key s3cr3t-value leaked'),
        'PutObject',
        createRedactor(['s3cr3t-value']),
      ).message,
    ).not.toContain('s3cr3t-value');
    const slow = (retryAfter: string) =>
      toDeliveryError(s3err('SlowDown', 503, { 'retry-after': retryAfter }), 'PutObject', redactPatterns);
    expect(slow('12')).toMatchObject({ kind: 'rate_limited', retryAfterMs: 12_000 });
    expect(slow('soon').retryAfterMs).toBeUndefined();
  });
});
