// The body log on the whole embedded path: events pushed over HTTP are queued and routed with
// their bodies in the data directory's segment files (the rows keep references), reach a file
// destination exactly, and once delivered the space is given back: the segments are deleted.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, startWorkerConsumers } from '../../../test/support/app.js';
import { usingPostgres } from '../../../test/support/db.js';
import { until } from '../../../test/support/delivery-engine.js';
import { createPrincipal, injectAs, type Method, type Principal } from '../../../test/support/identity.js';
import { loginDocument } from '../../../test/support/mappings.js';
import { publishMapping } from '../../../test/support/normalization.js';
import type { Consumer } from '../../platform/queue/port.js';
import { ledgerRows } from '../../../test/support/ledger.js';

let t: TestApp;
let root: string;
let admin: Principal;
let org: number;
let consumers: Consumer[] = [];

const call = (method: string, url: string, who: Principal, payload?: unknown) =>
  injectAs(t, who, method as Method, url, payload);

const segments = async () => (await readdir(t.container.bodies!.dir)).filter((f) => f.endsWith('.log'));

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'weir-bodylog-e2e-'));
  t = await createTestApp({
    env: {
      WEIR_TOKEN_RATE_LIMIT: '1000000',
      WEIR_FILE_SINK_ROOT: root,
      WEIR_DISPATCH_POLL_MS: '50',
      WEIR_MAPPING_REFRESH_MS: '100',
    },
  });
  const platform = await createPrincipal(t, { role: 'admin', organizationId: null });
  org = (await call('POST', '/api/organizations/', platform, { name: 'Body log' })).json<{ id: number }>().id;
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  await rm(root, { recursive: true, force: true });
});

// Embedded only: with DATABASE_URL the bodies stay in PostgreSQL's rows.
describe.skipIf(usingPostgres)('the body log on the embedded path', () => {
  it('carries pushed events to a file destination and gives its space back once they are delivered', async () => {
    const integration = (
      await call('POST', '/api/integrations/', admin, { name: 'auth', platform: 'custom', organization_id: org })
    ).json<{ id: number }>().id;
    await publishMapping(t, org, 'custom', 'auth', loginDocument());
    const destination = await call('POST', '/api/collectors/destinations', admin, {
      name: 'files',
      type: 'file',
      organization_id: org,
      config: { path: 'out', idle_seconds: 1 },
    });
    expect(destination.statusCode, destination.body).toBe(201);
    const route = await call('POST', '/api/collectors/routes', admin, {
      name: 'all',
      organization_id: org,
      destination_ids: [destination.json<{ id: string }>().id],
    });
    expect(route.statusCode, route.body).toBe(201);
    const token = (await call('POST', `/api/ingest/integrations/${integration}/token`, admin, {})).json<{
      token: string;
    }>().token;
    await new Promise((r) => setTimeout(r, 300));

    // Two batches large enough to be compressed: their queue payloads go to the log.
    const names: string[] = [];
    for (let b = 0; b < 2; b++) {
      const lines = Array.from({ length: 400 }, (_, i) => {
        const name = `user-${b}-${i}`;
        names.push(name);
        return JSON.stringify({
          type: 'login',
          ts: new Date().toISOString(),
          user: { name },
          client: { ip: '10.0.0.1' },
          host: 'h'.repeat(40),
        });
      });
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/ingest/auth',
        headers: { authorization: `Bearer ${token}` },
        payload: lines.join('\n'),
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    // Accepted and not yet normalized: the jobs' payloads are in the log, not in the rows.
    expect(await segments()).not.toEqual([]);
    const jobs = await t.container.database.db
      .selectFrom('jobs')
      .select('payload_gz')
      .where('state', '=', 'waiting')
      .execute();
    expect(jobs.filter((j) => j.payload_gz?.startsWith('log:'))).toHaveLength(2);

    consumers = startWorkerConsumers(t);
    const loop = t.container.loops.find((l) => l.name === 'delivery')!.start();
    let delivered: string[] = [];
    try {
      delivered = (await until(
        async () => {
          const dir = path.join(root, `org-${org}`, 'out');
          const files = (await readdir(dir).catch(() => [])).filter((f) => f.endsWith('.ndjson'));
          const lines = (await Promise.all(files.map((f) => readFile(path.join(dir, f), 'utf8'))))
            .join('')
            .split('\n')
            .filter(Boolean);
          return lines.length >= names.length ? lines : null;
        },
        30_000,
        'every event in the files',
      ))!;
    } finally {
      await loop.stop();
    }
    expect(delivered.map((l) => (JSON.parse(l) as { user: { name: string } }).user.name).sort()).toEqual(
      [...names].sort(),
    );
    const [balance] = await ledgerRows(t, { organization_id: org });
    expect(balance).toMatchObject({ pending: 0, unaccounted: 0 });

    // Nothing names the bodies any more: collecting deletes every segment.
    await until(
      async () =>
        (await t.container.database.db.selectFrom('jobs').select('id').where('payload_gz', 'like', 'log:%').execute())
          .length === 0,
      10_000,
      'the last jobs to complete',
    );
    expect(await t.container.bodies!.collect()).toBeGreaterThan(0);
    expect(await segments()).toEqual([]);
    expect(t.container.bodies!.stats()).toMatchObject({ segments: 0, bytes: 0 });
  });
});
