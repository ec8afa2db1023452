// The data plane's first half as a user meets it, through the HTTP API only, with the
// worker's real queue consumers running: push vendor events and unknown ones, see them
// normalized, see a new vendor field as drift, find the unknown stream's events in
// quarantine, publish a mapping for it, reprocess them, and read samples and compliance.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsumers } from '../../src/roles/jobs.js';
import type { Consumer } from '../../src/platform/queue/port.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../support/identity.js';

type Json = Record<string, unknown>;

let t: TestApp;
let consumers: Consumer[] = [];
let orgId: number;
let admin: Principal;
let operator: Principal;

const okta = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../src/connectors/okta/fixtures/system_log.json'), 'utf8'),
) as Json[];

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_MAPPING_REFRESH_MS: '100' } });
  consumers = startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => j.role === 'worker'),
    t.container.logger,
  );
  orgId = await createOrganization(t, 'Story Org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: orgId });
  operator = await createPrincipal(t, { role: 'operator', organizationId: orgId });
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
});

async function call(who: Principal, method: string, url: string, payload?: unknown) {
  const res = await t.app.inject({
    method: method as 'GET',
    url,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  return { status: res.statusCode, body: res.body ? res.json<Json>() : {} };
}

async function integrationWithToken(platform: string): Promise<{ id: number; token: string }> {
  const created = await call(admin, 'POST', '/api/integrations/', {
    name: `${platform} source`,
    platform,
    organization_id: orgId,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = Number(created.body.id);
  const token = await call(admin, 'POST', `/api/ingest/integrations/${id}/token`);
  expect(token.status).toBe(201);
  return { id, token: String(token.body.token) };
}

async function push(token: string, stream: string, events: Json[]) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/ingest/${stream}`,
    headers: { authorization: `Bearer ${token}` },
    payload: events.map((e) => JSON.stringify(e)).join('\n'),
  });
  return { status: res.statusCode, body: res.json<Json>() };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function processed(integrationId: number): Promise<number> {
  const status = await call(admin, 'GET', `/api/ingest/integrations/${integrationId}`);
  return Number((status.body.stats as Json).events_in ?? 0);
}

describe('push -> normalize -> drift, quarantine, reprocess', () => {
  let oktaSource: { id: number; token: string };
  let customSource: { id: number; token: string };

  it('normalizes pushed Okta events with the built-in mapping and reports a new vendor field as drift', async () => {
    oktaSource = await integrationWithToken('okta');
    // The new field in every second event: drift counts the events that carry it.
    const events = okta.map((e, i) => (i % 2 === 0 ? { ...e, vendorPreviewFlag: 'on' } : e));
    const carrying = events.filter((e) => 'vendorPreviewFlag' in e).length;
    const res = await push(oktaSource.token, 'system_log', events);
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(events.length);
    await until('the Okta events to be processed', async () =>
      (await processed(oktaSource.id)) >= events.length ? true : undefined,
    );

    const quarantine = await call(operator, 'GET', `/api/quarantine?integration_id=${oktaSource.id}`);
    expect(quarantine.body.total).toBe(0);

    const driftList = await until('the drift field', async () => {
      const list = await call(operator, 'GET', `/api/drift?integration_id=${oktaSource.id}`);
      const items = list.body.items as Json[];
      return items.some((f) => f.path === 'vendorPreviewFlag') ? items : undefined;
    });
    // The Okta fields the built-in mapping leaves under unmapped are its known_fields: only the new one is drift.
    expect(driftList.map((f) => f.path)).toEqual(['vendorPreviewFlag']);
    const drift = driftList[0]!;
    expect(drift).toMatchObject({ stream: 'system_log', status: 'new', value_type: 'string', count: carrying });
    const ignored = await call(operator, 'POST', `/api/drift/${String(drift.id)}/ignore`);
    expect(ignored.body.status).toBe('ignored');

    const compliance = await until('compliance figures', async () => {
      const res2 = await call(admin, 'GET', `/api/ocsf/compliance?integration_id=${oktaSource.id}`);
      const items = res2.body.items as Json[];
      return items.length > 0 ? items : undefined;
    });
    expect(compliance.every((c) => c.invalid === 0)).toBe(true);
    expect(compliance.map((c) => c.class_uid)).toContain(3002);

    const samples = await until('raw samples', async () => {
      const res2 = await call(operator, 'GET', `/api/mappings/samples?integration_id=${oktaSource.id}`);
      return (res2.body.items as Json[]).length > 0 ? (res2.body.items as Json[]) : undefined;
    });
    // Personal data is masked in samples: no e-mail address comes back whole.
    expect(JSON.stringify(samples)).not.toMatch(/[a-z0-9.]+@example\.com/);
  });

  it('quarantines events of a stream without a mapping, then reprocesses them once a version is published', async () => {
    customSource = await integrationWithToken('custom');
    const events = [1, 2, 3].map((n) => ({ ts: `2026-11-2${n}T10:00:00Z`, action: 'deny', src: `192.0.2.${n}` }));
    expect((await push(customSource.token, 'firewall', events)).status).toBe(200);
    const items = await until('the quarantined events', async () => {
      const list = await call(operator, 'GET', `/api/quarantine?integration_id=${customSource.id}`);
      return list.body.total === 3 ? (list.body.items as Json[]) : undefined;
    });
    expect(items.every((i) => i.error_kind === 'no_mapping')).toBe(true);

    // The worker created the organization's definition for the stream; publish a version.
    const definitions = await call(operator, 'GET', '/api/mappings?platform=custom&stream=firewall');
    const definition = (definitions.body.items as Json[])[0]!;
    expect(definition).toMatchObject({ organization_id: orgId, live_version: null });
    const document = {
      product: { name: 'Edge firewall', vendor_name: 'Example' },
      rules: [
        {
          name: 'traffic',
          class_uid: 4001,
          activity_id: { from: 'action', lookup: { map: { allow: 6, deny: 5 } } },
          set: [
            { target: 'time', from: 'ts', cast: 'timestamp' },
            { target: 'severity_id', value: 1 },
            { target: 'src_endpoint.ip', from: 'src', cast: 'ip' },
          ],
        },
      ],
    };
    const dry = await call(operator, 'POST', '/api/mappings/dry-run', { document, events });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.summary).toMatchObject({ total: 3, ok: 3 });
    const published = await call(operator, 'POST', `/api/mappings/${String(definition.id)}/versions`, {
      document,
      comment: 'first version',
    });
    expect(published.status, JSON.stringify(published.body)).toBe(201);

    const reprocess = await call(operator, 'POST', '/api/quarantine/bulk/reprocess', { ids: items.map((i) => i.id) });
    expect(reprocess.status).toBe(200);
    expect(reprocess.body).toMatchObject({ reprocessed: 3, failed: 0, errors: [] });
    const left = await call(operator, 'GET', `/api/quarantine?integration_id=${customSource.id}`);
    expect(left.body.total).toBe(0);

    // New events of the stream are normalized by the live version without a restart.
    expect((await push(customSource.token, 'firewall', events)).status).toBe(200);
    await until('the new events to be processed', async () =>
      (await processed(customSource.id)) >= 6 ? true : undefined,
    );
    const still = await call(operator, 'GET', `/api/quarantine?integration_id=${customSource.id}`);
    expect(still.body.total).toBe(0);
  });
});
