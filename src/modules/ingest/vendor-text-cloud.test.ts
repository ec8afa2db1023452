// Text sources Weir knows by platform (Cisco ASA, VPC flow logs, Zscaler NSS): their platform
// declares the stream as text, so an integration needs no text_streams of its own; each line
// pushed is one event, and the stream's built-in mapping parses and normalizes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { catchAll, outputs, runNormalize } from '../../../test/support/normalization.js';
import { NORMALIZE_QUEUE, type IngestBatch } from '../../pipeline/envelope.js';

type Json = Record<string, unknown>;
let t: TestApp;
let org: number;
let admin: Principal;
const queued = new Map<string, IngestBatch>();

async function tokenFor(platform: string): Promise<string> {
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/integrations/',
    headers: admin.headers,
    payload: { name: platform, platform, organization_id: org, config: {} },
  });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json<Json>().id as number;
  return (
    await t.app.inject({ method: 'POST', url: `/api/ingest/integrations/${id}/token`, headers: admin.headers })
  ).json<Json>().token as string;
}

async function pushLines(token: string, stream: string, lines: string[]): Promise<IngestBatch> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/ingest/${stream}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
    payload: `${lines.join('\n')}\n`,
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toMatchObject({ accepted: lines.length, rejected: 0 });
  const id = (res.json<Json>().batch_ids as string[])[0]!;
  const deadline = Date.now() + 10_000;
  while (!queued.has(id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const batch = queued.get(id)!;
  expect(batch.events.map((e) => JSON.parse(e as string) as Json)).toEqual(lines.map((message) => ({ message })));
  return batch;
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  org = await createOrganization(t, 'Vendor Text Org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  await catchAll(t, org);
  t.container.queue.consume<IngestBatch>(NORMALIZE_QUEUE, async (job) => {
    queued.set(job.id, job.payload);
  });
});
afterAll(async () => t?.close());

describe('text streams declared by their platform', () => {
  it('Cisco ASA: syslog lines become Network Activity and Authentication; a message OCSF has no class for is a Base Event', async () => {
    const batch = await pushLines(await tokenFor('cisco_asa'), 'syslog', [
      '<166>Mar 05 2024 14:22:31 asa-edge-01 : %ASA-6-302013: Built inbound TCP connection 4417 for outside:203.0.113.45/51544 (203.0.113.45/51544) to dmz:192.0.2.10/443 (198.51.100.10/443)',
      '<164>Mar 05 2024 14:24:10 asa-edge-01 : %ASA-4-106023: Deny tcp src outside:203.0.113.99/40222 dst inside:10.10.4.30/3389 by access-group "outside_access_in" [0x8ed66b60, 0xf8852875]',
      '<166>Mar 05 2024 14:25:00 asa-edge-01 : %ASA-6-605005: Login permitted from 10.10.4.5/52012 to management:192.0.2.1/https for user "netadmin"',
      "<165>Mar 05 2024 14:26:00 asa-edge-01 : %ASA-5-111008: User 'enable_15' executed the 'write memory' command.",
    ]);
    await runNormalize(t, batch);
    const out = (await outputs(t, batch.id)).map((o) => o.ocsf);
    expect(out).toMatchObject([
      {
        class_uid: 4001,
        activity_id: 1,
        time: Date.UTC(2024, 2, 5, 14, 22, 31),
        src_endpoint: { ip: '203.0.113.45', port: 51544 },
        device: { hostname: 'asa-edge-01' },
      },
      { class_uid: 4001, activity_id: 5, firewall_rule: { name: 'outside_access_in' }, action_id: 2 },
      { class_uid: 3002, activity_id: 1, user: { name: 'netadmin' }, status_id: 1, service: { name: 'https' } },
      { class_uid: 0, activity_id: 99, metadata: { event_code: '111008' }, device: { hostname: 'asa-edge-01' } },
    ]);
    const q = await t.app.inject({
      method: 'GET',
      url: `/api/quarantine?integration_id=${batch.integration_id}`,
      headers: admin.headers,
    });
    expect(q.json<{ items: Json[] }>().items).toEqual([]);
  });

  it('VPC flow logs: a default-format line and a JSON record on the same stream', async () => {
    const batch = await pushLines(await tokenFor('aws_vpc_flow'), 'flow_logs', [
      '2 123456789010 eni-1235b8ca123456789 172.31.9.69 172.31.9.12 49761 3389 6 20 4249 1418530010 1418530070 REJECT OK',
      JSON.stringify({
        version: 5,
        'account-id': '123456789010',
        'interface-id': 'eni-0a1b2c3d4e5f67890',
        srcaddr: '10.0.1.5',
        dstaddr: '198.51.100.40',
        srcport: 40999,
        dstport: 443,
        protocol: 6,
        packets: 3,
        bytes: 180,
        start: 1709648520,
        end: 1709648580,
        action: 'ACCEPT',
        'log-status': 'OK',
        'flow-direction': 'egress',
      }),
    ]);
    await runNormalize(t, batch);
    expect((await outputs(t, batch.id)).map((o) => o.ocsf)).toMatchObject([
      { class_uid: 4001, activity_id: 5, dst_endpoint: { port: 3389 }, cloud: { provider: 'AWS' } },
      {
        class_uid: 4001,
        activity_id: 6,
        connection_info: { direction_id: 2 },
        observation_point_id: 1,
        time: 1709648520000,
      },
    ]);
  });

  it('Zscaler ZIA: a tab-separated key=value NSS line becomes HTTP Activity', async () => {
    const fields = {
      time: 'Tue Mar  5 14:23:02 2024',
      recordid: '7342981175260233730',
      login: 'jane.doe@example.com',
      cip: '10.20.1.15',
      sip: '198.51.100.80',
      proto: 'HTTPS',
      reqmethod: 'POST',
      url: 'upload.files.example.net/api/v2/upload',
      host: 'upload.files.example.net',
      respcode: '403',
      action: 'Blocked',
      reason: 'Blocked by DLP',
    };
    const batch = await pushLines(await tokenFor('zscaler_zia'), 'web', [
      Object.entries(fields)
        .map(([k, v]) => `${k}=${v}`)
        .join('\t'),
    ]);
    await runNormalize(t, batch);
    expect((await outputs(t, batch.id)).map((o) => o.ocsf)).toMatchObject([
      {
        class_uid: 4002,
        activity_id: 6,
        http_request: { url: { hostname: 'upload.files.example.net', path: '/api/v2/upload' } },
        http_response: { code: 403 },
        action_id: 2,
        metadata: { uid: '7342981175260233730' },
      },
    ]);
  });
});
