// Text streams on push: an integration declares streams as text (config.text_streams); each
// non-blank line of a push to one is an event {"message": <line>}, accepted durably like JSON,
// then parsed once by the mapping's parse steps in the one pass; a line a step cannot read is
// quarantined as parse_failed, raw, and reprocessable.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { catchAll, outputs, publishMapping, runNormalize } from '../../../test/support/normalization.js';
import { NORMALIZE_QUEUE, type IngestBatch } from '../../pipeline/envelope.js';

type Json = Record<string, unknown>;
let t: TestApp;
let org: number;
let admin: Principal;
let token: string;
const queued = new Map<string, IngestBatch>();

const firewall = {
  product: { name: 'Ridgeline NGFW', vendor_name: 'Ridgeline Networks' },
  parse: [{ parser: 'syslog' }, { parser: 'kv', into: 'fw' }],
  rules: [
    {
      name: 'traffic',
      class_uid: 4001,
      activity_id: 6,
      set: [
        { target: 'time', from: 'timestamp', cast: 'timestamp' },
        { target: 'src_endpoint.ip', from: 'fw.srcip', cast: 'ip' },
        { target: 'dst_endpoint.port', from: 'fw.dstport', cast: 'port' },
        { target: 'dst_endpoint.hostname', from: 'hostname' },
      ],
    },
  ],
};

function push(payload: string | Buffer, stream = 'firewall', headers: Record<string, string> = {}, query = '') {
  return t.app.inject({
    method: 'POST',
    url: `/api/ingest/${stream}${query}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain', ...headers },
    payload,
  });
}

async function batch(id: string): Promise<IngestBatch> {
  const deadline = Date.now() + 10_000;
  while (!queued.has(id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return queued.get(id)!;
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  org = await createOrganization(t, 'Text Org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/integrations/',
    headers: admin.headers,
    payload: {
      name: 'edge firewall',
      platform: 'custom',
      organization_id: org,
      config: { text_streams: ['firewall'] },
    },
  });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json<Json>().id as number;
  token = (
    await t.app.inject({ method: 'POST', url: `/api/ingest/integrations/${id}/token`, headers: admin.headers })
  ).json<Json>().token as string;
  t.container.queue.consume<IngestBatch>(NORMALIZE_QUEUE, async (job) => {
    queued.set(job.id, job.payload);
  });
});
afterAll(async () => t?.close());

describe('a stream declared as text', () => {
  it('takes each non-blank line as one event, as its raw message', async () => {
    const lines = [
      '<189>1 2024-03-05T14:22:31Z fw01 - - - - srcip=10.0.0.7 dstport=443',
      '',
      '<189>1 2024-03-05T14:22:32Z fw01 - - - - {"not": "json to this stream"}',
    ];
    const res = await push(`${lines.join('\r\n')}\n\n`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ accepted: 2, rejected: 0 });
    const b = await batch((res.json<Json>().batch_ids as string[])[0]!);
    expect(b.events.map((e) => JSON.parse(e as string) as Json)).toEqual([
      { message: lines[0] },
      { message: lines[2] },
    ]);
  });

  it('reports the lines it cannot take (207) and reads gzip', async () => {
    const res = await push(gzipSync(Buffer.from('ok line\nbad \u0000 line\n')), 'firewall', {
      'content-encoding': 'gzip',
    });
    expect(res.statusCode).toBe(207);
    expect(res.json()).toMatchObject({
      accepted: 1,
      rejected: 1,
      errors: [{ line: 2, reason: 'contains a NUL character, which cannot be stored' }],
    });
    const invalid = await push(Buffer.from([0x61, 0xff, 0x0a]));
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error.details.errors).toEqual([{ line: 1, reason: 'not valid UTF-8' }]);
    expect((await push('  \n\n')).json().detail).toBe(
      'The body is empty: stream "firewall" is text, send one event per line',
    );
  });

  it('refuses a JSON format for it, and keeps other streams JSON', async () => {
    const res = await push('x', 'firewall', {}, '?format=ndjson');
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toContain('is declared as text');
    const json = await push('plain text', 'other');
    expect(json.statusCode).toBe(400);
    expect(json.json().error.details.errors).toEqual([{ line: 1, reason: 'invalid JSON' }]);
  });

  it('refuses a text_streams entry that is not a stream name', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/integrations/',
      headers: admin.headers,
      payload: { name: 'bad', platform: 'custom', organization_id: org, config: { text_streams: ['no spaces'] } },
    });
    expect(res.statusCode).toBe(422);
  });

  it('is parsed once in the pass; a line no step can read waits in quarantine, raw', async () => {
    await publishMapping(t, org, 'custom', 'firewall', firewall);
    await catchAll(t, org);
    const res = await push(
      '<189>1 2024-03-05T14:22:31Z fw01 - - - - srcip=10.0.0.7 dstport=443\n<189>1 2024-03-05T14:22:31Z fw01 - - - - srcip="10.0.0.8\n',
    );
    const b = await batch((res.json<Json>().batch_ids as string[])[0]!);
    await runNormalize(t, b);
    const out = await outputs(t, b.id);
    expect(out.map((o) => o.ocsf)).toMatchObject([
      {
        class_uid: 4001,
        src_endpoint: { ip: '10.0.0.7' },
        dst_endpoint: { port: 443 },
        time: Date.parse('2024-03-05T14:22:31Z'),
      },
    ]);
    const q = await t.app.inject({
      method: 'GET',
      url: `/api/quarantine?integration_id=${b.integration_id}`,
      headers: admin.headers,
    });
    expect(q.statusCode, q.body).toBe(200);
    const items = q.json<{ items: Json[] }>().items;
    expect(items).toMatchObject([
      {
        error_kind: 'parse_failed',
        error_detail: 'parse step 2 (kv) failed at character 7: unterminated quoted value',
      },
    ]);
    const one = await t.app.inject({
      method: 'GET',
      url: `/api/quarantine/${items[0]!.id as string}`,
      headers: admin.headers,
    });
    expect(one.json()).toMatchObject({ raw: { message: '<189>1 2024-03-05T14:22:31Z fw01 - - - - srcip="10.0.0.8' } });
  });
});
