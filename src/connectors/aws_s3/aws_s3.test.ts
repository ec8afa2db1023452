// The S3 object collector against a local S3 server (s3rver), through the real collection
// engine of a test app: an integration created over the API, cycles run by the engine, events
// normalized by the worker's consumers, and what a user reads (the integration's ingest status,
// its stream counters). Real files: fixtures/README.md says where each comes from.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { startLocalS3, type LocalS3 } from '../../../test/support/s3rver.js';
import { NORMALIZE_QUEUE } from '../../pipeline/envelope.js';
import type { Consumer } from '../../platform/queue/port.js';
import { startConsumers } from '../../roles/jobs.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
const today = new Date().toISOString().slice(0, 10).replace(/-/g, '/');
const stamp = new Date().toISOString().slice(0, 16).replace(/[-:]/g, '') + 'Z';
const CT = `AWSLogs/111122223333/CloudTrail/us-east-2/${today}`;
const ctKey = (name: string) => `${CT}/111122223333_CloudTrail_us-east-2_${stamp}_${name}.json.gz`;

let s3: LocalS3;
let db: TestDatabase;
let t: TestApp;
let consumers: Consumer[] = [];
let admin: Principal;
let orgId: number;
let integrationId: number;

async function startApp(): Promise<void> {
  t = await createTestApp({ database: db });
  consumers = startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => j.queue === NORMALIZE_QUEUE),
    t.container.logger,
  );
}

async function stopApp(): Promise<void> {
  await Promise.all(consumers.map((c) => c.close()));
  await t.close();
}

async function cycle(stream: string): Promise<number> {
  const outcome = await t.container.collection.engine.runCycle(integrationId, stream);
  expect(outcome, JSON.stringify(outcome)).toMatchObject({ status: 'succeeded' });
  return outcome.events;
}

interface Counts {
  events_in: number;
  normalized: number;
  quarantined: number;
  duplicates: number;
}

/** The stream's counters once every accepted event was normalized or quarantined. */
async function settled(stream: string, expected: number): Promise<Counts> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/ingest/integrations/${integrationId}`,
      headers: admin.headers,
    });
    expect(res.statusCode).toBe(200);
    const s = res.json<{ stats: { streams: { stream: string; events_in: number }[] } }>().stats.streams;
    const eventsIn = s.find((x) => x.stream === stream)?.events_in ?? 0;
    const row = await t.container.database.db
      .selectFrom('stream_counters')
      .select((eb) => [
        eb.fn.sum<string>('normalized').as('normalized'),
        eb.fn.sum<string>('quarantined').as('quarantined'),
        eb.fn.sum<string>('duplicates').as('duplicates'),
      ])
      .where('integration_id', '=', integrationId)
      .where('stream', '=', stream)
      .executeTakeFirst();
    const counts = {
      events_in: eventsIn,
      normalized: Number(row?.normalized ?? 0),
      quarantined: Number(row?.quarantined ?? 0),
      duplicates: Number(row?.duplicates ?? 0),
    };
    if (counts.events_in >= expected && counts.normalized + counts.quarantined >= counts.events_in) return counts;
    if (Date.now() > deadline) throw new Error(`stream ${stream} did not settle: ${JSON.stringify(counts)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  s3 = await startLocalS3();
  db = await createTestDatabase();
  await startApp();
  orgId = await createOrganization(t, 'S3 objects');
  admin = await createPrincipal(t, { role: 'admin', organizationId: orgId });
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/integrations/',
    headers: admin.headers,
    payload: {
      name: 'log bucket',
      platform: 'aws_s3',
      organization_id: orgId,
      config: { collect: true, ...s3.config },
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  integrationId = res.json<{ id: number }>().id;
  // The secret is write-only: stored encrypted, answered as configured.
  expect(res.json<{ config: Record<string, unknown> }>().config.secret_access_key).toEqual({ configured: true });
}, 60_000);

afterAll(async () => {
  await stopApp();
  await db?.close();
  await s3?.close();
});

describe('aws_s3: CloudTrail log files', () => {
  it('reads each gzip log file once, one event per record, normalized by the CloudTrail mapping', async () => {
    for (const name of ['ConsoleLogin', 'AssumeRole', 'CreateUser', 'UpdateTrail'])
      await s3.put(ctKey(name), fixture(`cloudtrail/${name}.json.gz`));
    // Not a CloudTrail log file: another stream's object, and a digest, which the cloudtrail stream passes over.
    await s3.put(`AWSLogs/111122223333/CloudTrail-Digest/us-east-2/${today}/digest.json.gz`, gzipSync('{}'));
    expect(await cycle('cloudtrail')).toBe(4);
    const counts = await settled('cloudtrail', 4);
    expect(counts).toMatchObject({ events_in: 4, normalized: 4, quarantined: 0 });
    // A second cycle finds nothing new.
    expect(await cycle('cloudtrail')).toBe(0);
  });

  it('reads a file that appears later under an earlier key when its LastModified is within the lookback window', async () => {
    const late = `${CT}/000000000000_CloudTrail_us-east-2_late.json.gz`;
    const tooLate = `${CT}/000000000001_CloudTrail_us-east-2_too-late.json.gz`;
    await s3.put(late, fixture('cloudtrail/ConsoleLogin.json.gz'));
    await s3.put(tooLate, fixture('cloudtrail/CreateUser.json.gz'));
    // Uploads that started 30 minutes and 3 hours before the newest object seen (lookback: 60 minutes).
    s3.setModified(late, new Date(Date.now() - 30 * 60_000));
    s3.setModified(tooLate, new Date(Date.now() - 3 * 3_600_000));
    expect(await cycle('cloudtrail')).toBe(1);
    expect(await cycle('cloudtrail')).toBe(0);
    expect((await settled('cloudtrail', 5)).events_in).toBe(5);
  });
});

