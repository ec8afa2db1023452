// The event store's size budget through the retention job (WEIR_SEARCH_MAX_BYTES, docs/search.md):
// over the budget, the events received first go, across organizations, after what the
// retention days remove; each organization's count (GET .../retention) adds both. And the
// setting is read as a number of bytes, with a unit or without, and refused otherwise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createPrincipal, type Principal } from '../../../test/support/identity.js';
import { ConfigError, loadConfig } from '../../config.js';
import { inTransaction } from '../../platform/db/ambient.js';
import { storedCopies } from '../../pipeline/delivery/routing-write.js';
import { SEARCH_QUEUE } from './runs.js';

const DAY = 86_400_000;
const BUDGET = 2_000;
let t: TestApp;
let platform: Principal;

async function call(method: string, url: string, who: Principal, payload?: Record<string, unknown>) {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload }),
  });
}

async function newOrg(name: string): Promise<number> {
  const res = await call('POST', '/api/organizations/', platform, { name });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: number }>().id;
}

/** Stores one event per receipt time through the pass's path; their ids and texts' bytes. */
async function storeAt(organizationId: number, received: number[]): Promise<{ id: string; bytes: number }[]> {
  const ids = received.map(() => crypto.randomUUID());
  const ocsf = received.map((r, i) => ({
    class_uid: 3002,
    time: r,
    message: `event ${i} of ${organizationId} `.padEnd(200, '.'),
  }));
  const lines = ocsf.map((e) => JSON.stringify(e));
  const copies = storedCopies('d', { organization_id: organizationId, integration_id: 1, stream: 's' }, lines, (i) => ({
    id: ids[i]!,
    received: received[i]!,
    ocsf: ocsf[i]!,
  }));
  const store = t.container.eventStore;
  await store.prepare(crypto.randomUUID(), [copies]);
  await inTransaction(t.container.database.db, () => store.write([copies]));
  return ids.map((id, i) => ({ id, bytes: Buffer.byteLength(lines[i]!) }));
}

const everything = (organizationIds: number[]) => ({
  organizationIds,
  from: new Date(0),
  to: new Date(Date.now() + 2 * DAY),
  condition: null,
});

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_SEARCH_MAX_BYTES: String(BUDGET) } });
  platform = await createPrincipal(t, { role: 'admin', organizationId: null });
});
afterAll(async () => t?.close());

describe('the size budget', () => {
  it('removes the events received first, across organizations, until the store is within the budget, and counts them on each organization', async () => {
    const a = await newOrg('Budget A');
    const b = await newOrg('Budget B');
    const now = Date.now();
    // Received 20 days ago: past A's 7-day retention (the retention days go first).
    const expired = await storeAt(a, [now - 20 * DAY]);
    // Ten events, alternating organizations, received an hour apart: ~2,300 bytes, over the budget.
    const receipts = Array.from({ length: 10 }, (_, k) => now - (10 - k) * 3_600_000);
    const ofA = await storeAt(
      a,
      receipts.filter((_, k) => k % 2 === 0),
    );
    const ofB = await storeAt(
      b,
      receipts.filter((_, k) => k % 2 === 1),
    );
    const inOrder = receipts.map((_, k) => (k % 2 === 0 ? ofA[k / 2]! : ofB[(k - 1) / 2]!));
    const store = t.container.eventStore;
    expect(await store.size()).toBe(expired[0]!.bytes + inOrder.reduce((s, e) => s + e.bytes, 0));
    expect((await call('PUT', `/api/organizations/${a}/retention`, platform, { retention_days: 7 })).statusCode).toBe(
      200,
    );

    // What goes over the budget: the oldest, until the rest fits.
    let left = inOrder.reduce((s, e) => s + e.bytes, 0);
    let over = 0;
    while (left > BUDGET) left -= inOrder[over++]!.bytes;
    expect(over).toBeGreaterThan(1);
    const job = t.container.jobs.find((j) => j.queue === SEARCH_QUEUE)!;
    await job.handlers['search.retention']!(
      { id: 'r', queue: SEARCH_QUEUE, name: 'search.retention', payload: {}, attempt: 1, maxAttempts: 1 },
      new AbortController().signal,
    );

    expect(await store.size()).toBe(left);
    expect(await store.size()).toBeLessThanOrEqual(BUDGET);
    const kept = await store.rows(everything([a, b]), {
      fields: null,
      sort: [{ field: 'time', order: 'asc' }],
      limit: 100,
    });
    expect(kept.map((r) => r.event_id)).toEqual(inOrder.slice(over).map((e) => e.id));
    const goneOfA = 1 + inOrder.slice(0, over).filter((e) => ofA.includes(e)).length;
    const goneOfB = inOrder.slice(0, over).filter((e) => ofB.includes(e)).length;
    for (const [id, removed] of [
      [a, goneOfA],
      [b, goneOfB],
    ] as const) {
      const res = await call('GET', `/api/organizations/${id}/retention`, platform);
      expect(res.json()).toMatchObject({ event_store: { removed, last_removed_at: expect.any(String) } });
    }

    // Within the budget, the next run removes nothing more.
    await job.handlers['search.retention']!(
      { id: 'r2', queue: SEARCH_QUEUE, name: 'search.retention', payload: {}, attempt: 1, maxAttempts: 1 },
      new AbortController().signal,
    );
    expect(await store.count(everything([a, b]))).toBe(10 - over);
  });

  it('reads WEIR_SEARCH_MAX_BYTES as bytes, with a unit or without (0 or unset: no budget), and refuses anything else', () => {
    const env = { WEIR_SECRET_KEY: 'k'.repeat(64), WEIR_DATA_DIR: '/tmp/weir-config-test' };
    const read = (v?: string) =>
      loadConfig({ ...env, ...(v === undefined ? {} : { WEIR_SEARCH_MAX_BYTES: v }) }).search.maxBytes;
    expect(read()).toBe(0);
    expect(read('0')).toBe(0);
    expect(read('1500000')).toBe(1_500_000);
    expect(read('50GB')).toBe(50e9);
    expect(read('2 GiB')).toBe(2 ** 31);
    for (const bad of ['-1', '1.5GB', 'lots', '10PB']) expect(() => read(bad), bad).toThrow(ConfigError);
    expect(() => read('lots')).toThrow(/WEIR_SEARCH_MAX_BYTES/);
  });
});
