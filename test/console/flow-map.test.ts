// The data-flow map at fifty elements, in a real browser: twelve integrations fed with the
// corpus's real samples (fifteen streams), their mappings, a detection rule's findings, ten
// routes and twelve destinations, all made through the API. Read from the page's own boxes:
// no two elements overlap, no edge label overlaps an element or another label; a card opens
// its element from the keyboard; axe and the page's CSP hold (ELK runs in the page).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import {
  launch,
  openPage,
  type Watched,
  heading,
  nav,
  accessible,
  bootstrapAdmin,
  createOrganization,
} from './browser.js';
import { buildConsole, CHROMIUM, startWeir, type RunningWeir } from './server.js';

const hasChromium = existsSync(CHROMIUM);

type Json = Record<string, unknown>;
interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Platform → its streams with a JSON sample file in test/corpus. */
const SOURCES: Record<string, Record<string, string>> = {
  aws_cloudtrail: { cloudtrail: 'aws-docs-lookup-events.ndjson' },
  aws_route53_resolver: { query_logs: 'aws-docs.ndjson' },
  aws_security_hub: { findings: 'automated-security-response-eventbridge.ndjson' },
  crowdstrike_falcon: { alerts: 'elastic-alerts.ndjson' },
  github: { audit_log: 'elastic-organisation-audit.ndjson' },
  google_workspace: { admin: 'elastic-admin.ndjson', login: 'elastic-login.ndjson' },
  microsoft_365: { management_activity: 'beats-o365-azuread-sts-logon.ndjson' },
  microsoft_graph: {
    directory_audits: 'azure-monitor-docs.ndjson',
    security_alerts: 'graph-docs.ndjson',
    signins: 'azure-monitor-docs.ndjson',
  },
  okta: { system_log: 'elastic-okta.ndjson' },
  suricata: { eve: 'docs-7.0.ndjson' },
  zeek: { logs: 'btest-3.0-conn.ndjson' },
};
const sample = (platform: string, stream: string, file: string) =>
  readFileSync(path.resolve(import.meta.dirname, '../corpus', platform, stream, file), 'utf8').trim();
/** Mapping nodes: every corpus stream and the custom integration's unmapped one. */
const STREAMS = Object.values(SOURCES).reduce((n, s) => n + Object.keys(s).length, 0) + 1;
const ROUTES = 10;
const ENABLED_ROUTES = 3;
const DESTINATIONS = 12;

let weir: RunningWeir;
let browser: Browser;
let admin: Watched;
let receiver: WebhookReceiver;

async function ready(w: Watched): Promise<void> {
  const { page } = w;
  await page.goto(`${weir.url}/`);
  await bootstrapAdmin(page);
  await createOrganization(page, 'Acme');
  await page.getByRole('banner').getByLabel('Organization').selectOption({ label: 'Acme' });
}

/** The API as the signed-in administrator (the page's session cookie). */
async function api(page: Page, method: 'GET' | 'POST', url: string, data?: unknown): Promise<Json> {
  const res = await page.request.fetch(`${weir.url}${url}`, { method, ...(data === undefined ? {} : { data }) });
  const body = (await res.json()) as Json;
  expect(res.status(), `${method} ${url}: ${JSON.stringify(body)}`).toBeLessThan(300);
  return body;
}

