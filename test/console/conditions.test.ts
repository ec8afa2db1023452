// Conditions in the console, in a real browser (Debian's Chromium through playwright-core),
// against a whole Weir in this process: a route written with a text condition (checked as it
// is typed: a syntax error with its column, then accepted) and transforms (a bad sample rate
// refused on its row), a route after a final one that covers it warned about in the dialog and
// marked unreachable in the list, and a Sigma rule imported from a file: its translation shown
// before it is created, then edited as text. Every dialog passes axe-core and is captured under
// console-screenshots/.
//
// The Sigma rule is SigmaHQ's "Group Membership Reconnaissance Via Whoami.EXE" (author
// Nasreddine Bencherchali, Nextron Systems), from the pinned rules in third_party/sigma
// (https://github.com/SigmaHQ/sigma, Detection Rule License 1.1, third_party/sigma/LICENSE.md).
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
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

const SIGMA_RULE = path.resolve(
  import.meta.dirname,
  '../../third_party/sigma/rules/windows/process_creation/proc_creation_win_whoami_groups_discovery.yml',
);
const hasChromium = existsSync(CHROMIUM);

let weir: RunningWeir;
let browser: Browser;
let admin: Watched;

/** The first administrator, the organization Acme shown, and a file destination "files". */
async function ready(w: Watched): Promise<void> {
  const { page } = w;
  if ((await page.getByRole('navigation', { name: 'Console' }).count()) > 0) return;
  await page.goto(`${weir.url}/`);
  await bootstrapAdmin(page);
  await createOrganization(page, 'Acme');
  await page.getByRole('banner').getByLabel('Organization').selectOption({ label: 'Acme' });
  await nav(page, 'Destinations');
  await page.getByRole('button', { name: 'New destination' }).click();
  const dialog = page.getByRole('dialog', { name: 'New destination' });
  await dialog.getByLabel('Name').fill('files');
  await dialog.getByLabel('Type').selectOption('file');
  await dialog.getByLabel('Organization').selectOption({ label: 'Acme' });
  await dialog.getByLabel('path (required)').fill('app');
  await dialog.getByRole('button', { name: 'Create destination' }).click();
  await heading(page, 'files');
}

const checkText = (scope: ReturnType<Page['getByRole']>) => () => scope.getByTestId('condition-check').textContent();

