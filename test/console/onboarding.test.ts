// The first hour in the console, in a real browser against a whole fresh Weir: the dashboard's
// checklist from the first administrator on, the New integration dialog without and then with
// one organization (preselected), the integration's "Where and how to send" panel (ingest URL,
// streams, the command), "Send sample events" through the ingest path, a destination and a
// route, until the checklist completes and goes. Every screen passes axe and is captured.
import { existsSync } from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, openPage, type Watched, heading, nav, accessible, bootstrapAdmin, ADMIN } from './browser.js';
import { buildConsole, CHROMIUM, startWeir, type RunningWeir } from './server.js';

const hasChromium = existsSync(CHROMIUM);

let weir: RunningWeir;
let browser: Browser;
let admin: Watched;
let integrationPath = '';

const checklist = (page: Page): Locator => page.getByTestId('onboarding');

/** Each step of the checklist as shown: its title and whether it reads done. */
async function steps(page: Page): Promise<Record<string, boolean>> {
  const items = checklist(page).getByRole('listitem');
  const out: Record<string, boolean> = {};
  for (const item of await items.all()) {
    const id = (await item.getAttribute('data-step')) ?? '';
    if (id) out[id] = (await item.locator('.badge').textContent()) === 'done';
  }
  return out;
}

/** The checklist's steps once the dashboard shows them, reloading until `expected` holds. */
async function expectSteps(page: Page, expected: Record<string, boolean>): Promise<void> {
  await expect
    .poll(
      async () => {
        await page.reload();
        await heading(page, 'Dashboard');
        await checklist(page).waitFor();
        return steps(page);
      },
      { timeout: 20_000, interval: 500 },
    )
    .toEqual(expected);
}

