// Backlog budgets through the API (docs/delivery.md, Backlog budgets): a destination that is
// down fills its backlog; over the budget, `block` refuses new pushes of the integrations whose
// events wait for it (503 naming it, with Retry-After) while another integration goes on, and
// `drop_newest` keeps accepting and counts its copies as dropped in the ledger. Once the
// destination answers again, every acknowledged event is delivered and the ledger balances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, startWorkerConsumers } from '../../../test/support/app.js';
import { createDestination, createRoute, seqOf, waitFor } from '../../../test/support/delivery-api.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { http, oktaIntegration, pushOkta } from '../../../test/support/ingest.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import type { Consumer } from '../../platform/queue/port.js';

type Json = Record<string, unknown>;
const DOWN = { ratio: 1, modes: ['5xx' as const] };
// Retries come fast, and a request that failed does not open the breaker for long.
const FAST = { max_wait_ms: 20, backoff_base_ms: 50, backoff_max_ms: 200, breaker_threshold: 1000, max_attempts: 100 };

let t: TestApp;
let base: string;
let admin: Principal;
let orgId: number;
let receiver: WebhookReceiver;
const consumers: Consumer[] = [];
const loops: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  t = await createTestApp({
    env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_DISPATCH_POLL_MS: '20', WEIR_INGEST_BATCH_MAX_EVENTS: '100' },
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  orgId = await createOrganization(t, 'Backlog Org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: orgId });
  receiver = await startWebhookReceiver({ keyOf: (event) => seqOf(event), faults: DOWN });
  consumers.push(...startWorkerConsumers(t));
  loops.push(...t.container.loops.map((l) => l.start()));
});

afterAll(async () => {
  await Promise.all(loops.map((l) => l.stop()));
  await Promise.all(consumers.map((c) => c.close()));
  await receiver?.close();
  await t?.close();
});

const integrationWithToken = (name: string) => oktaIntegration(base, admin.headers, orgId, name);
const push = (token: string, tag: string, events: number) => pushOkta(base, token, tag, events);

async function health(destinationId: string): Promise<Json & { backlog: Json; ledger: Json[] }> {
  const res = await http(base, 'GET', `/api/collectors/destinations/${destinationId}/health`, undefined, admin.headers);
  expect(res.status).toBe(200);
  return res.json as never;
}

async function totals(): Promise<Json> {
  const res = await http(base, 'GET', '/api/collectors/destinations/health', undefined, admin.headers);
  return (res.json.ledger as { totals: Json }).totals;
}

/** An integration routed (by a condition on its id) to one destination. */
async function pipe(
  name: string,
  delivery: Json,
): Promise<{ token: string; integrationId: number; destinationId: string }> {
  const { id, token } = await integrationWithToken(name);
  const destinationId = await createDestination(base, admin.headers, {
    name,
    type: 'http',
    organization_id: orgId,
    config: { url: receiver.url },
    delivery: { ...FAST, ...delivery },
  });
  await createRoute(base, admin.headers, {
    name,
    organization_id: orgId,
    destination_ids: [destinationId],
    condition: { field: 'envelope.integration_id', op: 'eq', value: id },
    final: false,
  });
  return { token, integrationId: id, destinationId };
}

