// The live tap (`GET /api/collectors/destinations/{id}/tap`, what `weir tap` and the console
// show) on real Okta System Log events (test/corpus/okta) pushed through the whole pipeline:
// what the destination receives, with captions, codes and ids readable and personal data
// masked, for every caller (an admin holding quarantine.read included).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, startWorkerConsumers, type TestApp } from '../../../test/support/app.js';
import { routeEverythingTo, seqOf, waitFor } from '../../../test/support/delivery-api.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { http } from '../../../test/support/ingest.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import type { Consumer } from '../../platform/queue/port.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const corpus = (file: string) => new URL(`../../../test/corpus/okta/system_log/${file}`, import.meta.url);
const RAW = readFileSync(corpus('elastic-okta.ndjson'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Json);
const EXPECTED = JSON.parse(readFileSync(corpus('elastic-okta.expected.json'), 'utf8')) as Json[];

let t: TestApp;
let base: string;
let admin: Principal;
let destination: string;
let ingestToken: string;
let receiver: WebhookReceiver;
const consumers: Consumer[] = [];
const loops: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_DISPATCH_POLL_MS: '20' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const org = await createOrganization(t, 'Tap Org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  receiver = await startWebhookReceiver({ keyOf: (event) => seqOf(event), keepBodies: true });
  const created = await http(
    base,
    'POST',
    '/api/integrations/',
    { name: 'okta', platform: 'okta', organization_id: org },
    admin.headers,
  );
  ingestToken = String(
    (await http(base, 'POST', `/api/ingest/integrations/${String(created.json.id)}/token`, {}, admin.headers)).json
      .token,
  );
  destination = await routeEverythingTo(base, admin.headers, org, receiver.url);
  consumers.push(...startWorkerConsumers(t));
  loops.push(...t.container.loops.map((l) => l.start()));
}, 60_000);

afterAll(async () => {
  await Promise.all(loops.map((l) => l.stop()));
  await Promise.all(consumers.map((c) => c.close()));
  await receiver?.close();
  await t?.close();
});

describe('the destination tap on real Okta events', () => {
  it('shows captions, codes and ids as the destination receives them, and masks people and addresses', async () => {
    const tapped = fetch(`${base}/api/collectors/destinations/${destination}/tap?seconds=30&limit=${RAW.length}`, {
      headers: admin.headers,
    }).then(async (res) => ({ status: res.status, body: await res.text() }));
    // Events flow once the session is open.
    await waitFor(
      'the tap session',
      async () =>
        (await t.container.database.db.selectFrom('tap_sessions').select('id').execute()).length ? true : undefined,
      10_000,
      50,
    );
    const lines = RAW.map((raw, i) => JSON.stringify({ ...raw, weir_test_seq: `tap-${i}` }));
    const pushed = await fetch(`${base}/api/ingest/system_log`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ingestToken}` },
      body: lines.join('\n'),
    });
    expect(pushed.status).toBe(200);
    const res = await tapped;
    expect(res.status).toBe(200);
    const events = res.body
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { event: Json }).event);
    expect(events).toHaveLength(RAW.length);

    for (const event of events) {
      const expected = EXPECTED.find((e) => e.metadata.uid === event.metadata?.uid);
      expect(expected, `an event of the corpus: ${JSON.stringify(event.metadata)}`).toBeDefined();
      // Labels exactly as the mapping produced them (metadata gains what the pipeline adds).
      for (const key of ['class_name', 'category_name', 'activity_name', 'type_name', 'severity', 'status', 'time'])
        expect(event[key], key).toEqual(expected![key]);
      expect(event.metadata).toMatchObject(expected!.metadata);
      expect(event.actor.user.type).toBe('User');
      expect(event.observables.map((o: Json) => o.type)).toEqual(expected!.observables.map((o: Json) => o.type));
      // Personal data masked, once (the dispatcher masks what it samples and the API again).
      expect(event.actor.user.name).toBe(
        `${expected!.actor.user.name[0]}***@${expected!.actor.user.name.split('@')[1]}`,
      );
      expect(event.src_endpoint.ip).toBe(expected!.src_endpoint.ip.replace(/\.\d+$/, '.x'));
      const text = JSON.stringify(event);
      for (const personal of [expected!.actor.user.name, expected!.actor.user.uid, expected!.src_endpoint.ip])
        expect(text).not.toContain(personal);
    }
    // The destination itself receives the events unmasked.
    await receiver.waitForUnique(RAW.length, 20_000);
    const delivered = receiver.requests.map((r) => r.body ?? '').join('\n');
    expect(delivered).toContain(EXPECTED[0]!.actor.user.name);
  }, 90_000);
});