describe.skipIf(!hasChromium)('onboarding in the console', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    const dir = await buildConsole();
    [weir, browser] = await Promise.all([startWeir(dir), launch()]);
    admin = await openPage(browser);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await weir?.stop();
  });

  it('shows the checklist to the first administrator, every step undone', async () => {
    const { page } = admin;
    await page.goto(`${weir.url}/`);
    await bootstrapAdmin(page);
    await checklist(page).waitFor();
    expect(await steps(page)).toEqual({
      organization: false,
      integration: false,
      send: false,
      destination: false,
      route: false,
      events: false,
    });
    expect(await checklist(page).textContent()).toContain('6 of 6 steps left');
    // Issue 30 item 11: why Delivered may be above Events in, said where both are shown.
    expect(await page.getByTestId('delivered-note').textContent()).toContain('Delivered counts one per destination');
    await accessible(admin, 'onboarding-checklist');
  });

  it('says where to create an organization when there is none, then preselects the only one', async () => {
    const { page } = admin;
    await checklist(page).getByRole('link', { name: 'Integrations' }).click();
    await heading(page, 'Integrations');
    await page.getByRole('button', { name: 'New integration' }).click();
    const dialog = page.getByRole('dialog', { name: 'New integration' });
    const hint = dialog.getByTestId('no-organization');
    await hint.waitFor();
    expect(await hint.textContent()).toContain('There is no organization yet');
    expect(await dialog.getByRole('button', { name: 'Create' }).isDisabled()).toBe(true);
    await accessible(admin, 'integrations-new-no-organization');
    await hint.getByRole('link', { name: 'create an organization' }).click();
    await heading(page, 'Organizations');

    await page.getByLabel('New organization').fill('Acme');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('cell', { name: 'Acme', exact: true }).waitFor();

    await nav(page, 'Integrations');
    await page.getByRole('button', { name: 'New integration' }).click();
    await dialog.getByLabel('Name').fill('okta');
    await dialog.getByLabel('Platform').selectOption('okta');
    const org = dialog.getByLabel('Organization');
    await expect.poll(async () => org.locator('option:checked').textContent()).toBe('Acme');
    expect(await dialog.getByTestId('no-organization').count()).toBe(0);
    await accessible(admin, 'integrations-new-preselected');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await heading(page, 'okta');
    integrationPath = new URL(page.url()).pathname;
  });

  it('shows where and how to send: the ingest URL, the streams and the command', async () => {
    const { page } = admin;
    const panel = page.getByRole('region', { name: 'Where and how to send' });
    await panel.getByTestId('ingest-url').waitFor();
    expect(await panel.getByTestId('ingest-url').textContent()).toBe(`${weir.url}/api/ingest/system_log`);
    expect(await panel.getByTestId('ingest-streams').textContent()).toContain('system_log (JSON objects)');
    const command = panel.getByTestId('send-command');
    expect(await command.textContent()).toContain(`curl -X POST '${weir.url}/api/ingest/system_log'`);
    expect(await command.textContent()).toContain('Authorization: Bearer $INGEST_TOKEN');
    expect(await command.textContent()).toContain('"eventType":"user.session.start"');
    await accessible(admin, 'integration-how-to-send');

    // With the token made on the page, the command carries it.
    await page.getByRole('button', { name: 'New ingestion token' }).click();
    const token = (await page.getByTestId('ingestion-token').textContent()) ?? '';
    expect(token).toMatch(/^svcik_/);
    await expect.poll(() => command.textContent()).toContain(`Authorization: Bearer ${token}`);

    // The command works as written: run its request.
    const text = (await command.textContent()) ?? '';
    const body = /--data-binary '([^\n]*)'$/.exec(text)?.[1]?.replace(/'\\''/g, "'") ?? '';
    const pushed = await fetch(`${weir.url}/api/ingest/system_log`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
      body,
    });
    expect(pushed.status).toBe(200);
    expect(((await pushed.json()) as { accepted: number }).accepted).toBe(1);
  });

  it('sends the sample events, and the checklist follows', async () => {
    const { page } = admin;
    await nav(page, 'Dashboard');
    await expectSteps(page, {
      organization: true,
      integration: true,
      send: true,
      destination: false,
      route: false,
      events: true,
    });
    await checklist(page).getByRole('link', { name: 'Send sample events' }).click();
    await heading(page, 'okta');
    await page.getByRole('button', { name: 'Send sample events' }).click();
    const notice = page.getByRole('status').filter({ hasText: 'sample events' });
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/^Accepted (\d+) sample events \(system_log: \1\)/);
    await accessible(admin, 'integration-sample-events');
    const accepted = Number(/Accepted (\d+)/.exec((await notice.textContent()) ?? '')?.[1]);

    // Counted on the dashboard: the pushed example and the samples.
    await nav(page, 'Dashboard');
    const eventsIn = page.getByTestId('last-hour').getByRole('definition').first();
    await expect
      .poll(async () => (await page.reload(), await eventsIn.textContent()), { timeout: 20_000, interval: 300 })
      .toBe(String(accepted + 1));
  });

  it('can be dismissed, and stays dismissed in that browser', async () => {
    const other = await openPage(browser);
    await other.page.goto(`${weir.url}/`);
    await other.page.getByLabel('Username').fill(ADMIN.username);
    await other.page.getByLabel('Password').fill(ADMIN.password);
    await other.page.getByRole('button', { name: 'Sign in' }).click();
    await heading(other.page, 'Dashboard');
    await checklist(other.page).waitFor();
    await checklist(other.page).getByRole('button', { name: 'Dismiss' }).click();
    expect(await checklist(other.page).count()).toBe(0);
    await other.page.reload();
    await other.page.getByTestId('last-hour').waitFor();
    expect(await checklist(other.page).count()).toBe(0);
    await other.page.context().close();
  });

  it('completes with a destination and a route, and goes', async () => {
    const { page } = admin;
    await nav(page, 'Destinations');
    await page.getByRole('button', { name: 'New destination' }).click();
    const dialog = page.getByRole('dialog', { name: 'New destination' });
    await dialog.getByLabel('Name').fill('files');
    await dialog.getByLabel('Type').selectOption('file');
    await dialog.getByLabel('Organization').selectOption({ label: 'Acme' });
    await dialog.getByLabel('path (required)').fill('okta');
    await dialog.getByRole('button', { name: 'Create destination' }).click();
    await heading(page, 'files');

    await nav(page, 'Dashboard');
    await expectSteps(page, {
      organization: true,
      integration: true,
      send: true,
      destination: true,
      route: false,
      events: true,
    });
    expect(await checklist(page).textContent()).toContain('1 of 6 steps left');
    await accessible(admin, 'onboarding-checklist-route-left');

    await checklist(page).getByRole('link', { name: 'Routes' }).click();
    await heading(page, 'Routes');
    await page.getByRole('button', { name: 'New route' }).click();
    const form = page.getByRole('dialog', { name: 'New route' });
    await form.getByLabel('Name').fill('okta to files');
    await form.getByLabel('files (file)').check();
    await form.getByRole('button', { name: 'Create route' }).click();
    await page.getByRole('list', { name: 'Routes in order' }).getByText('okta to files', { exact: true }).waitFor();

    await nav(page, 'Dashboard');
    await expect
      .poll(async () => (await page.reload(), await page.getByTestId('last-hour').waitFor(), checklist(page).count()), {
        timeout: 20_000,
        interval: 500,
      })
      .toBe(0);
    expect(await page.evaluate('localStorage.getItem("weir.onboarding")')).toBe('done');
    await accessible(admin, 'dashboard-onboarded');
    // The integration's page keeps the panel after onboarding.
    await page.goto(`${weir.url}${integrationPath}`);
    await page.getByRole('region', { name: 'Where and how to send' }).waitFor();
  });
});
