// End-to-end: a burst of failed Okta sign-ins pushed as a vendor would (many batches, some at
// once) fires the brute-force rule exactly once per window and user, on both deployments:
// embedded (`weir all` on PGlite) and distributed (PostgreSQL + Redis, two worker processes
// taking batches at the same time). A SIGKILL in the middle of a window neither loses the
// count so far nor doubles the alert: the window's count is written in the batch's transaction
// (docs/detections.md, Threshold state).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../support/db.js';
import { waitFor } from '../support/delivery-api.js';
import { http, setUpIngestion, storedEvents, type IngestSetup } from '../support/ingest.js';
import { createFleet, weirStarted } from '../support/process.js';
import { deletePrefix, uniquePrefix } from '../support/redis.js';

const distributed = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const fleet = createFleet({
  WEIR_MAPPING_REFRESH_MS: '200',
  WEIR_QUEUE_LEASE_MS: '3000',
  WEIR_DISPATCH_POLL_MS: '100',
});
afterAll(() => fleet.cleanup());

const okta = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../src/connectors/okta/fixtures/system_log.json'), 'utf8'),
) as Record<string, unknown>[];
const failedTemplate = okta.find(
  (e) => e.eventType === 'user.session.start' && (e.outcome as { result: string }).result === 'FAILURE',
)!;
const successTemplate = okta.find(
  (e) => e.eventType === 'user.session.start' && (e.outcome as { result: string }).result === 'SUCCESS',
)!;
const WINDOW_MS = 300_000;
// A complete window a little in the past, so that every event of the burst falls in it.
const WINDOW = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS - 2 * WINDOW_MS;
let seq = 0;

function signIn(user: string, failed: boolean, offsetSeconds: number): Record<string, unknown> {
  const template = failed ? failedTemplate : successTemplate;
  seq += 1;
  return {
    ...template,
    uuid: `0b5e${String(seq).padStart(4, '0')}-0000-4000-8000-${String(Date.now() % 1e12).padStart(12, '0')}`,
    published: new Date(WINDOW + offsetSeconds * 1000).toISOString(),
    actor: { ...(template.actor as object), alternateId: `${user}@example.com`, displayName: user },
  };
}

async function push(url: string, setup: IngestSetup, events: Record<string, unknown>[]): Promise<void> {
  const res = await fetch(`${url}/api/ingest/system_log`, {
    method: 'POST',
    headers: { authorization: `Bearer ${setup.integrations[0]!.token}` },
    body: events.map((e) => JSON.stringify(e)).join('\n'),
  });
  expect(res.status, await res.text()).toBe(200);
}

async function createBruteForceRule(url: string, setup: IngestSetup): Promise<string> {
  const res = await http(
    url,
    'POST',
    '/api/detections/rules',
    {
      organization_id: setup.organizationId,
      name: 'Okta brute force',
      definition: {
        condition: {
          all: [
            { field: 'class_uid', op: 'eq', value: 3002 },
            { field: 'status_id', op: 'eq', value: 2 },
          ],
        },
        group_by: ['actor.user.name'],
        threshold: { count: 10, window_seconds: WINDOW_MS / 1000 },
        severity_id: 4,
        mitre: { tactics: ['TA0006'], techniques: ['T1110'] },
      },
    },
    { cookie: setup.cookie },
  );
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  // Workers pick up a new rule at their next refresh.
  await new Promise((r) => setTimeout(r, 1500));
  return String(res.json.id);
}

/**
 * Waits until the organization's store holds `count` events: their pass (and the rule's state)
 * has committed. The store also keeps the Detection Findings (routed like any event).
 */
async function settled(url: string, setup: IngestSetup, count: number): Promise<void> {
  await waitFor(
    `${count} events stored`,
    async () => ((await storedEvents(url, setup.cookie, setup.organizationId)).events >= count ? true : undefined),
    120_000,
    200,
  );
}

async function detections(url: string, setup: IngestSetup, ruleId: string): Promise<Record<string, unknown>[]> {
  const res = await http(
    url,
    'GET',
    `/api/detections?organization_id=${setup.organizationId}&rule_id=${ruleId}&limit=100`,
    undefined,
    { cookie: setup.cookie },
  );
  expect(res.status).toBe(200);
  return res.json.items as Record<string, unknown>[];
}

/** The burst: alice fails 25 times (in 8 batches, four pushed at once), bob 9 times, carol succeeds. */
async function burst(url: string, setup: IngestSetup): Promise<number> {
  const batches: Record<string, unknown>[][] = [];
  for (let b = 0; b < 8; b++) {
    const batch = [signIn('carol', false, b * 10)];
    for (let i = 0; i < 3; i++) batch.push(signIn('alice', true, b * 10 + i));
    batch.push(signIn('bob', true, b * 10 + 5));
    batches.push(batch);
  }
  batches[7]!.push(signIn('alice', true, 100));
  batches[0]!.push(signIn('bob', true, 120));
  // bob: 8 + 1 = 9 failures, one short of the threshold.
  await Promise.all(batches.slice(0, 4).map((b) => push(url, setup, b)));
  await Promise.all(batches.slice(4).map((b) => push(url, setup, b)));
  return batches.reduce((n, b) => n + b.length, 0);
}