async function push(token: string, stream: string, body: string): Promise<void> {
  const res = await fetch(`${weir.url}/api/ingest/${stream}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    body,
  });
  expect(res.status, await res.text()).toBe(200);
}

const overlap = (a: Box, b: Box) =>
  a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5;

describe.skipIf(!hasChromium)('the data-flow map in a real browser', { timeout: 240_000 }, () => {
  beforeAll(async () => {
    const dir = await buildConsole();
    [weir, browser, receiver] = await Promise.all([startWeir(dir), launch(), startWebhookReceiver({})]);
    admin = await openPage(browser);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await weir?.stop();
  });

  it('lays out fifty elements with no overlapping cards or labels, and opens one from the keyboard', async () => {
    const { page } = admin;
    await ready(admin);
    const orgs = (await api(page, 'GET', '/api/organizations/')) as unknown as { id: number; name: string }[];
    const org = orgs.find((o) => o.name === 'Acme')!.id;

    const destinations: string[] = [];
    for (let i = 1; i <= DESTINATIONS; i++) {
      const d = await api(page, 'POST', '/api/collectors/destinations', {
        name: `siem-${String(i).padStart(2, '0')}`,
        type: 'http',
        organization_id: org,
        enabled: i <= 6,
        config: { url: receiver.url },
        delivery: { max_wait_ms: 20 },
      });
      destinations.push(String(d.id));
    }
    for (let i = 0; i < ROUTES; i++) {
      await api(page, 'POST', '/api/collectors/routes', {
        name: `route-${String(i + 1).padStart(2, '0')}`,
        organization_id: org,
        enabled: i < ENABLED_ROUTES,
        final: false,
        destination_ids: [destinations[i]!, ...(i < 2 ? [destinations[10 + i]!] : [])],
      });
    }
    await api(page, 'POST', '/api/detections/rules', {
      name: 'Okta sign-ins',
      organization_id: org,
      definition: { condition: { field: 'class_uid', op: 'eq', value: 3002 }, severity_id: 2 },
    });
    const integrations = [...Object.keys(SOURCES), 'custom'];
    for (const platform of integrations) {
      const created = await api(page, 'POST', '/api/integrations/', {
        name: `${platform.replace(/_/g, ' ')} feed`,
        platform,
        organization_id: org,
      });
      const token = String((await api(page, 'POST', `/api/ingest/integrations/${String(created.id)}/token`, {})).token);
      if (platform === 'custom') {
        await push(token, 'firewall', JSON.stringify({ ts: '2026-11-26T10:00:00Z', action: 'deny' }));
        continue;
      }
      for (const [stream, file] of Object.entries(SOURCES[platform]!))
        await push(token, stream, sample(platform, stream, file));
    }
    // Every stream counted (at least one mapping node each), and the rule's findings.
    const least = integrations.length + STREAMS + 1 + ROUTES + DESTINATIONS;
    expect(least).toBeGreaterThanOrEqual(50);
    // The map is compared with the flow once it has settled: the same node count two reads in
    // a row, a second apart (a stream's node appears once its first events are processed).
    let previous = -1;
    const expected = await expect
      .poll(
        async () => {
          const flow = await api(page, 'GET', `/api/collectors/routes/flow?organization_id=${org}`);
          const nodes = flow.nodes as Json[];
          const ready = nodes.length >= least && nodes.some((n) => n.kind === 'detections');
          const settled = ready && nodes.length === previous;
          previous = nodes.length;
          return settled ? nodes.length : 0;
        },
        { timeout: 60_000, interval: 1_000 },
      )
      .toBeGreaterThanOrEqual(least)
      .then(
        async () =>
          ((await api(page, 'GET', `/api/collectors/routes/flow?organization_id=${org}`)).nodes as Json[]).length,
      );

    await nav(page, 'Data flow');
    const map = page.getByTestId('flow-map');
    const cards = map.getByTestId('flow-node');
    // The page refetches the flow every 10 s: it shows what the API answers, read again each time.
    const flowNodes = async () =>
      ((await api(page, 'GET', `/api/collectors/routes/flow?organization_id=${org}`)).nodes as Json[]).length;
    await expect
      .poll(async () => (await cards.count()) - (await flowNodes()), { timeout: 30_000, interval: 1_000 })
      .toBe(0);
    expect(await cards.count()).toBeGreaterThanOrEqual(expected);
    await map.getByRole('group', { name: /^detections Detections, active, findings [1-9]/ }).waitFor();
    expect(await map.getByRole('group', { name: /missing/ }).count()).toBe(0);
    const labels = map.getByTestId('flow-edge-label');
    expect(await labels.count()).toBeGreaterThan(STREAMS);

    const boxes = async (all: typeof cards) =>
      Promise.all((await all.all()).map(async (l) => (await l.boundingBox())!));
    const nodeBoxes = await boxes(cards);
    const labelBoxes = await boxes(labels);
    const clashes: string[] = [];
    for (let i = 0; i < nodeBoxes.length; i++) {
      expect(nodeBoxes[i]!.width).toBeGreaterThan(0);
      for (let j = i + 1; j < nodeBoxes.length; j++)
        if (overlap(nodeBoxes[i]!, nodeBoxes[j]!)) clashes.push(`node ${i} and node ${j}`);
    }
    for (let i = 0; i < labelBoxes.length; i++) {
      for (let j = 0; j < nodeBoxes.length; j++)
        if (overlap(labelBoxes[i]!, nodeBoxes[j]!)) clashes.push(`label ${i} and node ${j}`);
      for (let j = i + 1; j < labelBoxes.length; j++)
        if (overlap(labelBoxes[i]!, labelBoxes[j]!)) clashes.push(`label ${i} and label ${j}`);
    }
    expect(clashes).toEqual([]);
    // Fitted to the frame's width: nothing runs off to the right.
    const frame = (await map.boundingBox())!;
    for (const b of nodeBoxes) expect(b.x + b.width).toBeLessThanOrEqual(frame.x + frame.width + 1);
    await accessible(admin, 'flow-map-50');

    // Zoom to actual size, then open an integration from the keyboard.
    await page.getByRole('button', { name: 'Actual size' }).click();
    await page.getByRole('toolbar', { name: 'Zoom' }).getByText('100%').waitFor();
    const okta = map.getByRole('group', { name: /^integration okta feed/ }).getByRole('link');
    await okta.focus();
    await page.keyboard.press('Enter');
    await heading(page, 'okta feed');
  });
});