describe.skipIf(!hasChromium)(
  'conditions, transforms, route warnings and Sigma import in the console',
  { timeout: 120_000 },
  () => {
    beforeAll(async () => {
      const dir = await buildConsole();
      [weir, browser] = await Promise.all([startWeir(dir), launch()]);
      admin = await openPage(browser);
    }, 180_000);
    afterAll(async () => {
      await browser?.close();
      await weir?.stop();
    });

    it('creates a route with a text condition and transforms, each checked as it is typed', async () => {
      await ready(admin);
      const { page } = admin;
      await nav(page, 'Routes');
      await page.getByRole('button', { name: 'New route' }).click();
      const form = page.getByRole('dialog', { name: 'New route' });
      await form.getByLabel('Name').fill('admins to files');
      await form.getByLabel('files (file)').check();
      const condition = form.getByLabel('Condition');
      await condition.fill('class_uid = 3002 and actor.user.name ~');
      await expect
        .poll(checkText(form), { timeout: 10_000 })
        .toBe('condition: expected a value, found the end of the query (line 1, column 39)');
      await condition.fill('class_uid = 3002 and actor.usr.name ~ "adm*"');
      await expect
        .poll(checkText(form), { timeout: 10_000 })
        .toContain("closest known field: 'actor.user.name' (line 1, column 22)");
      await condition.fill('class_uid = 3002 and actor.user.name ~ "adm*"');
      await expect.poll(checkText(form), { timeout: 10_000 }).toBe('Condition accepted.');

      await form.getByRole('button', { name: 'Add transform' }).click();
      await form.getByLabel('Transform 1', { exact: true }).selectOption('drop_fields');
      await form.getByLabel('Fields', { exact: true }).fill('raw_data, unmapped');
      await form.getByRole('button', { name: 'Add transform' }).click();
      await form.getByLabel('Transform 2', { exact: true }).selectOption('sample');
      const rate = form.getByLabel('Rate (kept share)');
      await rate.fill('2');
      await form.getByText('The rate is the share of events kept').waitFor();
      expect(await form.getByRole('button', { name: 'Create route' }).isDisabled()).toBe(true);
      await rate.fill('0.5');
      await expect.poll(() => form.getByText('The rate is the share of events kept').count()).toBe(0);
      await form.getByLabel('Final (later routes are not tried)').check();
      await accessible(admin, 'conditions-route-new');
      await form.getByRole('button', { name: 'Create route' }).click();

      const list = page.getByRole('list', { name: 'Routes in order' });
      const row = list.getByRole('listitem').filter({ hasText: 'admins to files' });
      await row.getByText('class_uid = 3002 and actor.user.name startswith "adm"').waitFor();
      await row.getByText('2 transform(s)', { exact: false }).waitFor();

      // Edited again, the condition reads as the text and the transforms as their rows.
      await row.getByRole('button', { name: 'Edit' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit admins to files' });
      expect(await edit.getByLabel('Condition').inputValue()).toBe(
        'class_uid = 3002 and actor.user.name startswith "adm"',
      );
      expect(await edit.getByLabel('Rate (kept share)').inputValue()).toBe('0.5');
      expect(await edit.getByTestId('transform-row').count()).toBe(2);
      await edit.getByRole('button', { name: 'Close' }).click();
    });

    it('warns about a route after a final route that covers it, in the dialog and in the list', async () => {
      await ready(admin);
      const { page } = admin;
      await page.getByRole('button', { name: 'New route' }).click();
      const form = page.getByRole('dialog', { name: 'New route' });
      await form.getByLabel('Name').fill('severe admin logons');
      await form.getByLabel('files (file)').check();
      await form
        .getByLabel('Condition')
        .fill('class_uid = 3002 and actor.user.name startswith "adm" and severity_id >= 4');
      await expect.poll(checkText(form), { timeout: 10_000 }).toBe('Condition accepted.');
      await form.getByRole('button', { name: 'Create route' }).click();
      const warning = form.getByTestId('route-warnings');
      await warning.waitFor();
      expect(await warning.textContent()).toContain(
        'Never matches: route "admins to files" (position 2) is final and matches every event this route would',
      );
      await accessible(admin, 'conditions-route-warning');
      await form.getByRole('button', { name: 'Close', exact: true }).last().click();
      const row = page
        .getByRole('list', { name: 'Routes in order' })
        .getByRole('listitem')
        .filter({ hasText: 'severe admin logons' });
      await row.getByText('unreachable', { exact: true }).waitFor();
      await row.getByText('never matches: final route "admins to files" comes first', { exact: false }).waitFor();
      await accessible(admin, 'conditions-routes-unreachable');
    });

    it('imports a Sigma rule from a file: its translation first, then the rule, edited as text', async () => {
      await ready(admin);
      const { page } = admin;
      await nav(page, 'Detection rules');
      await page.getByRole('button', { name: 'Import Sigma rule' }).click();
      const dialog = page.getByRole('dialog', { name: 'Import a Sigma rule' });
      await dialog.getByLabel('Or read a file').setInputFiles(SIGMA_RULE);
      const preview = dialog.getByTestId('sigma-preview');
      await expect.poll(() => preview.textContent(), { timeout: 10_000 }).toContain('Compiles to the rule below.');
      const text = await preview.textContent();
      expect(text).toContain('Group Membership Reconnaissance Via Whoami.EXE');
      expect(text).toContain('TA0007');
      expect(text).toContain('category: process_creation');
      const compiled = (await dialog.getByTestId('sigma-condition').textContent()) ?? '';
      expect(compiled).toContain('process.file.path endswith "\\\\whoami.exe" nocase');
      await accessible(admin, 'conditions-sigma-import');
      await dialog.getByRole('button', { name: 'Create rule' }).click();
      const table = page.getByRole('table', { name: 'Detection rules' });
      await table.getByRole('cell', { name: 'Group Membership Reconnaissance Via Whoami.EXE', exact: true }).waitFor();

      await page.getByRole('button', { name: 'Edit Group Membership Reconnaissance Via Whoami.EXE' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit Group Membership Reconnaissance Via Whoami.EXE' });
      expect(await edit.getByLabel('Condition').inputValue()).toBe(compiled);
      await expect.poll(checkText(edit), { timeout: 10_000 }).toBe('Condition accepted.');
      await accessible(admin, 'conditions-rule-edit');
    });
  },
);
