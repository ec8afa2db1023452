// Streams that are already OCSF, through the API: a custom integration lists `ocsf` in its
// config's ocsf_streams; events pushed to it with no mapping published pass through as the
// OCSF events they are (validated, routed to the organization's event store, searchable by
// their OCSF fields), and one without a class_uid Weir knows is quarantined saying so.
// The OCSF events are what the built-in Okta mapping makes of its own test cases
// (src/pipeline/normalize/builtin/okta.system_log.json): the whole-event output it states, and
// the mapping run over the inputs of its other cases.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, startWorkerConsumers, type TestApp } from '../../../test/support/app.js';
import { waitFor } from '../../../test/support/delivery-api.js';
import { createPrincipal, type Principal } from '../../../test/support/identity.js';
import { http } from '../../../test/support/ingest.js';
import { ocsfCatalog } from '../../ocsf/index.js';
import { compileMapping } from '../../pipeline/normalize/compile.js';
import { NOT_OCSF_DETAIL } from '../../pipeline/normalize/passthrough.js';
import type { MappingDocument } from '../../pipeline/normalize/types.js';
import type { Consumer } from '../../platform/queue/port.js';

type Json = Record<string, unknown>;

const okta = JSON.parse(
  readFileSync(new URL('../../pipeline/normalize/builtin/okta.system_log.json', import.meta.url), 'utf8'),
) as Json;
const oktaCases = okta.tests as { name: string; input: Json; output?: Json; expect?: Json }[];

/** OCSF events of several classes, as the built-in Okta mapping produces them. */
function oktaOcsfEvents(): Json[] {
  const mapping = compileMapping(okta as unknown as MappingDocument, ocsfCatalog());
  const stated = oktaCases.flatMap((c) => (c.output ? [c.output] : []));
  const made = oktaCases.flatMap((c) => {
    if (!c.expect) return [];
    const res = mapping.map(c.input, { receivedAtMs: Date.parse('2025-03-14T09:21:07.412Z') });
    return res.ok ? [res.event] : [];
  });
  return [...stated, ...made];
}

let t: TestApp;
let base: string;
let admin: Principal;
let org: number;
let integrationId: number;
let token: string;
const consumers: Consumer[] = [];
const loops: { stop(): Promise<void> }[] = [];

async function searchCount(query: string): Promise<number> {
  const res = await http(
    base,
    'POST',
    '/api/search',
    {
      query: { organization_id: org, query, time: { last: '3650d' }, limit: 0, aggregations: [{ type: 'count' }] },
      wait_ms: 30_000,
    },
    admin.headers,
  );
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return (res.json.aggregations as { value: number }[])[0]!.value;
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_DISPATCH_POLL_MS: '20' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const root = await createPrincipal(t, { role: 'admin', organizationId: null });
  // Through the API: the organization starts with its event store and a route sending it everything.
  const created = await http(base, 'POST', '/api/organizations/', { name: 'OCSF senders' }, root.headers);
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  org = Number(created.json.id);
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
});

afterAll(async () => {
  await Promise.all(loops.map((l) => l.stop()));
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
});

describe('a custom integration with ocsf_streams', () => {
  it('refuses an ocsf_streams that is not a list of stream names, with the field named', async () => {
    const res = await http(
      base,
      'POST',
      '/api/integrations/',
      { name: 'bad', platform: 'custom', organization_id: org, config: { ocsf_streams: 'ocsf' } },
      admin.headers,
    );
    expect(res.status).toBe(422);
    expect(typeof res.json.detail).toBe('string');
    expect(JSON.stringify(res.json)).toContain('ocsf_streams');
  });

  it('normalizes OCSF events without a mapping and quarantines an event without a known class_uid', async () => {
    const res = await http(
      base,
      'POST',
      '/api/integrations/',
      { name: 'from Tenzir', platform: 'custom', organization_id: org, config: { ocsf_streams: ['ocsf'] } },
      admin.headers,
    );
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    integrationId = Number(res.json.id);
    const issued = await http(base, 'POST', `/api/ingest/integrations/${integrationId}/token`, {}, admin.headers);
    expect(issued.status).toBe(201);
    token = String(issued.json.token);

    const events = oktaOcsfEvents();
    const classes = new Set(events.map((e) => e.class_uid));
    expect(events.length).toBeGreaterThanOrEqual(10);
    expect(classes.size).toBeGreaterThanOrEqual(4);
    const notOcsf = [
      { eventType: 'user.session.start', actor: { id: 'x' } },
      { class_uid: 987654, time: 1 },
    ];
    const body = [...events, ...notOcsf].map((e) => JSON.stringify(e)).join('\n');
    const pushed = await fetch(`${base}/api/ingest/ocsf`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
      body,
    });
    expect(pushed.status, await pushed.clone().text()).toBe(200);
    expect(await pushed.json()).toMatchObject({ accepted: events.length + 2, rejected: 0 });

    consumers.push(...startWorkerConsumers(t));
    loops.push(...t.container.loops.map((l) => l.start()));
    const stored = await waitFor(
      'the OCSF events in the event store',
      async () => {
        const n = await searchCount('');
        return n >= events.length ? n : undefined;
      },
      60_000,
    );
    expect(stored).toBe(events.length);
    // Found by their OCSF fields: the stated whole event by its uid, every class by its class_uid.
    expect(await searchCount('metadata.uid = "4f1c7e2a-00b8-11f0-9c1b-6b2f0e6c4a11"')).toBe(1);
    expect(await searchCount('class_uid = 3002')).toBe(events.filter((e) => e.class_uid === 3002).length);

    const quarantine = await http(
      base,
      'GET',
      `/api/quarantine?integration_id=${integrationId}&stream=ocsf`,
      undefined,
      admin.headers,
    );
    expect(quarantine.status).toBe(200);
    const items = quarantine.json.items as { error_kind: string; error_detail: string; mapping_version_id: unknown }[];
    expect(items.map((i) => [i.error_kind, i.error_detail, i.mapping_version_id])).toEqual([
      ['mapping_error', NOT_OCSF_DETAIL, null],
      ['mapping_error', NOT_OCSF_DETAIL, null],
    ]);
  }, 120_000);
});