describe('backlog budgets', () => {
  it('block: over the budget, pushes of the integration that feeds the destination get 503 naming it; others go on; after recovery all is delivered', async () => {
    const blocked = await pipe('blocked', { backlog_max_events: 100 });
    const other = await pipe('other', { backlog_max_events: 100_000 });
    expect((await push(blocked.token, 'b1', 150)).status).toBe(200);
    const full = await waitFor(
      'the backlog over its budget',
      async () => {
        const h = await health(blocked.destinationId);
        return h.backlog.events === 150 ? h : undefined;
      },
      30_000,
    );
    expect(full.backlog).toMatchObject({ events: 150, max_events: 100, when_full: 'block', state: 'blocking' });

    let attempt = 0;
    const refused = await waitFor(
      'a refused push',
      async () => {
        const r = await push(blocked.token, `b2.${attempt++}`, 10);
        return r.status === 503 ? r : undefined;
      },
      10_000,
    );
    expect(refused.retryAfter).toBe('5');
    expect(refused.body).toMatchObject({
      error: {
        code: 'delivery.backlog_full',
        details: { destination_id: blocked.destinationId, destination_name: 'blocked', max_events: 100 },
      },
    });
    expect(String(refused.body.detail)).toMatch(/Destination "blocked" .* backlog budget/);
    // An integration whose events do not wait for it is not held back.
    expect((await push(other.token, 'o1', 20)).status).toBe(200);

    receiver.setFaults(null);
    await waitFor(
      'the backlog drained',
      async () => ((await health(blocked.destinationId)).backlog.state === 'ok' ? true : undefined),
      30_000,
    );
    const again = await waitFor(
      'a push accepted again',
      async () => {
        const r = await push(blocked.token, `b3.${attempt++}`, 10);
        return r.status === 200 ? r : undefined;
      },
      10_000,
    );
    expect(again.body).toMatchObject({ accepted: 10 });
    const settled = await waitFor(
      'everything delivered',
      async () => {
        const s = await totals();
        return s.pending === 0 ? s : undefined;
      },
      30_000,
    );
    expect(settled).toMatchObject({ unaccounted: 0, dropped: 0 });
    // Nothing accepted was lost: the 150, the other integration's 20 and the 10 after recovery.
    expect(settled.delivered).toBe(receiver.received.size);
    expect(Math.max(...receiver.received.values())).toBe(1);
    expect([...receiver.received.keys()].filter((k) => k.startsWith('b1-')).length).toBe(150);
  }, 90_000);

  it('drop_newest: over the budget, pushes are accepted and the copies counted as dropped (backlog_full) in the ledger and health', async () => {
    receiver.setFaults(DOWN);
    const dropping = await pipe('dropping', { backlog_max_events: 100, when_full: 'drop_newest' });
    // One batch of 100 (the batch size here): the budget is reached with it, not within it.
    expect((await push(dropping.token, 'd1', 100)).status).toBe(200);
    await waitFor(
      'the backlog over its budget',
      async () => ((await health(dropping.destinationId)).backlog.state === 'dropping' ? true : undefined),
      30_000,
    );
    const later = await push(dropping.token, 'd2', 40);
    expect(later.status).toBe(200);
    const h = await waitFor(
      'the copies counted as dropped',
      async () => {
        const d = await health(dropping.destinationId);
        return d.ledger.reduce((n, r) => n + Number(r.dropped), 0) === 40 ? d : undefined;
      },
      30_000,
    );
    expect(h.ledger).toEqual([
      expect.objectContaining({
        integration_id: dropping.integrationId,
        dropped: 40,
        dropped_by_reason: { backlog_full: 40 },
        pending: 100,
      }),
    ]);

    receiver.setFaults(null);
    const settled = await waitFor(
      'the backlog delivered',
      async () => {
        const s = await totals();
        return s.pending === 0 ? s : undefined;
      },
      30_000,
    );
    expect(settled).toMatchObject({ unaccounted: 0, dropped: 40, dropped_by_reason: { backlog_full: 40 } });
    expect([...receiver.received.keys()].filter((k) => k.startsWith('d1-')).length).toBe(100);
    expect([...receiver.received.keys()].filter((k) => k.startsWith('d2-')).length).toBe(0);
  }, 90_000);

  it('refuses a budget below its minimum with 422', async () => {
    const res = await http(
      base,
      'POST',
      '/api/collectors/destinations',
      {
        name: 'tiny',
        type: 'http',
        organization_id: orgId,
        config: { url: receiver.url },
        delivery: { backlog_max_events: 5 },
      },
      admin.headers,
    );
    expect(res.status).toBe(422);
    expect(String(res.json.detail)).toMatch(/backlog_max_events/);
  });
});
