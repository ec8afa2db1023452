// Vendor findings through collection: alerts that the CrowdStrike Falcon and Microsoft Graph
// simulators hold are collected by the real connectors, normalized by the built-in mappings into
// Detection Findings and become detections; an analyst's change at the vendor is collected again
// and updates its detection (history "updated"), never a second one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import {
  startCrowdstrikeFalconSimulator,
  type CrowdstrikeFalconSimulator,
} from '../../../test/support/vendors/crowdstrike_falcon.js';
import {
  startMicrosoftGraphSimulator,
  type MicrosoftGraphSimulator,
} from '../../../test/support/vendors/microsoft_graph.js';
import type { Clock } from '../../core/clock.js';
import { NORMALIZE_QUEUE } from '../../pipeline/envelope.js';
import type { Consumer } from '../../platform/queue/port.js';
import { startConsumers } from '../../roles/jobs.js';
import { COLLECT_QUEUE } from '../collection/index.js';

type Json = Record<string, unknown>;
// The engine's clock: moved on an hour before re-collecting, so that the vendor's update falls in
// the next window (windows end at now minus the stream's settle delay).
let now = Date.now();
const clock: Clock = { now: () => new Date(now) };
let t: TestApp;
let consumers: Consumer[] = [];
let falcon: CrowdstrikeFalconSimulator;
let graph: MicrosoftGraphSimulator;
let org: number;
let otherOrg: number;
let admin: Principal;
let otherAdmin: Principal;

async function integration(platform: string, config: Json): Promise<number> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/integrations/',
    headers: admin.headers,
    payload: { name: platform, platform, organization_id: org, config },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: number }>().id;
}

async function vendorDetections(integrationId: number, who = admin): Promise<Json[]> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/detections?source=vendor&integration_id=${integrationId}&limit=100`,
    headers: who.headers,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ items: Json[] }>().items;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A window the engine's first cycle covers: ten to twenty minutes before the clock. */
const recent = () => ({ from: new Date(now - 20 * 60_000), to: new Date(now - 10 * 60_000) });

async function historyOf(id: unknown): Promise<string[]> {
  const res = await t.app.inject({ method: 'GET', url: `/api/detections/${String(id)}`, headers: admin.headers });
  return res.json<{ history: Json[] }>().history.map((h) => String(h.kind));
}

beforeAll(async () => {
  falcon = await startCrowdstrikeFalconSimulator();
  graph = await startMicrosoftGraphSimulator();
  t = await createTestApp({ clock, env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  consumers = startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => j.queue === COLLECT_QUEUE || j.queue === NORMALIZE_QUEUE),
    t.container.logger,
  );
  org = await createOrganization(t, 'Vendor findings');
  otherOrg = await createOrganization(t, 'Someone else');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  otherAdmin = await createPrincipal(t, { role: 'admin', organizationId: otherOrg });
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  await falcon?.close();
  await graph?.close();
});

describe('vendor alerts collected from the simulators', () => {
  it("CrowdStrike Falcon: each alert is one detection; an analyst's update re-collected updates it", async () => {
    const id = await integration('crowdstrike_falcon', falcon.config());
    const [first] = falcon.addEvents('alerts', 3, recent());
    expect(await t.container.collection.engine.runCycle(id, 'alerts')).toMatchObject({
      status: 'succeeded',
      events: 3,
    });
    const found = await until('three detections', async () => {
      const d = await vendorDetections(id);
      return d.length === 3 ? d : undefined;
    });
    expect(found.every((d) => d.source === 'vendor' && d.stream === 'alerts' && d.integration_id === id)).toBe(true);
    const mine = found.find((d) => d.uid === first);
    expect(mine, JSON.stringify(found.map((d) => d.uid))).toBeDefined();

    falcon.updateAlert(first!, new Date(now + 60_000));
    now += 3_600_000;
    expect(await t.container.collection.engine.runCycle(id, 'alerts')).toMatchObject({
      status: 'succeeded',
      events: 1,
    });
    await until('the update', async () => ((await historyOf(mine!.id)).includes('updated') ? true : undefined));
    expect(await vendorDetections(id)).toHaveLength(3);
    expect(await historyOf(mine!.id)).toEqual(['created', 'updated']);
    expect(await vendorDetections(id, otherAdmin)).toEqual([]);
  });

  it('Microsoft Graph security alerts: each alert is one detection; an update re-collected updates it', async () => {
    const id = await integration('microsoft_graph', graph.config());
    const keys = graph.addEvents('security_alerts', 2, recent());
    expect(await t.container.collection.engine.runCycle(id, 'security_alerts')).toMatchObject({
      status: 'succeeded',
      events: 2,
    });
    const found = await until('two detections', async () => {
      const d = await vendorDetections(id);
      return d.length === 2 ? d : undefined;
    });
    const alertId = keys[0]!.split('@')[0]!;
    const mine = found.find((d) => d.uid === alertId);
    expect(mine, JSON.stringify(found.map((d) => d.uid))).toBeDefined();

    graph.updateAlert(keys[0]!, new Date(now + 60_000), { status: 'inProgress' });
    now += 3_600_000;
    expect(await t.container.collection.engine.runCycle(id, 'security_alerts')).toMatchObject({
      status: 'succeeded',
      events: 1,
    });
    await until('the update', async () => ((await historyOf(mine!.id)).includes('updated') ? true : undefined));
    expect(await vendorDetections(id)).toHaveLength(2);
    expect(await historyOf(mine!.id)).toEqual(['created', 'updated']);
  });
});