function expectOneAlertFor(found: Record<string, unknown>[], user: string): void {
  // A threshold detection's uid is its rule, group key and window.
  const mine = found.filter((d) => String(d.uid).includes(`["${user}@example.com"]:${new Date(WINDOW).toISOString()}`));
  expect(mine, `${user}: ${JSON.stringify(found.map((d) => d.title))}`).toHaveLength(1);
  // Counted when it fired: the batch that crosses the threshold counts whole.
  expect(mine[0]).toMatchObject({ source: 'rule', severity_id: 4, event_count: expect.any(Number) });
  expect(mine[0]!.event_count).toBeGreaterThanOrEqual(10);
  expect((mine[0]!.event_ids as string[]).length).toBeGreaterThanOrEqual(10);
}

/** Six failures of dave, a SIGKILL of `victim` once they are committed, then six more after the restart. */
async function restartMidWindow(
  url: () => string,
  setup: IngestSetup,
  stored: number,
  kill: () => Promise<void>,
): Promise<number> {
  const first = Array.from({ length: 6 }, (_, i) => signIn('dave', true, 200 + i));
  await push(url(), setup, first);
  await settled(url(), setup, stored + 6);
  // dave has six failures in the window: no alert yet.
  expect(await storedEvents(url(), setup.cookie, setup.organizationId)).toEqual({ events: stored + 6, repeated: 0 });
  await kill();
  const second = Array.from({ length: 6 }, (_, i) => signIn('dave', true, 220 + i));
  await push(url(), setup, second);
  // Twelve events and the one finding.
  await settled(url(), setup, stored + 13);
  return stored + 13;
}

describe('the brute-force rule over a burst of failed Okta sign-ins', () => {
  it.skipIf(distributed)(
    'embedded: fires once per window and user, and a SIGKILL mid-window neither loses nor doubles it',
    async () => {
      const dataDir = fleet.keepDir(mkdtempSync(path.join(tmpdir(), 'weir-detect-')));
      const env = { WEIR_DATA_DIR: dataDir };
      let api = await fleet.startApi('all', env);
      const setup = await setUpIngestion(api.url, ['okta']);
      const ruleId = await createBruteForceRule(api.url, setup);
      // The burst's events and alice's one finding.
      let stored = (await burst(api.url, setup)) + 1;
      await settled(api.url, setup, stored);
      let found = await detections(api.url, setup, ruleId);
      expect(found).toHaveLength(1);
      expectOneAlertFor(found, 'alice');

      stored = await restartMidWindow(
        () => api.url,
        setup,
        stored,
        async () => {
          api.p.kill('SIGKILL');
          await api.p.exited;
          api = await fleet.startApi('all', env);
        },
      );
      found = await detections(api.url, setup, ruleId);
      expect(found).toHaveLength(2);
      expectOneAlertFor(found, 'dave');
      expect(await storedEvents(api.url, setup.cookie, setup.organizationId)).toEqual({ events: stored, repeated: 0 });
      api.p.kill('SIGTERM');
      expect(await api.p.exited).toBe(0);
    },
    300_000,
  );

  it.runIf(distributed)(
    'distributed: two workers fire it once per window and user; a worker SIGKILLed mid-window changes nothing',
    async () => {
      const db = await freshPostgresDatabase();
      const prefix = uniquePrefix();
      try {
        const env = {
          DATABASE_URL: db.url,
          REDIS_URL: process.env.REDIS_URL,
          WEIR_REDIS_PREFIX: prefix,
          WEIR_SECRET_KEY: 'ef'.repeat(32),
        };
        const api = await fleet.startApi('api', env);
        const workers = [fleet.start('worker', env), fleet.start('worker', env)];
        await Promise.all(workers.map((w) => w.waitFor(weirStarted, 90_000)));
        const setup = await setUpIngestion(api.url, ['okta']);
        const ruleId = await createBruteForceRule(api.url, setup);
        let stored = (await burst(api.url, setup)) + 1;
        await settled(api.url, setup, stored);
        let found = await detections(api.url, setup, ruleId);
        expect(found).toHaveLength(1);
        expectOneAlertFor(found, 'alice');

        stored = await restartMidWindow(
          () => api.url,
          setup,
          stored,
          async () => {
            workers[0]!.kill('SIGKILL');
            await workers[0]!.exited;
            workers[0] = fleet.start('worker', env);
            await workers[0].waitFor(weirStarted, 90_000);
          },
        );
        found = await detections(api.url, setup, ruleId);
        expect(found).toHaveLength(2);
        expectOneAlertFor(found, 'dave');
        expect(await storedEvents(api.url, setup.cookie, setup.organizationId)).toEqual({
          events: stored,
          repeated: 0,
        });
        for (const p of [api.p, ...workers]) p.kill('SIGTERM');
        await Promise.all([api.p.exited, ...workers.map((w) => w.exited)]);
      } finally {
        await deletePrefix(prefix);
        await db.drop();
      }
    },
    300_000,
  );
});
