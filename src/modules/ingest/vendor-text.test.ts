// The syslog firewalls (FortiGate, PAN-OS) declare their stream as text on the platform: an
// integration of theirs needs no config for a push of raw lines to be read line by line, and the
// built-in mapping, seeded at start, turns each line into OCSF in the one pass.
import { readFileSync } from 'node:fs';
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

function lines(platform: string): string[] {
  const url = new URL(`../../connectors/${platform}/fixtures/syslog.json`, import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { message: string }[]).map((f) => f.message);
}

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

async function batch(id: string): Promise<IngestBatch> {
  const deadline = Date.now() + 10_000;
  while (!queued.has(id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return queued.get(id)!;
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  org = await createOrganization(t, 'Firewall Org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  await catchAll(t, org);
  t.container.queue.consume<IngestBatch>(NORMALIZE_QUEUE, async (job) => {
    queued.set(job.id, job.payload);
  });
});
afterAll(async () => t?.close());

describe.each([
  ['fortinet_fortigate', [4001, 4001, 2004]],
  ['paloalto_ngfw', [4001, 4001, 2004]],
] as const)('%s', (platform, classes) => {
  it('takes its syslog stream as text without config, and maps each line with the built-in mapping', async () => {
    const token = await tokenFor(platform);
    const sent = lines(platform).slice(0, 3);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/syslog',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      payload: `${sent.join('\n')}\n`,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ accepted: 3, rejected: 0 });
    const b = await batch((res.json<Json>().batch_ids as string[])[0]!);
    expect(b.events.map((e) => (JSON.parse(e as string) as Json).message)).toEqual(sent);
    await runNormalize(t, b);
    const out = (await outputs(t, b.id)).map((o) => o.ocsf);
    expect(out.map((e) => e.class_uid)).toEqual(classes);
    expect(out.every((e) => (e.metadata as Json).product !== undefined && typeof e.time === 'number')).toBe(true);
  });
});
