// What a mapping author reads in the console's mapping editor on real Okta samples
// (test/corpus/okta): captions such as class_name readable for everyone; personal data shown
// to whoever may read raw events (quarantine.read: the administrator here), masked for a
// viewer, each told which by a note. Both screens pass axe and are captured under
// console-screenshots/.
import { existsSync, readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, setUpIngestion, type IngestSetup } from '../support/ingest.js';
import { launch, openPage, accessible } from './browser.js';
import { buildConsole, CHROMIUM, startWeir, type RunningWeir } from './server.js';

const hasChromium = existsSync(CHROMIUM);
const RAW = readFileSync(new URL('../corpus/okta/system_log/elastic-okta.ndjson', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim());
const VIEWER = { username: 'mona', password: 'viewer password 2', email: 'mona@example.com' };
const ADMIN = { username: 'pipeline-admin', password: 'pipeline-password-123' };

let weir: RunningWeir;
let browser: Browser;
let setup: IngestSetup;
let mappingId: string;

async function signIn(page: Page, who: { username: string; password: string }): Promise<void> {
  await page.goto(`${weir.url}/`);
  await page.getByLabel('Username').fill(who.username);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
}

/** The mapping editor's OCSF outputs of every sample, once the dry run has answered. */
async function dryRunOutput(page: Page): Promise<string> {
  await page.goto(`${weir.url}/mappings/${mappingId}`);
  await page.getByRole('heading', { level: 1, name: /^Mapping:/ }).waitFor();
  const texts: string[] = [];
  for (let i = 1; i <= RAW.length; i++) {
    const output = page.getByRole('article', { name: `Sample ${i}` }).getByLabel(`Sample ${i} OCSF output`);
    await output.getByText('"class_name"').waitFor({ timeout: 20_000 });
    texts.push((await output.textContent()) ?? '');
  }
  return texts.join('\n');
}

describe.skipIf(!hasChromium)('the mapping editor on real Okta samples', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    const dir = await buildConsole();
    [weir, browser] = await Promise.all([startWeir(dir), launch()]);
    setup = await setUpIngestion(weir.url, ['okta']);
    const user = await http(
      weir.url,
      'POST',
      '/api/auth/users',
      { ...VIEWER, role: 'viewer', organization_id: setup.organizationId },
      { cookie: setup.cookie },
    );
    expect(user.status).toBe(201);
    const pushed = await fetch(`${weir.url}/api/ingest/system_log`, {
      method: 'POST',
      headers: { authorization: `Bearer ${setup.integrations[0]!.token}`, 'content-type': 'application/x-ndjson' },
      body: RAW.join('\n'),
    });
    expect(pushed.status).toBe(200);
    const db = weir.container.database.db;
    for (let i = 0; (await db.selectFrom('raw_samples').select('id').execute()).length < RAW.length; i++) {
      if (i > 300) throw new Error('the samples were not stored');
      await new Promise((r) => setTimeout(r, 100));
    }
    const def = await db
      .selectFrom('mapping_definitions')
      .select('id')
      .where('platform', '=', 'okta')
      .where('stream', '=', 'system_log')
      .executeTakeFirstOrThrow();
    mappingId = def.id;
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await weir?.stop();
  });

  it('shows the administrator the output unmasked, and says so', async () => {
    const admin = await openPage(browser);
    await signIn(admin.page, ADMIN);
    const text = await dryRunOutput(admin.page);
    expect(text).toContain('"Authentication"');
    expect(text).toContain('username@elastic.co');
    await admin.page.getByTestId('dry-run-masking').getByText('Shown unmasked').waitFor();
    await accessible(admin, 'mapping-dry-run-unmasked');
    await admin.page.context().close();
  });

  it('shows a viewer captions and codes, personal data masked, and says so', async () => {
    const viewer = await openPage(browser);
    await signIn(viewer.page, VIEWER);
    const text = await dryRunOutput(viewer.page);
    expect(text).toContain('"Authentication"');
    expect(text).toContain('"Identity & Access Management"');
    expect(text).toContain('"user.session.end"');
    expect(text).toContain('u***@elastic.co');
    expect(text).not.toContain('username@elastic.co');
    await viewer.page
      .getByTestId('dry-run-masking')
      .getByText(/Personal data .* is masked/)
      .waitFor();
    await accessible(viewer, 'mapping-dry-run-masked');
    await viewer.page.context().close();
  });
});
