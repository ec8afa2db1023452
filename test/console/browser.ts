// Playwright (playwright-core, Debian's Chromium: nothing downloads a browser) for the console
// tests: pages that record Content-Security-Policy violations and page errors, the axe-core
// check, and screenshots kept under console-screenshots/ for reviewers (CI artifacts).
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { CHROMIUM } from './server.js';

export const SHOTS = path.resolve(import.meta.dirname, '../../console-screenshots');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function launch(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export interface Watched {
  page: Page;
  /** CSP violations and uncaught page errors seen so far. */
  problems: string[];
}

export async function openPage(
  browser: Browser,
  options: { colorScheme?: 'light' | 'dark'; timezoneId?: string } = {},
): Promise<Watched> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 860 },
    colorScheme: options.colorScheme ?? 'light',
    timezoneId: options.timezoneId ?? 'Europe/Paris',
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return { page, problems };
}

export interface AxeViolation {
  id: string;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core on the page as it is (WCAG 2.1 A and AA); evaluated through DevTools, so the page's CSP stays whole. */
export async function axe(page: Page): Promise<string[]> {
  // Strings run in the page (this file is type-checked without the DOM library).
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(axeSource);
  const violations = (await page.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
       .then((r) => r.violations.map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`,
  )) as AxeViolation[];
  return violations.map(
    (v) =>
      `${v.id}: ${v.help} (${v.nodes
        .map((n) => n.target.join(' '))
        .slice(0, 3)
        .join('; ')})`,
  );
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

// The journeys' shared steps: a screen's heading, a navigation link, and the check every screen passes.

export async function heading(page: Page, name: string | RegExp): Promise<void> {
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

export /** Opens a screen by its navigation link, as a user would. */
async function nav(page: Page, link: string, title: string | RegExp = link): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: link, exact: true }).click();
  await heading(page, title);
}

export async function accessible(w: Watched, name: string): Promise<void> {
  await shot(w.page, name);
  expect(await axe(w.page), `axe on ${name}`).toEqual([]);
  expect(w.problems, `CSP violations or page errors on ${name}`).toEqual([]);
}

/** The first platform administrator the console tests create. */
export const ADMIN = { username: 'admin', password: 'correct horse battery', email: 'admin@example.com' };

/** First run: the bootstrap form filled for the first administrator, who lands on the Dashboard. */
export async function bootstrapAdmin(page: Page): Promise<void> {
  await page.getByText('Create the first platform administrator.').waitFor();
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('E-mail').fill(ADMIN.email);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Create and sign in' }).click();
  await heading(page, 'Dashboard');
}

/** Creates an organization on the Organizations screen and waits for it in the list. */
export async function createOrganization(page: Page, name: string): Promise<void> {
  await nav(page, 'Organizations');
  await page.getByLabel('New organization').fill(name);
  await page.getByRole('button', { name: 'Create organization' }).click();
  await page.getByRole('cell', { name, exact: true }).waitFor();
}
