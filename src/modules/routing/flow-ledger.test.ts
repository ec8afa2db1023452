// The data-flow map's counts against the ledger, through the HTTP API with the worker's
// real consumers: real Okta samples (test/corpus) delivered and firing a detection rule,
// a stream without a mapping quarantined then reprocessed once a version is published,
// and a rejecting destination's dead letters reprocessed once it accepts. After each
// reprocess every node still balances (what comes in = what leaves + what it holds) and the
// map's totals are the ledger's; rule findings are a detections stream, not a missing mapping.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, startWorkerConsumers } from '../../../test/support/app.js';
import { createDestination, createRoute, ledgerTotals, waitFor } from '../../../test/support/delivery-api.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { http } from '../../../test/support/ingest.js';
import {
  startWebhookReceiver,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from '../../../test/support/webhook-receiver.js';
import type { Consumer } from '../../platform/queue/port.js';

type Json = Record<string, unknown>;
interface FlowNode {
  id: string;
  kind: string;
  label: string;
  status: string;
  organization_id: number | null;
  counters: Record<string, number>;
}
interface Flow {
  nodes: FlowNode[];
  edges: { from: string; to: string; count?: number }[];
  totals: { filtered: Record<string, number> } & Record<
    | 'events_in'
    | 'findings'
    | 'quarantined'
    | 'reprocessed'
    | 'routed'
    | 'copies'
    | 'delivered'
    | 'dead_lettered'
    | 'dlq_reprocessed'
    | 'dropped',
    number
  >;
}

const corpus = (file: string): string[] =>
  readFileSync(path.resolve(import.meta.dirname, '../../../test/corpus/okta/system_log', file), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
const OKTA = [...corpus('elastic-okta.ndjson'), ...corpus('panther-analysis.ndjson')];

let t: TestApp;
let base: string;
let org: number;
let admin: Principal;
let good: WebhookReceiver;
let bad: WebhookReceiver;
const badOptions: WebhookReceiverOptions = { status: 400 };
let badDestination: string;
let okta: { id: number; token: string };
let custom: { id: number; token: string };
const consumers: Consumer[] = [];
const loops: { stop(): Promise<void> }[] = [];

async function call(method: string, url: string, body?: unknown): Promise<Json> {
  const res = await http(base, method, url, body, admin.headers);
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.json)}`).toBeLessThan(300);
  return res.json;
}

async function integration(platform: string): Promise<{ id: number; token: string }> {
  const created = await call('POST', '/api/integrations/', {
    name: `${platform} source`,
    platform,
    organization_id: org,
  });
  const token = await call('POST', `/api/ingest/integrations/${String(created.id)}/token`, {});
  return { id: Number(created.id), token: String(token.token) };
}

async function push(token: string, stream: string, lines: string[]): Promise<void> {
  const res = await fetch(`${base}/api/ingest/${stream}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: lines.join('\n'),
  });
  expect(res.status).toBe(200);
}

const flow = async (): Promise<Flow> => (await call('GET', '/api/collectors/routes/flow?hours=24')) as unknown as Flow;

/** Waits until nothing is pending and the ledger's events in reach `eventsIn`. */
async function settled(eventsIn: number): Promise<void> {
  await waitFor(
    'every event settled',
    async () => {
      const totals = await ledgerTotals(base, admin.headers);
      return totals.pending === 0 && totals.events_in === eventsIn ? totals : undefined;
    },
    60_000,
    50,
  );
}

/** Every node balances, every integration's edges carry its events, and the totals are the ledger's. */
async function expectBalanced(): Promise<Flow> {
  const map = await flow();
  for (const n of map.nodes) {
    if (n.kind === 'integration' || n.kind === 'mapping')
      expect(n.counters.events_in, n.label).toBe(n.counters.normalized! + n.counters.quarantined!);
    if (n.kind === 'destination')
      expect(n.counters.copies, n.label).toBe(n.counters.delivered! + n.counters.dead_lettered! + n.counters.dropped!);
    if (n.kind === 'integration') {
      const out = map.edges.filter((e) => e.from === n.id).reduce((s, e) => s + (e.count ?? 0), 0);
      expect(out, n.label).toBe(n.counters.events_in);
    }
  }
  const { totals } = map;
  const filtered = Object.values(totals.filtered).reduce((s, v) => s + v, 0);
  expect(totals.events_in + totals.findings - totals.quarantined).toBe(totals.routed + filtered);
  expect(totals.copies).toBe(totals.delivered + totals.dead_lettered + totals.dropped);
  const ledger = await ledgerTotals(base, admin.headers);
  expect(totals.events_in + totals.findings).toBe(ledger.events_in);
  expect(totals.quarantined).toBe(ledger.quarantined);
  expect(totals.delivered).toBe(ledger.delivered);
  expect(totals.dead_lettered).toBe(ledger.dead_lettered);
  expect(filtered).toBe(ledger.filtered);
  return map;
}

