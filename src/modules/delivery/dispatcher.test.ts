// The dispatcher as the container wires it: a destination made through the API (real
// directory, real http sink), a route, pending batches, the role loop started and stopped.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { addRoute, routedBatch, until } from '../../../test/support/delivery-engine.js';
import { createOrganization, createPrincipal } from '../../../test/support/identity.js';
import { createIntegration } from '../../../test/support/normalization.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import { ledgerRows } from '../../../test/support/ledger.js';

let t: TestApp;
let receiver: WebhookReceiver;
const fileRoot = mkdtempSync(path.join(tmpdir(), 'weir-dispatcher-files-'));

beforeAll(async () => {
  t = await createTestApp({
    env: { WEIR_DISPATCH_POLL_MS: '20', WEIR_TOKEN_RATE_LIMIT: '100000', WEIR_FILE_SINK_ROOT: fileRoot },
  });
  receiver = await startWebhookReceiver({ keyOf: (event) => String((event as { n?: number }).n) });
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
  rmSync(fileRoot, { recursive: true, force: true });
});

describe('dispatcher role loop', () => {
  it('routes and delivers to an API-made http destination, then stops cleanly', async () => {
    const org = await createOrganization(t, 'dispatcher');
    const integration = await createIntegration(t, org);
    const admin = await createPrincipal(t, { role: 'admin', organizationId: org });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/collectors/destinations',
      headers: admin.headers,
      payload: {
        name: 'webhook',
        type: 'http',
        organization_id: org,
        config: { url: receiver.url },
        delivery: { max_wait_ms: 0 },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const destinationId = res.json<{ id: string }>().id;
    await addRoute(t, org, {
      destinations: [destinationId],
      condition: { field: 'class_uid', op: 'in', value: [1, 2] },
    });

    const loops = t.container.loops.filter((l) => l.role === 'dispatcher');
    expect(loops.map((l) => l.name)).toEqual(['delivery']);
    const running = loops.map((l) => l.start());
    try {
      await routedBatch(
        t,
        t.container.delivery,
        org,
        integration,
        Array.from({ length: 30 }, (_, n) => ({ class_uid: (n % 3) + 1, n })),
      );
      await receiver.waitForUnique(20, 10_000);
      const balance = await until(async () => {
        const [b] = await ledgerRows(t, { organization_id: org });
        return b && b.pending === 0 ? b : undefined;
      });
      expect(balance).toMatchObject({
        events_in: 30,
        routed: 20,
        delivered: 20,
        filtered: 10,
        pending: 0,
        unaccounted: 0,
      });
      expect(receiver.stats().duplicates).toBe(0);
    } finally {
      await Promise.all(running.map((r) => r.stop()));
    }
    const state = await t.container.database.db
      .selectFrom('destination_state')
      .selectAll()
      .where('destination_id', '=', destinationId)
      .executeTakeFirstOrThrow();
    expect(state).toMatchObject({ breaker_state: 'closed', last_error: null });
  });

  it("writes a file destination into its organization's directory, finishes a killed writer's leftover at start and a quiet file after the idle period", async () => {
    const org = await createOrganization(t, 'files');
    const integration = await createIntegration(t, org);
    const admin = await createPrincipal(t, { role: 'admin', organizationId: org });
    const dir = path.join(fileRoot, `org-${org}`, 'out');
    mkdirSync(dir, { recursive: true });
    // What a dispatcher killed two minutes ago left: acknowledged lines, then a torn one.
    const leftover = path.join(dir, 'files-99-abcdef.ndjson.current');
    writeFileSync(leftover, '{"n":-2}\n{"n":-1}\n{"n":-');
    const old = (Date.now() - 120_000) / 1000;
    utimesSync(leftover, old, old);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/collectors/destinations',
      headers: admin.headers,
      payload: {
        name: 'files',
        type: 'file',
        organization_id: org,
        config: { path: 'out', prefix: 'files', idle_seconds: 1, fsync: false },
        delivery: { max_wait_ms: 0 },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    await addRoute(t, org, { destinations: [res.json<{ id: string }>().id] });

    const running = t.container.loops.filter((l) => l.role === 'dispatcher').map((l) => l.start());
    try {
      await routedBatch(
        t,
        t.container.delivery,
        org,
        integration,
        Array.from({ length: 25 }, (_, n) => ({ class_uid: 1, n })),
      );
      const finished = await until(
        (): { names: string[]; lines: string[] } | undefined => {
          const names = readdirSync(dir);
          const lines = names
            .filter((n) => n.endsWith('.ndjson'))
            .flatMap((n) => readFileSync(path.join(dir, n), 'utf8').trimEnd().split('\n'));
          return !names.some((n) => n.includes('.ndjson.current')) && lines.length === 27
            ? { names, lines }
            : undefined;
        },
        10_000,
        'the files to be finished',
      );
      expect(finished!.names.filter((n) => n.endsWith('-recovered.ndjson'))).toEqual([
        expect.stringMatching(/^files-\d{8}T\d{6}\.\d{3}Z-99-abcdef-recovered\.ndjson$/),
      ]);
      const ns = finished!.lines.map((l) => (JSON.parse(l) as { n: number }).n).sort((a, b) => a - b);
      expect(ns).toEqual([-2, -1, ...Array.from({ length: 25 }, (_, n) => n)]);
    } finally {
      await Promise.all(running.map((r) => r.stop()));
    }
  });

  it('shows a destination healthy again once it delivers after failing; the old error stays as history', async () => {
    const org = await createOrganization(t, 'recovery');
    const integration = await createIntegration(t, org);
    const admin = await createPrincipal(t, { role: 'admin', organizationId: org });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/collectors/destinations',
      headers: admin.headers,
      // Fast retries and a breaker that stays closed: the failure and the recovery come from the receiver alone.
      payload: {
        name: 'flaky',
        type: 'http',
        organization_id: org,
        config: { url: receiver.url },
        delivery: { max_wait_ms: 0, backoff_base_ms: 50, backoff_max_ms: 200, breaker_threshold: 1000 },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const destinationId = created.json<{ id: string }>().id;
    await addRoute(t, org, { destinations: [destinationId] });
    const health = async () =>
      (
        await t.app.inject({
          method: 'GET',
          url: `/api/collectors/destinations/${destinationId}/health`,
          headers: admin.headers,
        })
      ).json<Record<string, unknown>>();

    const running = t.container.loops.filter((l) => l.role === 'dispatcher').map((l) => l.start());
    try {
      receiver.setFaults({ ratio: 1, modes: ['5xx'] });
      await routedBatch(t, t.container.delivery, org, integration, [{ class_uid: 1, n: 1001 }]);
      const failing = await until(async () => {
        const h = await health();
        return h.current_error ? h : undefined;
      }, 10_000);
      expect(failing).toMatchObject({ status: 'degraded', current_error: expect.stringMatching(/HTTP 50[03]/) });

      receiver.setFaults(null);
      await receiver.waitForUnique(1, 10_000).catch(() => undefined);
      const recovered = await until(async () => {
        const h = await health();
        return h.status === 'healthy' ? h : undefined;
      }, 10_000);
      expect(recovered).toMatchObject({
        current_error: null,
        last_error: expect.stringMatching(/HTTP 50[03]/),
        last_error_at: expect.stringMatching(/Z$/),
      });
      expect(Date.parse(String(recovered!.last_success_at))).toBeGreaterThanOrEqual(
        Date.parse(String(recovered!.last_error_at)),
      );
    } finally {
      receiver.setFaults(null);
      await Promise.all(running.map((r) => r.stop()));
    }
  });

  it('delivers to a destination made while it runs at once: a write in this process refreshes its lanes (embedded, the periodic refresh is 30 s)', async () => {
    const org = await createOrganization(t, 'dispatcher-new-destination');
    const integration = await createIntegration(t, org);
    const admin = await createPrincipal(t, { role: 'admin', organizationId: org });
    const running = t.container.loops.filter((l) => l.role === 'dispatcher').map((l) => l.start());
    try {
      await new Promise((resolve) => setTimeout(resolve, 300)); // the first refresh is over
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/collectors/destinations',
        headers: admin.headers,
        payload: {
          name: 'late-webhook',
          type: 'http',
          organization_id: org,
          config: { url: receiver.url },
          delivery: { max_wait_ms: 0 },
        },
      });
      expect(res.statusCode, res.body).toBe(201);
      await addRoute(t, org, { destinations: [res.json<{ id: string }>().id] });
      await routedBatch(t, t.container.delivery, org, integration, [
        { class_uid: 1, n: 5001 },
        { class_uid: 1, n: 5002 },
      ]);
      const started = Date.now();
      await until(async () => {
        const [b] = await ledgerRows(t, { organization_id: org });
        return b && b.delivered === 2 ? b : undefined;
      }, 10_000);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await Promise.all(running.map((r) => r.stop()));
    }
  });
});
