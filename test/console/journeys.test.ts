// The console in a real browser (Debian's Chromium through playwright-core), against a whole
// Weir running in this process: the first-run journey, events seen on the dashboard and the
// data-flow map, a file destination and a route that deliver, a quarantined stream fixed in
// the mapping editor and reprocessed, and a viewer who is offered no write action. Every
// screen passes axe-core and is captured under console-screenshots/.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  axe,
  launch,
  openPage,
  shot,
  type Watched,
  heading,
  nav,
  accessible,
  bootstrapAdmin,
  createOrganization,
} from './browser.js';
import { buildConsole, CHROMIUM, startWeir, type RunningWeir } from './server.js';

const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.log(
    `console browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set WEIR_CHROMIUM)`,
  );

// Under CI a missing Chromium is a failure, as a missing rsyslogd or PostgreSQL is: the journeys must run there.
describe.runIf(Boolean(process.env.CI))('the console browser tests under CI', () => {
  it('find Chromium', () => {
    expect(hasChromium, `no Chromium at ${CHROMIUM}: .ci/run installs it (apt-get install -y chromium)`).toBe(true);
  });
});

const VIEWER = { username: 'vera', password: 'viewer password 1', email: 'vera@example.com' };

let weir: RunningWeir;
let browser: Browser;
let admin: Watched;
const ids: { integration?: string; destination?: string; mapping?: string; ingestToken?: string; detection?: string } =
  {};

async function push(stream: string, events: Record<string, unknown>[]): Promise<void> {
  const res = await fetch(`${weir.url}/api/ingest/${stream}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ids.ingestToken}`, 'content-type': 'application/x-ndjson' },
    body: events.map((e) => JSON.stringify(e)).join('\n'),
  });
  expect(res.status).toBe(200);
}

async function signIn(page: Page, who: { username: string; password: string }): Promise<void> {
  await page.goto(`${weir.url}/`);
  await page.getByLabel('Username').fill(who.username);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await heading(page, 'Dashboard');
}

/** Signed in as the administrator with Acme shown: made here when a journey runs alone (-t). */
async function ready(w: Watched): Promise<void> {
  const { page } = w;
  if ((await page.getByRole('navigation', { name: 'Console' }).count()) > 0) return;
  await page.goto(`${weir.url}/`);
  await bootstrapAdmin(page);
  await createOrganization(page, 'Acme');
  await page.getByRole('banner').getByLabel('Organization').selectOption({ label: 'Acme' });
}

const LOGINS = ['alice', 'bob', 'carol'].map((user, i) => ({ user, action: 'login', ts: `2026-11-26T10:0${i}:00Z` }));
const DRAFT = {
  product: { name: 'App', vendor_name: 'Acme' },
  rules: [
    {
      name: 'logins',
      class_uid: 3002,
      activity_id: 1,
      set: [
        { target: 'time', from: 'ts', cast: 'timestamp' },
        { target: 'user.name', from: 'user' },
      ],
    },
  ],
};
const FIXED = {
  ...DRAFT,
  rules: [{ ...DRAFT.rules[0], set: [...(DRAFT.rules[0]?.set ?? []), { target: 'service.name', value: 'app' }] }],
};

