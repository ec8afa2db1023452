// Triage at SOC volume in a real browser, against a whole Weir running in this process: an
// administrator connects CrowdStrike Falcon, its relay pushes a hundred occurrences of one
// low-severity alert (a real sample of test/corpus, each with its own composite id) and one
// critical identity alert; the Detections screen shows them grouped with the critical one
// first, opens the big group into its findings, marks the whole group a false positive in one
// action (the counts change), and the critical detection shows its ATT&CK technique by name and
// its evidence as the fields that matched, each event opening in Search. Every screen passes
// axe-core and is captured under console-screenshots/.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
const COPIES = 100;

type Json = Record<string, unknown>;
const SAMPLES = readFileSync(
  path.resolve(import.meta.dirname, '../corpus/crowdstrike_falcon/alerts/elastic-alerts.ndjson'),
  'utf8',
)
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Json);
/** Another occurrence of a sample: its own composite id and time. */
function occurrence(index: number, n: number, minute: number, change: Json = {}): Json {
  const s = structuredClone(SAMPLES[index]!);
  const at = new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();
  return {
    ...s,
    composite_id: `${String(s.composite_id)}-copy-${n}`,
    updated_timestamp: at,
    created_timestamp: at,
    timestamp: at,
    ...change,
  };
}

let weir: RunningWeir;
let browser: Browser;
let admin: Watched;

async function ready(w: Watched): Promise<void> {
  const { page } = w;
  await page.goto(`${weir.url}/`);
  await bootstrapAdmin(page);
  await createOrganization(page, 'Acme');
  await page.getByRole('banner').getByLabel('Organization').selectOption({ label: 'Acme' });
}

describe.skipIf(!hasChromium)('detections triage in a real browser', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    const dir = await buildConsole();
    [weir, browser] = await Promise.all([startWeir(dir), launch()]);
    admin = await openPage(browser);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await weir?.stop();
  });

  it('groups a hundred identical findings, the critical one first, and closes the group in one action', async () => {
    const { page } = admin;
    await ready(admin);
    await nav(page, 'Integrations');
    await page.getByRole('button', { name: 'New integration' }).click();
    const dialog = page.getByRole('dialog', { name: 'New integration' });
    await dialog.getByLabel('Name').fill('falcon');
    await dialog.getByLabel('Platform').selectOption('crowdstrike_falcon');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await heading(page, 'falcon');
    await page.getByRole('button', { name: 'New ingestion token' }).click();
    const token = (await page.getByTestId('ingestion-token').textContent()) ?? '';

    const alerts = [
      ...Array.from({ length: COPIES }, (_, i) => occurrence(0, i, 100 + i)),
      ...Array.from({ length: 3 }, (_, i) => occurrence(2, i, 50 + i)),
      occurrence(1, 0, 0, { severity_name: 'Critical' }),
    ];
    const res = await fetch(`${weir.url}/api/ingest/alerts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
      body: alerts.map((a) => JSON.stringify(a)).join('\n'),
    });
    expect(res.status).toBe(200);

    await nav(page, 'Detections');
    const groups = page.getByRole('table', { name: 'Detection groups' });
    const big = groups.getByRole('button', { name: `PrewittPupAdwareSensorDetect-Lowest (${COPIES} findings)` });
    for (let i = 0; i < 60 && !(await big.isVisible()); i++) {
      await page.waitForTimeout(500);
      await page.reload();
      await heading(page, 'Detections');
    }
    await big.waitFor();
    const rows = groups.getByRole('row');
    await expect.poll(() => rows.count()).toBe(4);
    // The critical one first, then the medium group, then the hundred low ones.
    await expect.poll(() => rows.nth(1).textContent()).toContain('Identity verification denied');
    expect(await rows.nth(1).textContent()).toContain('critical');
    expect(await rows.nth(2).textContent()).toContain('OnDemandScanMLFileAnalysisMedium (3 findings)');
    expect(await rows.nth(3).textContent()).toContain('device.hostname=abc709-1175');
    await accessible(admin, 'detections-grouped');

    await big.click();
    const opened = page.getByRole('region', { name: /PrewittPupAdwareSensorDetect-Lowest/ });
    await opened.getByRole('table').waitFor();
    await expect.poll(() => opened.getByRole('row').count()).toBe(26);
    expect(await opened.getByRole('navigation').textContent()).toContain(String(COPIES));
    await accessible(admin, 'detections-group-open');

    await groups.getByRole('checkbox', { name: /Select group PrewittPupAdwareSensorDetect-Lowest/ }).check();
    await page.getByLabel('Change the selected to').selectOption('false_positive');
    await page.getByRole('button', { name: 'Apply to 1 group(s)' }).click();
    await page.getByText(`${COPIES} finding(s) changed.`).waitFor();
    await expect.poll(() => groups.getByRole('row').count()).toBe(3);
    expect(await groups.textContent()).not.toContain('PrewittPupAdwareSensorDetect-Lowest');
    await accessible(admin, 'detections-bulk-changed');

    await page.getByLabel('Status', { exact: true }).selectOption('false_positive');
    const closed = page.getByRole('table', { name: 'Detection groups' });
    await expect.poll(() => closed.getByRole('row').count()).toBe(2);
    expect(await closed.textContent()).toContain(`${COPIES} false positive`);

    await page.getByLabel('Status', { exact: true }).selectOption('new,in_progress');
    await page.getByLabel('Show').selectOption('findings');
    const findings = page.getByRole('table', { name: 'Detections' });
    await expect.poll(() => findings.getByRole('row').count()).toBe(5);
    expect(await findings.getByRole('row').nth(1).textContent()).toContain('Identity verification denied');
    await accessible(admin, 'detections-findings');
  });

  it('shows the ATT&CK technique by name and the evidence as the fields that matched, each event opening in Search', async () => {
    const { page } = admin;
    await page
      .getByRole('table', { name: 'Detections' })
      .getByRole('link', { name: 'Identity verification denied' })
      .click();
    await heading(page, 'Identity verification denied');
    const mitre = page.getByRole('region', { name: 'MITRE ATT&CK' });
    await mitre.getByRole('link', { name: 'T1110 Brute Force' }).waitFor();
    expect(await mitre.textContent()).toContain('Credential Access');
    const evidence = page.getByRole('region', { name: 'Evidence' });
    const matched = evidence.getByRole('table', { name: 'Fields that matched' });
    await matched.getByRole('row', { name: /evidences\[\*\]\.user\.name\s*admin\.example/ }).waitFor();
    await matched.getByRole('row', { name: /evidences\[\*\]\.src_endpoint\.ip\s*81\.2\.69\.144/ }).waitFor();
    expect(await page.getByText('user.name=admin.example').count()).toBeGreaterThan(0);
    await accessible(admin, 'detection-evidence');

    await evidence.getByRole('link', { name: 'Event 1' }).click();
    await heading(page, 'Search');
    expect(await page.getByLabel('Query', { exact: true }).inputValue()).toMatch(/^envelope\.id = "[0-9a-f-]{36}"$/);
    expect(await page.getByLabel('Time range').inputValue()).toBe('absolute');
  });
});
