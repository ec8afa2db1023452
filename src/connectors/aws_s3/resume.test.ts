// The connector's pages against a local S3 server (s3rver): a large gzip object read across
// pages, a page fetched again after a crash before its cursor was stored (the same events under
// the same keys, which the normalization stage drops), key-layout recognition, and errors.
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { contextPool, vendorRejection } from '../../../test/support/vendors/collect-all.js';
import { startLocalS3, type LocalS3 } from '../../../test/support/s3rver.js';
import { awsS3Connector } from './index.js';
import { skipTo } from './cursor.js';
import { streamOfKey } from './layouts.js';

let s3: LocalS3;
const { ctx, closeAll } = contextPool(() => ({ ...s3.config, layout: 'ndjson' }), ['secret_access_key']);

beforeAll(async () => {
  s3 = await startLocalS3('resume-bucket');
});
afterEach(closeAll);
afterAll(async () => {
  await s3?.close();
});

const from = new Date(Date.now() - 86_400_000);
const page = (cursor: string | null, pageSize = 1000) =>
  awsS3Connector.fetchPage(ctx(), { stream: 'objects', cursor, from, to: null, pageSize });

describe('aws_s3 pages', () => {
  it('reads a large object across pages, and a page fetched again after a crash carries the same events and keys', async () => {
    const n = 2300;
    await s3.put('big/one.ndjson.gz', gzipSync(Array.from({ length: n }, (_, i) => JSON.stringify({ i })).join('\n')));
    const first = await page(null);
    expect(first.events).toHaveLength(1000);
    expect(first.more).toBe(true);
    const second = await page(first.next);
    expect(second.events.map((e) => e.i)).toEqual(Array.from({ length: 1000 }, (_, i) => 1000 + i));
    // The worker died after accepting the second page and before storing its cursor: the
    // next cycle starts again from the first page's cursor, in a reader opened anew.
    const again = await page(first.next);
    expect(again.keys).toEqual(second.keys);
    expect(again.events).toEqual(second.events);
    const third = await page(again.next);
    expect(third.events.map((e) => e.i)).toEqual(Array.from({ length: 300 }, (_, i) => 2000 + i));
    expect(new Set([...first.keys, ...second.keys, ...third.keys]).size).toBe(n);
    // The pass completes at the end of the listing: nothing more, and nothing read twice.
    const last = third.more ? await page(third.next) : third;
    expect(last.more).toBe(false);
    const after = await page(last.next);
    expect(after.events).toHaveLength(0);
  });

  it('tells layouts from keys, and skips whole old days of a date-partitioned prefix', () => {
    expect(streamOfKey('AWSLogs/111122223333/CloudTrail/eu-west-1/2024/05/01/x_CloudTrail_x.json.gz', 'auto')).toBe(
      'cloudtrail',
    );
    expect(streamOfKey('AWSLogs/o-abc123/111122223333/CloudTrail/eu-west-1/2024/05/01/x.json.gz', 'auto')).toBe(
      'cloudtrail',
    );
    expect(streamOfKey('AWSLogs/111122223333/CloudTrail-Digest/eu-west-1/2024/05/01/x.json.gz', 'auto')).toBe(
      undefined,
    );
    expect(streamOfKey('AWSLogs/123456789010/vpcflowlogs/us-east-1/2024/05/01/f.log.gz', 'auto')).toBe('flow_logs');
    expect(streamOfKey('aws/VPC_FLOW/2.0/region=us-east-1/eventDay=20240501/f.gz.parquet', 'auto')).toBe(
      'security_lake',
    );
    expect(streamOfKey('app/events.ndjson', 'auto')).toBe('objects');
    expect(streamOfKey('app/events.ndjson', 'cloudtrail')).toBe('cloudtrail');
    const floor = Date.UTC(2024, 4, 10, 12);
    expect(skipTo('AWSLogs/1/CloudTrail/r/2024/04/01/a.json.gz', floor)).toBe('AWSLogs/1/CloudTrail/r/2024/05/09');
    expect(skipTo('AWSLogs/1/CloudTrail/r/2024/05/09/a.json.gz', floor)).toBeUndefined();
    expect(skipTo('x/eventDay=20240401/a.parquet', floor)).toBe('x/eventDay=20240509');
    expect(skipTo('app/events.ndjson', floor)).toBeUndefined();
  });

  it('test() lists the bucket; a missing bucket is a config error and a refused cursor says to reset it', async () => {
    await expect(awsS3Connector.test(ctx())).resolves.toMatch(/ListObjectsV2 answered for s3:\/\/resume-bucket\//);
    const missing = await vendorRejection(awsS3Connector.test(ctx({ ...s3.config, bucket: 'no-such-bucket' })));
    expect(missing.kind).toBe('config');
    const bad = await vendorRejection(page('not a cursor'));
    expect(bad.kind).toBe('bad_request');
    expect(bad.message).toMatch(/reset the cursor/);
  });
});