describe('aws_s3: VPC Flow Logs', () => {
  it('reads a gzip flow log file with its header line into records the VPC flow mapping normalizes', async () => {
    const key = `AWSLogs/123456789010/vpcflowlogs/us-east-1/${today}/123456789010_vpcflowlogs_us-east-1_fl-1234abcd_${stamp}_a1b2c3d4.log.gz`;
    await s3.put(key, gzipSync(fixture('vpc_flow/default-format.log')));
    expect(await cycle('flow_logs')).toBe(5);
    expect(await settled('flow_logs', 5)).toMatchObject({ events_in: 5, normalized: 5, quarantined: 0 });
    expect(await cycle('flow_logs')).toBe(0);
  });
});

describe('aws_s3: Security Lake', () => {
  it('reads the rows of Parquet objects as OCSF events, passed through as themselves and validated, no mapping needed', async () => {
    const base = `aws/CLOUD_TRAIL_MGMT/1.0/region=us-east-2/accountId=111122223333/eventDay=${today.replace(/\//g, '')}`;
    await s3.put(`${base}/ConsoleLogin.gz.parquet`, fixture('security_lake/cloudtrail-ConsoleLogin.gz.parquet'));
    await s3.put(`ext/vpc/${today}/example0.gz.parquet`, fixture('security_lake/vpc_flow-example0.gz.parquet'));
    await s3.put(`ext/vpc/${today}/example3.gz.parquet`, fixture('security_lake/vpc_flow-example3.gz.parquet'));
    expect(await cycle('security_lake')).toBe(3);
    // The samples are OCSF 1.0.0-rc.2: the strict default policy holds them for what 1.8.0 no
    // longer has (cloud.account_uid, ...), as it would a mapping's output; never for want of a mapping.
    expect(await settled('security_lake', 3)).toMatchObject({ events_in: 3, normalized: 0, quarantined: 3 });
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/quarantine?integration_id=${integrationId}&stream=security_lake`,
      headers: admin.headers,
    });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json<{ items: { id: string; error_kind: string; error_detail: string }[] }>().items;
    expect(items.map((i) => i.error_kind)).toEqual(['invalid_ocsf', 'invalid_ocsf', 'invalid_ocsf']);
    expect(items.map((i) => i.error_detail).join('\n')).toContain('unknown_attribute at cloud.account_uid');
    // Under the lenient policy the same events are delivered, flagged valid=false.
    const policy = await t.app.inject({
      method: 'PUT',
      url: `/api/ocsf/policies/${orgId}`,
      headers: admin.headers,
      payload: { mode: 'lenient' },
    });
    expect(policy.statusCode, policy.body).toBe(200);
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/quarantine/bulk/reprocess',
      headers: admin.headers,
      payload: { ids: items.map((i) => i.id) },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ requested: 3, reprocessed: 3, failed: 0 });
    expect(await settled('security_lake', 3)).toMatchObject({ events_in: 3, normalized: 3 });
    expect(await cycle('security_lake')).toBe(0);
  });
});

describe('aws_s3: other objects', () => {
  it('reads NDJSON across pages (2500 events, gzip) and text lines, each exactly once', async () => {
    const lines = Array.from({ length: 2500 }, (_, i) => JSON.stringify({ seq: i, msg: `event ${i}` })).join('\n');
    await s3.put('app/2024/events.ndjson.gz', gzipSync(lines));
    await s3.put('app/2024/plain.log', 'first line\nsecond line\n');
    expect(await cycle('objects')).toBe(2502);
    expect((await settled('objects', 2502)).events_in).toBe(2502);
    expect(await cycle('objects')).toBe(0);
  });
});

describe('aws_s3: restart', () => {
  it('a new app on the same database reads nothing already read, and what is new', async () => {
    await stopApp();
    await startApp();
    for (const stream of ['cloudtrail', 'flow_logs', 'security_lake', 'objects']) expect(await cycle(stream)).toBe(0);
    await s3.put(ctKey('after-restart'), fixture('cloudtrail/AssumeRole.json.gz'));
    expect(await cycle('cloudtrail')).toBe(1);
    expect((await settled('cloudtrail', 6)).events_in).toBe(6);
  });
});