// Journeys run beside other test files on 2 shared cores: generous per-test time, never a timed assertion.
describe.skipIf(!hasChromium)('the console in a real browser', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    const dir = await buildConsole();
    [weir, browser] = await Promise.all([startWeir(dir), launch()]);
    admin = await openPage(browser);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await weir?.stop();
  });

  it('first run: bootstrap, sign in, create an organization, an integration and a token', async () => {
    const { page } = admin;
    await page.goto(`${weir.url}/`);
    await page.getByText('Create the first platform administrator.').waitFor();
    await accessible(admin, 'sign-in-first-run');
    await bootstrapAdmin(page);

    await createOrganization(page, 'Acme');
    await page.getByRole('banner').getByLabel('Organization').selectOption({ label: 'Acme' });

    await nav(page, 'Integrations');
    await page.getByRole('button', { name: 'New integration' }).click();
    const dialog = page.getByRole('dialog', { name: 'New integration' });
    await dialog.getByLabel('Name').fill('app');
    await dialog.getByLabel('Platform').selectOption('custom');
    await accessible(admin, 'integrations-new');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await heading(page, 'app');
    ids.integration = page.url().split('/').pop();
    await page.getByRole('button', { name: 'New ingestion token' }).click();
    ids.ingestToken = (await page.getByTestId('ingestion-token').textContent()) ?? '';
    expect(ids.ingestToken).toMatch(/^svcik_/);
    await accessible(admin, 'integration-detail');

    await nav(page, 'API tokens');
    await page.getByLabel('Token name').fill('automation');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.getByTestId('new-token').textContent()) ?? '';
    expect(token).toMatch(/^svcsk_/);
    await page.getByRole('cell', { name: token.slice(0, 12) }).waitFor();
    await accessible(admin, 'api-tokens');
  });

  it('shows pushed events on the dashboard and the data-flow map', async () => {
    const { page } = admin;
    await push('app', LOGINS);
    await nav(page, 'Dashboard');
    const eventsIn = page.getByTestId('last-hour').getByRole('definition').first();
    await expect
      .poll(async () => (await page.reload(), await eventsIn.textContent()), { timeout: 20_000, interval: 300 })
      .toBe('3');
    await accessible(admin, 'dashboard');

    await nav(page, 'Data flow');
    const node = page
      .getByTestId('flow-map')
      .getByRole('group')
      .filter({ hasText: 'integration' })
      .filter({ hasText: 'app' });
    await expect.poll(async () => node.textContent(), { timeout: 10_000 }).toContain('events in 3');
    await accessible(admin, 'data-flow');
    await node.click();
    await heading(page, 'app');
  });

  it('creates a file destination and a route', async () => {
    const { page } = admin;
    await nav(page, 'Destinations');
    await page.getByRole('button', { name: 'New destination' }).click();
    const dialog = page.getByRole('dialog', { name: 'New destination' });
    await dialog.getByLabel('Name').fill('files');
    await dialog.getByLabel('Type').selectOption('file');
    await dialog.getByLabel('Organization').selectOption({ label: 'Acme' });
    await dialog.getByLabel('path (required)').fill('app');
    await accessible(admin, 'destinations-new');
    await dialog.getByRole('button', { name: 'Create destination' }).click();
    await heading(page, 'files');
    ids.destination = page.url().split('/').pop();

    await nav(page, 'Routes');
    await page.getByRole('button', { name: 'New route' }).click();
    const form = page.getByRole('dialog', { name: 'New route' });
    await form.getByLabel('Name').fill('everything');
    await form.getByLabel('files (file)').check();
    // The condition editor checks as you type: an unknown OCSF field is refused with its detail.
    const condition = form.getByLabel('Condition');
    await condition.fill('{"field": "actor.usr.name", "op": "eq", "value": "alice"}');
    await expect
      .poll(() => form.getByTestId('condition-check').textContent(), { timeout: 10_000 })
      .toContain('actor.user.name');
    await condition.fill('{"field": "actor.user.name", "op": "eq", "value": "alice"}');
    await expect
      .poll(() => form.getByTestId('condition-check').textContent(), { timeout: 10_000 })
      .toBe('Condition accepted.');
    await condition.fill('');
    await accessible(admin, 'routes-new');
    await form.getByRole('button', { name: 'Create route' }).click();
    await page.getByRole('list', { name: 'Routes in order' }).getByText('everything', { exact: true }).waitFor();
    await accessible(admin, 'routes');
  });

  it("fixes a quarantined stream with the mapping editor's dry run, publishes and reprocesses, then delivers", async () => {
    const { page } = admin;
    await nav(page, 'Quarantine');
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'no mapping' }).count()).toBe(3);
    await accessible(admin, 'quarantine');

    await nav(page, 'Mappings');
    await page.getByRole('link', { name: 'custom / app' }).click();
    await heading(page, 'Mapping: custom / app');
    ids.mapping = page.url().split('/').pop();
    const editor = page.getByLabel('Mapping document (JSON)');
    const validation = page.getByTestId('validation');
    await editor.fill('{ "product": ');
    await expect.poll(() => validation.textContent()).toContain('JSON:');
    await editor.fill(JSON.stringify(DRAFT, null, 2));
    await expect.poll(() => validation.textContent(), { timeout: 10_000 }).toContain('3 would be quarantined');
    await page.getByText('authentication needs at least one of service, dst_endpoint').first().waitFor();
    await editor.fill(JSON.stringify(FIXED, null, 2));
    await expect
      .poll(() => validation.textContent(), { timeout: 10_000 })
      .toContain('Valid: 3 of 3 samples map cleanly');
    await page
      .getByRole('article', { name: 'Sample 1' })
      .getByLabel('Sample 1 OCSF output')
      .getByText('"service"')
      .waitFor();
    await accessible(admin, 'mapping-editor');
    await page.getByLabel('Comment').fill('logins');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByText('Published v1').waitFor();

    await nav(page, 'Quarantine');
    await page.getByRole('button', { name: 'Reprocess all matching' }).click();
    await page.getByText('Reprocessed 3 of 3.').waitFor();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'no mapping' }).count()).toBe(0);

    await page.goto(`${weir.url}/destinations/${ids.destination}`);
    await heading(page, 'files');
    await expect
      .poll(
        async () => (
          await page.reload(),
          await page.getByRole('heading', { name: 'Last 24 hours' }).locator('..').textContent()
        ),
        { timeout: 20_000, interval: 500 },
      )
      .toContain('Delivered 3');
    await accessible(admin, 'destination-detail');

    const dir = path.join(weir.sinkRoot, 'org-1', 'app');
    const lines = readdirSync(dir).flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean));
    expect(lines.map((l) => (JSON.parse(l) as { user: { name: string } }).user.name).sort()).toEqual([
      'alice',
      'bob',
      'carol',
    ]);
    // The live tap: what the destination receives from now on, masked, as it arrives.
    await page.getByRole('button', { name: 'Watch for 60 s' }).click();
    await page.getByRole('button', { name: 'Stop' }).waitFor();
    const tap = page.getByTestId('tap');
    await expect
      .poll(
        async () => (
          await push('app', [{ user: 'dave', action: 'login', ts: '2026-11-26T10:09:00Z' }]),
          await tap.textContent()
        ),
        { timeout: 20_000, interval: 1_000 },
      )
      .toContain('"service":{"name":"app"}');
    expect(await tap.textContent()).not.toContain('dave');
    await shot(page, 'destination-tap');
    await page.getByRole('button', { name: 'Stop' }).click();
  });

  it('searches the pushed events: an error at its position, rows, aggregations, CSV, a saved query, the history', async () => {
    const { page } = admin;
    await nav(page, 'Search');
    const query = page.getByLabel('Query', { exact: true });
    await query.fill('class_uid = ');
    await page.getByRole('button', { name: 'Run search' }).click();
    const refusal = page.getByRole('form', { name: 'Search query' }).getByRole('alert');
    await expect
      .poll(() => refusal.textContent())
      .toContain('expected a value, found the end of the query (line 1, column 13)');
    expect(await page.getByTestId('query-caret').textContent()).toBe('class_uid = \n            ^');
    expect(await query.getAttribute('aria-invalid')).toBe('true');

    // The events carry their own times (LOGINS): an absolute range from that day on.
    await page.getByLabel('Time range').selectOption({ label: 'Between two dates' });
    await page.getByLabel('From', { exact: true }).fill('2026-11-26T00:00');
    await query.fill('class_uid = 3002 and user.name in ("alice", "bob")');
    await page.getByLabel('Count by').fill('user.name');
    const result = page.getByTestId('search-result');
    const matched = result.getByRole('definition').nth(1);
    // The reprocessed events reach the event store with their delivery: search until they are there.
    await expect
      .poll(
        async () => (
          await page.getByRole('button', { name: 'Run search' }).click(),
          await result.getByText('completed').waitFor(),
          await matched.textContent()
        ),
        { timeout: 20_000, interval: 1_000 },
      )
      .toBe('2');
    const rows = result.getByRole('table', { name: 'Matching events' });
    await rows.getByRole('row').filter({ hasText: 'alice' }).waitFor();
    expect(await rows.getByRole('row').filter({ hasText: 'carol' }).count()).toBe(0);
    expect(await result.getByRole('definition').nth(2).textContent()).toBe('2 of at most 100');
    expect(await result.getByRole('definition').nth(3).textContent()).toMatch(/^\d[\d,]* ms$/);
    const byUser = result.getByRole('region', { name: 'Count by user.name' });
    expect(await byUser.getByRole('row').filter({ hasText: 'bob' }).getByRole('cell').nth(1).textContent()).toBe('1');
    await accessible(admin, 'search');

    const download = page.waitForEvent('download');
    await result.getByRole('link', { name: 'Download CSV' }).click();
    const csv = readFileSync((await (await download).path())!, 'utf8');
    expect(csv).toContain('alice');
    expect(csv).not.toContain('carol');

    await page.getByLabel('Save as').fill('two users');
    await page.getByRole('button', { name: 'Save query' }).click();
    const saved = page.getByRole('table', { name: 'Saved queries' });
    await saved.getByRole('cell', { name: 'two users', exact: true }).waitFor();
    // Another query, then the saved one run from its list.
    await query.fill('class_uid = 3002 and user.name = "carol"');
    await page.getByRole('button', { name: 'Run search' }).click();
    await expect.poll(() => matched.textContent(), { timeout: 15_000 }).toBe('1');
    await saved.getByRole('button', { name: 'Run two users' }).click();
    await expect.poll(() => matched.textContent(), { timeout: 15_000 }).toBe('2');
    // The history, newest first: reopen the carol search's result and load its query back.
    const history = page.getByRole('table', { name: 'Your searches' });
    await expect
      .poll(() => history.getByRole('row').filter({ hasText: 'completed' }).count())
      .toBeGreaterThanOrEqual(3);
    const carol = history.getByRole('row').filter({ hasText: '"carol"' }).first();
    await carol.getByRole('button', { name: /^Open result/ }).click();
    await expect.poll(() => matched.textContent(), { timeout: 15_000 }).toBe('1');
    await rows.getByRole('row').filter({ hasText: 'carol' }).waitFor();
    await query.fill('');
    await carol.getByRole('button', { name: 'Load query' }).click();
    expect(await query.inputValue()).toBe('class_uid = 3002 and user.name = "carol"');
    await accessible(admin, 'search-history');
  });

  it('schedules a saved query: created with a condition and an alert, listed with its next run, its history, deleted', async () => {
    await ready(admin);
    const { page } = admin;
    await nav(page, 'Search');
    await page.getByLabel('Query', { exact: true }).fill('class_uid = 3002 and user.name = "alice"');
    await page.getByLabel('Save as').fill('alice signs in');
    await page.getByRole('button', { name: 'Save query' }).click();
    await page
      .getByRole('table', { name: 'Saved queries' })
      .getByRole('cell', { name: 'alice signs in', exact: true })
      .waitFor();

    await page.getByRole('button', { name: 'New schedule' }).click();
    const dialog = page.getByRole('dialog', { name: 'New schedule' });
    await dialog.getByLabel('Name', { exact: true }).fill('alice every morning');
    await dialog.getByLabel('Saved query').selectOption({ label: 'alice signs in' });
    // A cron expression the API refuses: its detail is shown in the dialog.
    await dialog.getByLabel('Cron expression').fill('61 * * * *');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('body/cron is not usable');
    await dialog.getByLabel('Cron expression').fill('0 8 * * *');
    await dialog.getByLabel('Time zone').fill('Europe/Paris');
    await dialog.getByLabel('When matching events number').selectOption({ label: 'more than' });
    await dialog.getByLabel('Events', { exact: true }).fill('0');
    await dialog.getByLabel('Raise a detection when it holds').check();
    await dialog.getByLabel('Severity').selectOption({ label: 'High' });
    await dialog.getByLabel('MITRE tactics').fill('TA0006');
    await accessible(admin, 'search-schedule-new');
    await dialog.getByRole('button', { name: 'Create schedule' }).click();

    const row = page
      .getByRole('table', { name: 'Schedules' })
      .getByRole('row')
      .filter({ hasText: 'alice every morning' });
    await row.waitFor();
    const cells = row.getByRole('cell');
    await expect.poll(() => cells.nth(1).textContent()).toBe('alice signs in');
    expect(await cells.nth(2).textContent()).toBe('cron 0 8 * * * (Europe/Paris)');
    const next = new Date((await cells.nth(3).locator('time').getAttribute('datetime')) ?? '');
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(
      new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' }).format(next),
    ).toBe('08:00');
    await expect.poll(() => cells.nth(4).textContent()).toBe('never run');
    await accessible(admin, 'search-schedules');

    await row.getByRole('button', { name: 'History of alice every morning' }).click();
    const runs = page.getByRole('dialog', { name: 'Runs of alice every morning' });
    await runs.getByText('No run yet.').waitFor();
    await accessible(admin, 'search-schedule-history');
    await runs.getByRole('button', { name: 'Close' }).click();

    page.once('dialog', (d) => void d.accept());
    await row.getByRole('button', { name: 'Delete alice every morning' }).click();
    await expect.poll(() => row.count()).toBe(0);
  });

  it('raises a detection from a new rule, triages it and keeps the history; rule versions roll back', async () => {
    const { page } = admin;
    await nav(page, 'Detection rules');
    await page.getByRole('button', { name: 'New rule' }).click();
    const form = page.getByRole('dialog', { name: 'New detection rule' });
    await form.getByLabel('Name').fill('eve signs in');
    const condition = form.getByLabel('Condition');
    await condition.fill('{"field": "user.nam", "op": "eq", "value": "eve"}');
    await expect
      .poll(() => form.getByTestId('condition-check').textContent(), { timeout: 10_000 })
      .toContain('user.nam');
    expect(await form.getByTestId('condition-check').textContent()).not.toBe('Condition accepted.');
    await condition.fill(
      '{"all": [{"field": "class_uid", "op": "eq", "value": 3002}, {"field": "user.name", "op": "eq", "value": "eve"}]}',
    );
    await expect
      .poll(() => form.getByTestId('condition-check').textContent(), { timeout: 10_000 })
      .toBe('Condition accepted.');
    await form.getByLabel('Severity').selectOption({ label: 'High' });
    await form.getByLabel('MITRE tactics').fill('TA0006');
    await form.getByLabel('MITRE techniques').fill('T1110');
    await accessible(admin, 'detection-rule-new');
    await form.getByRole('button', { name: 'Create rule' }).click();
    const rules = page.getByRole('table', { name: 'Detection rules' });
    await rules.getByRole('cell', { name: 'eve signs in', exact: true }).waitFor();
    await accessible(admin, 'detection-rules');

    // The rule is live within WEIR_MAPPING_REFRESH_MS (100 ms here).
    await new Promise((r) => setTimeout(r, 1_000));
    await push('app', [{ user: 'eve', action: 'login', ts: new Date().toISOString() }]);
    await nav(page, 'Detections');
    const detection = page.getByRole('link', { name: 'eve signs in' });
    await expect
      .poll(async () => (await page.reload(), await heading(page, 'Detections'), await detection.count()), {
        timeout: 20_000,
        interval: 1_000,
      })
      .toBe(1);
    await accessible(admin, 'detections');
    await detection.click();
    await heading(page, 'eve signs in');
    ids.detection = page.url().split('/').pop();
    expect(await page.getByRole('list', { name: 'Evidence events' }).getByRole('listitem').count()).toBe(1);
    await page.getByRole('region', { name: 'MITRE ATT&CK' }).getByText('TA0006').waitFor();

    await page.getByLabel('Status').selectOption('in_progress');
    await page.getByLabel('Comment').fill('looking into it');
    await page.getByRole('button', { name: 'Save triage' }).click();
    await page.getByText('Saved.').waitFor();
    const history = page.getByRole('table', { name: 'Detection history' });
    await history.getByRole('row').filter({ hasText: 'new → in progress' }).waitFor();
    await history.getByRole('row').filter({ hasText: 'looking into it' }).waitFor();
    await accessible(admin, 'detection-detail');

    // The evidence opens in Search with the event's id as the query.
    await page.getByRole('list', { name: 'Evidence events' }).getByRole('link').click();
    await heading(page, 'Search');
    expect(await page.getByLabel('Query', { exact: true }).inputValue()).toMatch(/^envelope\.id = "[^"]+"$/);

    await nav(page, 'Detections');
    await page.getByLabel('Status').selectOption('resolved');
    await page.getByText('No detection matches these filters.').waitFor();
    await page.getByLabel('Status').selectOption('in_progress');
    await page.getByRole('link', { name: 'eve signs in' }).waitFor();

    await nav(page, 'Detection rules');
    await rules.getByRole('button', { name: 'Edit eve signs in' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit eve signs in' });
    await edit.getByLabel('Severity').selectOption({ label: 'Critical' });
    await edit.getByLabel('Comment (kept with the version)').fill('critical');
    await edit.getByRole('button', { name: 'Save rule' }).click();
    await rules.getByRole('row').filter({ hasText: 'v2' }).filter({ hasText: 'critical' }).waitFor();
    await rules.getByRole('button', { name: 'Versions of eve signs in' }).click();
    const versions = page.getByRole('dialog', { name: 'Versions of eve signs in' });
    await versions.getByRole('table', { name: 'Rule versions' }).getByRole('row').nth(2).waitFor();
    page.once('dialog', (d) => void d.accept());
    await versions.getByRole('button', { name: 'Roll back to v1' }).click();
    await versions.getByText('Rolled back: v3 is live.').waitFor();
    await accessible(admin, 'detection-rule-versions');
    await versions.getByRole('button', { name: 'Close' }).click();
    await rules.getByRole('row').filter({ hasText: 'v3' }).filter({ hasText: 'high' }).waitFor();
  });

  it("runs a mapping draft's test cases without publishing: pass or fail per case, with the diff", async () => {
    const { page } = admin;
    await page.goto(`${weir.url}/mappings/${ids.mapping}`);
    await heading(page, 'Mapping: custom / app');
    const tests = [
      {
        name: 'alice signs in',
        input: { user: 'alice', action: 'login', ts: '2026-11-26T10:00:00Z' },
        expect: { class_uid: 3002, 'user.name': 'alice', 'service.name': 'app' },
      },
      {
        name: 'a wrong name',
        input: { user: 'bob', action: 'login', ts: '2026-11-26T10:01:00Z' },
        expect: { 'user.name': 'robert' },
      },
    ];
    await page.getByLabel('Mapping document (JSON)').fill(JSON.stringify({ ...FIXED, tests }, null, 2));
    await page.getByRole('button', { name: 'Run test cases' }).click();
    const outcome = page.getByTestId('test-cases');
    await expect
      .poll(() => outcome.getByRole('status').textContent(), { timeout: 10_000 })
      .toBe('1 of 2 test cases pass, 1 fail.');
    const why = page.getByRole('list', { name: 'Why "a wrong name" fails' });
    expect(await why.textContent()).toBe('user.name − expected "robert" + got "bob"');
    expect(await page.getByRole('list', { name: 'Why "alice signs in" fails' }).count()).toBe(0);
    await accessible(admin, 'mapping-test-cases');
    // Nothing was published.
    expect(await page.getByRole('table', { name: 'Mapping versions' }).getByRole('row').count()).toBe(2);
  });

  it('offers a viewer no write action', async () => {
    const { page } = admin;
    await nav(page, 'Users');
    await page.getByRole('button', { name: 'New user' }).click();
    const dialog = page.getByRole('dialog', { name: 'New user' });
    await dialog.getByLabel('Username').fill(VIEWER.username);
    await dialog.getByLabel('E-mail').fill(VIEWER.email);
    await dialog.getByLabel('Password').fill(VIEWER.password);
    await dialog.getByLabel('Role').selectOption('viewer');
    await dialog.getByLabel('Organization').selectOption({ label: 'Acme' });
    await dialog.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('cell', { name: VIEWER.username, exact: true }).waitFor();
    await accessible(admin, 'users');

    const viewer = await openPage(browser, { colorScheme: 'dark' });
    const v = viewer.page;
    await signIn(v, VIEWER);
    const navigation = v.getByRole('navigation', { name: 'Console' });
    for (const hidden of [
      'Quarantine',
      'Enrichment',
      'Users',
      'Service accounts',
      'Audit trail',
      'Identity',
      'E-mail',
      'Configuration',
    ]) {
      expect(await navigation.getByRole('link', { name: hidden, exact: true }).count(), hidden).toBe(0);
    }
    const writes =
      /^(New integration|New ingestion token|Test connection|Test|Reset cursor|Start backfill|Publish|Roll back.*|Edit|New route|Move .*|Try the saved routes|New destination|Rotate credential|Revoke credential|Reprocess.*|Watch for 60 s|Mark mapped.*|Ignore.*|Create organization|Deactivate.*|Activate|New rule|Save triage|Save query|Replay|New schedule|Delete)$/;
    const screens: [string, string | RegExp, string][] = [
      ['Dashboard', 'Dashboard', ''],
      ['Data flow', 'Data flow', ''],
      ['Integrations', 'Integrations', `/integrations/${ids.integration}`],
      ['Drift', 'Drift', ''],
      ['Mappings', 'Mappings', `/mappings/${ids.mapping}`],
      ['Routes', 'Routes', ''],
      ['Destinations', 'Destinations', `/destinations/${ids.destination}`],
      ['Organizations', 'Organizations', ''],
      ['Search', 'Search', ''],
      ['Detections', 'Detections', `/detections/${ids.detection}`],
      ['Detection rules', 'Detection rules', ''],
    ];
    for (const [link, title, detail] of screens) {
      await nav(v, link, title);
      for (const where of detail ? ['', detail] : ['']) {
        if (where) {
          await v.goto(`${weir.url}${where}`);
          await v.getByRole('heading', { level: 1 }).waitFor();
          await v.waitForLoadState('networkidle');
        }
        const names = await v.getByRole('button').allInnerTexts();
        expect(
          names.filter((n) => writes.test(n.trim())),
          `write actions offered to a viewer on ${link} ${where}`,
        ).toEqual([]);
      }
    }
    await v.goto(`${weir.url}/mappings/${ids.mapping}`);
    expect(await v.getByLabel('Mapping document (JSON)').getAttribute('readonly')).toBe('');
    await accessible(viewer, 'viewer-mapping-dark');
    await v.goto(`${weir.url}/`);
    await heading(v, 'Dashboard');
    await accessible(viewer, 'viewer-dashboard-dark');
    await v.context().close();
  });

  it('passes axe on every other screen', async () => {
    const { page } = admin;
    for (const [link, title, name] of [
      ['Drift', 'Drift', 'drift'],
      ['Mappings', 'Mappings', 'mappings'],
      ['Enrichment', 'Enrichment', 'enrichment'],
      ['Integrations', 'Integrations', 'integrations'],
      ['Destinations', 'Destinations', 'destinations'],
      ['Organizations', 'Organizations', 'organizations'],
      ['Service accounts', 'Service accounts', 'service-accounts'],
      ['Audit trail', 'Audit trail', 'audit-trail'],
      ['License', 'License', 'license'],
      ['Identity', 'Identity (single sign-on)', 'identity'],
      ['E-mail', 'E-mail', 'email'],
      ['Configuration', 'Configuration export and import', 'configuration'],
    ] as const) {
      await nav(page, link, title);
      await page.waitForLoadState('networkidle');
      await accessible(admin, name);
    }
    for (const tab of ['Sources', 'Policies']) {
      await nav(page, 'Enrichment');
      await page.getByRole('tab', { name: tab }).click();
      await page.waitForLoadState('networkidle');
      await accessible(admin, `enrichment-${tab.toLowerCase()}`);
    }
    // The check is not vacuous: an unlabelled field is reported.
    await page.evaluate(`document.querySelector('main').insertAdjacentHTML('beforeend', '<input id="unlabelled">')`);
    expect((await axe(page)).join()).toMatch(/^label: /);
    await page.evaluate(`document.getElementById('unlabelled').remove()`);
  });

  it('offers single sign-on on the sign-in screen once identity is configured', async () => {
    const { page } = admin;
    await nav(page, 'Identity', 'Identity (single sign-on)');
    const form = page.getByRole('form', { name: 'Identity provider' });
    await form.getByLabel('Single sign-on enabled').check();
    await form.getByLabel('Issuer URL').fill('https://idp.example.com');
    await form.getByLabel('Client id').fill('weir-console');
    await form.getByLabel('Client secret').fill('a client secret');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    expect(await page.getByLabel('Stored configuration (secrets as set or not)').textContent()).not.toContain(
      'a client secret',
    );

    const visitor = await openPage(browser);
    await visitor.page.goto(`${weir.url}/routes`);
    const sso = visitor.page.getByRole('link', { name: 'Sign in with single sign-on' });
    await sso.waitFor();
    expect(await sso.getAttribute('href')).toBe('/api/auth/sso/login?return_to=%2Froutes');
    await accessible(visitor, 'sign-in-with-sso');
    await visitor.page.context().close();
  });
});