beforeAll(async () => {
  t = await createTestApp({
    env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_DISPATCH_POLL_MS: '20', WEIR_MAPPING_REFRESH_MS: '100' },
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  org = await createOrganization(t, 'Flow ledger');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  good = await startWebhookReceiver({});
  bad = await startWebhookReceiver(badOptions);
  const delivery = { max_wait_ms: 20 };
  const siem = await createDestination(base, admin.headers, {
    name: 'siem',
    type: 'http',
    organization_id: org,
    config: { url: good.url },
    delivery,
  });
  badDestination = await createDestination(base, admin.headers, {
    name: 'archive',
    type: 'http',
    organization_id: org,
    config: { url: bad.url },
    delivery,
  });
  await createRoute(base, admin.headers, {
    name: 'everything',
    organization_id: org,
    destination_ids: [siem, badDestination],
  });
  await call('POST', '/api/detections/rules', {
    name: 'Okta authentication',
    organization_id: org,
    definition: { condition: { field: 'class_uid', op: 'eq', value: 3002 }, severity_id: 3 },
  });
  okta = await integration('okta');
  custom = await integration('custom');
  consumers.push(...startWorkerConsumers(t));
  loops.push(...t.container.loops.map((l) => l.start()));
}, 60_000);

afterAll(async () => {
  await Promise.all(loops.map((l) => l.stop()));
  await Promise.all(consumers.map((c) => c.close()));
  await good?.close();
  await bad?.close();
  await t?.close();
});

describe('the data-flow map against the ledger', () => {
  let findings = 0;

  it('draws rule findings as a detections stream fed by the mapping whose events fired, routed like events', async () => {
    await push(okta.token, 'system_log', OKTA);
    const made = await waitFor(
      'the rule findings',
      async () => {
        const list = await call('GET', `/api/detections?organization_id=${org}&limit=100`);
        return Number(list.total) > 0 ? Number(list.total) : undefined;
      },
      30_000,
    );
    await settled(OKTA.length + made);
    const map = await expectBalanced();
    expect(map.nodes.filter((n) => n.status === 'missing')).toEqual([]);
    const detections = map.nodes.filter((n) => n.kind === 'detections');
    expect(detections).toHaveLength(1);
    expect(detections[0]).toMatchObject({ id: `detections:${org}`, label: 'Detections', status: 'active' });
    findings = detections[0]!.counters.findings!;
    expect(findings).toBe(made);
    expect(map.totals.findings).toBe(made);
    const oktaMapping = map.edges.find((e) => e.from === `integration:${okta.id}`)!.to;
    expect(map.edges).toContainEqual({ from: oktaMapping, to: `detections:${org}` });
    const route = map.nodes.find((n) => n.kind === 'route')!;
    expect(map.edges).toContainEqual({ from: `detections:${org}`, to: route.id, count: findings });
    // The integration counts what it received; the findings are the detections' own.
    expect(map.nodes.find((n) => n.id === `integration:${okta.id}`)!.counters.events_in).toBe(OKTA.length);
    expect(map.totals.events_in).toBe(OKTA.length);
  }, 90_000);

  it('still balances after quarantined events are reprocessed', async () => {
    const events = [1, 2, 3].map((n) =>
      JSON.stringify({ ts: `2026-11-2${n}T10:00:00Z`, action: 'deny', src: `192.0.2.${n}` }),
    );
    await push(custom.token, 'firewall', events);
    await settled(OKTA.length + findings + 3);
    const before = await expectBalanced();
    const mappingOf = (map: Flow) =>
      map.nodes.find((n) => n.id === map.edges.find((e) => e.from === `integration:${custom.id}`)!.to)!;
    expect(mappingOf(before).counters).toEqual({ events_in: 3, normalized: 0, quarantined: 3, reprocessed: 0 });
    expect(before.totals.quarantined).toBe(3);

    const definitions = await call('GET', '/api/mappings?platform=custom&stream=firewall');
    const definition = (definitions.items as Json[])[0]!;
    await call('POST', `/api/mappings/${String(definition.id)}/versions`, {
      document: {
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
      },
      comment: 'first version',
    });
    const items = (await call('GET', `/api/quarantine?integration_id=${custom.id}`)).items as Json[];
    expect(await call('POST', '/api/quarantine/bulk/reprocess', { ids: items.map((i) => i.id) })).toMatchObject({
      reprocessed: 3,
    });
    await waitFor(
      'the reprocessed events delivered',
      async () => ((await ledgerTotals(base, admin.headers)).pending === 0 ? true : undefined),
      30_000,
      50,
    );
    const after = await expectBalanced();
    expect(mappingOf(after).counters).toEqual({ events_in: 3, normalized: 3, quarantined: 0, reprocessed: 3 });
    expect(after.nodes.find((n) => n.id === `integration:${custom.id}`)!.counters).toMatchObject({
      events_in: 3,
      quarantined: 0,
      reprocessed: 3,
    });
    expect(after.totals).toMatchObject({ quarantined: 0, reprocessed: 3 });
  }, 90_000);

  it('still balances after dead letters are reprocessed to a destination that now accepts', async () => {
    const node = (map: Flow) => map.nodes.find((n) => n.id === `destination:${badDestination}`)!;
    const before = await expectBalanced();
    const dead = node(before).counters.dead_lettered!;
    expect(dead).toBeGreaterThan(0);
    expect(node(before).counters.delivered).toBe(0);
    badOptions.status = 200;
    const res = await call('POST', `/api/collectors/destinations/${badDestination}/dlq/reprocess`, { all: true });
    expect(res).toMatchObject({ reprocessed: dead });
    const after = await waitFor(
      'the dead letters delivered',
      async () => {
        const map = await flow();
        return node(map).counters.delivered === dead ? map : undefined;
      },
      30_000,
      100,
    );
    expect(node(after).counters).toMatchObject({ copies: dead, delivered: dead, dead_lettered: 0, dropped: 0 });
    await expectBalanced();
    expect((await flow()).totals.dlq_reprocessed).toBe(dead);
  }, 90_000);
});
