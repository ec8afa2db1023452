import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformRegistry } from '../../modules/integrations/platforms.js';
import {
  collectWindow,
  contextPool,
  vendorRejection,
  windowSequence,
} from '../../../test/support/vendors/collect-all.js';
import {
  startCrowdstrikeFalconSimulator,
  type CrowdstrikeFalconSimulator,
} from '../../../test/support/vendors/crowdstrike_falcon.js';
import { stream } from '../../../test/support/builtin.js';
import { crowdstrikeFalconConnector as falcon } from './index.js';

const MIN = 60_000;
let sim: CrowdstrikeFalconSimulator;
const { ctx: open, closeAll } = contextPool(() => sim.config(), ['client_secret']);

/** A window of its own per test, so the tests share one simulator without seeing each other's alerts. */
const freshWindow = windowSequence(Date.now() - 80 * 60 * MIN);

beforeAll(async () => {
  sim = await startCrowdstrikeFalconSimulator({ childCids: ['0123456789abcdef0123456789abcdef'] });
});
afterEach(closeAll);
afterAll(async () => {
  await sim.close();
});

describe('crowdstrike_falcon connector', () => {
  it('collects a window of many pages exactly once, oldest first, with composite_id@updated_timestamp keys', async () => {
    const w = freshWindow();
    const ids = sim.addEvents('alerts', 57, w);
    const got = await collectWindow(falcon, open(), 'alerts', w.from, w.to, 10);
    expect(got.pages).toBe(6);
    expect(got.events.map((e) => e.composite_id)).toEqual(ids);
    expect(new Set(got.keys).size).toBe(57);
    expect(got.keys[0]).toBe(`${ids[0]}@${String(got.events[0]!.updated_timestamp)}`);
    const fql = sim.queries.at(-1)!;
    expect(fql.get('sort')).toBe('updated_timestamp|asc');
    expect(fql.get('filter')).toMatch(/^updated_timestamp:>='[^']+'\+updated_timestamp:<'[^']+'$/);
  });

  it('pages through alerts sharing one timestamp (keyset ties) without losing or repeating any', async () => {
    const w = freshWindow();
    const tieWindow = { from: new Date(w.from.getTime() + MIN), to: new Date(w.from.getTime() + MIN + 3) };
    const ids = sim.addEvents('alerts', 25, tieWindow);
    const got = await collectWindow(falcon, open(), 'alerts', w.from, w.to, 4);
    expect([...got.events.map((e) => e.composite_id as string)].sort()).toEqual([...ids].sort());
    expect(new Set(got.keys).size).toBe(25);
  });

  it('respects the window bounds [from, to)', async () => {
    const w = freshWindow(10);
    const before = sim.addEvents('alerts', 3, {
      from: new Date(w.from.getTime() - 3 * MIN),
      to: new Date(w.from.getTime() - 1),
    });
    const inside = sim.addEvents('alerts', 5, w);
    const atEnd = sim.addEvents('alerts', 2, { from: w.to, to: new Date(w.to.getTime() + MIN) });
    const got = await collectWindow(falcon, open(), 'alerts', w.from, w.to);
    expect(got.events.map((e) => e.composite_id)).toEqual(inside);
    for (const id of [...before, ...atEnd]) expect(got.events.map((e) => e.composite_id)).not.toContain(id);
  });

  it('collects an updated alert again, in the window of its new updated_timestamp, under a new key', async () => {
    const w1 = freshWindow(10);
    const [id] = sim.addEvents('alerts', 1, w1);
    const first = await collectWindow(falcon, open(), 'alerts', w1.from, w1.to);
    const w2 = freshWindow(10);
    sim.updateAlert(id!, new Date(w2.from.getTime() + MIN));
    const second = await collectWindow(falcon, open(), 'alerts', w2.from, w2.to);
    expect(second.events.map((e) => [e.composite_id, e.status])).toEqual([[id, 'in_progress']]);
    expect(second.keys[0]).not.toBe(first.keys[0]);
    expect((await collectWindow(falcon, open(), 'alerts', w1.from, w1.to)).events).toHaveLength(0);
  });

  it('waits out a short 429 (X-RateLimit-RetryAfter) and raises rate_limited with the wait for a long one', async () => {
    const w = freshWindow(10);
    sim.addEvents('alerts', 3, w);
    sim.rateLimit(1, 1);
    const ctx = open();
    expect((await collectWindow(falcon, ctx, 'alerts', w.from, w.to)).events).toHaveLength(3);
    sim.rateLimit(1, 3600);
    const err = await vendorRejection(collectWindow(falcon, open(), 'alerts', w.from, w.to));
    expect(err.kind).toBe('rate_limited');
    expect(err.details.retryAfterMs).toBeGreaterThan(3_500_000);
  });

  it('raises rate_limited when the per-minute quota is spent', async () => {
    const small = await startCrowdstrikeFalconSimulator({ requestsPerMinute: 2 });
    try {
      const w = freshWindow(10);
      small.addEvents('alerts', 5, w);
      const err = await vendorRejection(collectWindow(falcon, open(small.config()), 'alerts', w.from, w.to, 2));
      expect(err).toMatchObject({ kind: 'rate_limited' });
      expect(err.details.retryAfterMs).toBeGreaterThan(5_000);
    } finally {
      await small.close();
    }
  });

  it('retries 5xx answers', async () => {
    const w = freshWindow(10);
    const ids = sim.addEvents('alerts', 4, w);
    sim.serverError(2);
    const before = sim.requests;
    const got = await collectWindow(falcon, open(), 'alerts', w.from, w.to);
    expect(got.events.map((e) => e.composite_id)).toEqual(ids);
    expect(sim.requests - before).toBe(4);
  });

  it('gets a new token once when the vendor refuses an expired one', async () => {
    const w = freshWindow(10);
    sim.addEvents('alerts', 2, w);
    const ctx = open();
    await collectWindow(falcon, ctx, 'alerts', w.from, w.to);
    const issued = sim.tokensIssued;
    sim.expireTokens();
    expect((await collectWindow(falcon, ctx, 'alerts', w.from, w.to)).events).toHaveLength(2);
    expect(sim.tokensIssued).toBe(issued + 1);
  });

  it('test() proves the credentials and the Alerts scope; wrong ones are auth errors without the secret', async () => {
    expect(await falcon.test(open())).toMatch(/OAuth2 token issued .* Alerts API answered/);
    const wrong = { ...sim.config(), client_secret: 'not-the-secret-at-all' };
    const err = await vendorRejection(falcon.test(open(wrong)));
    expect(err.kind).toBe('auth');
    expect(err.message).not.toContain('not-the-secret-at-all');
    expect(
      (await vendorRejection(falcon.test(open({ ...sim.config(), member_cid: 'ffffffffffffffffffffffffffffffff' }))))
        .kind,
    ).toBe('auth');
  });

  it('collects a Flight Control child CID (member_cid or the managed-provider tenant) and only its alerts', async () => {
    const child = '0123456789abcdef0123456789abcdef';
    const w = freshWindow(10);
    const parentIds = sim.addEvents('alerts', 2, w);
    const childIds = sim.addEvents('alerts', 3, w, { cid: child });
    expect(
      (await collectWindow(falcon, open({ ...sim.config(), member_cid: child }), 'alerts', w.from, w.to)).events.map(
        (e) => e.composite_id,
      ),
    ).toEqual(childIds);
    expect(
      (await collectWindow(falcon, open(sim.config(), { tenantId: child }), 'alerts', w.from, w.to)).events.map(
        (e) => e.composite_id,
      ),
    ).toEqual(childIds);
    expect((await collectWindow(falcon, open(), 'alerts', w.from, w.to)).events.map((e) => e.composite_id)).toEqual(
      parentIds,
    );
  });

  it('refuses a page token it did not write', async () => {
    const w = freshWindow(10);
    const err = await vendorRejection(
      falcon.fetchPage(open(), { stream: 'alerts', cursor: 'bm90LWEtdG9rZW4', from: w.from, to: w.to, pageSize: 10 }),
    );
    expect(err.kind).toBe('bad_request');
  });

  it('has a config schema that needs the credentials to collect and keeps the secret write-only', () => {
    const registry = createPlatformRegistry([
      {
        name: falcon.platform,
        display_name: falcon.display_name,
        kind: 'pull',
        description: falcon.description,
        config_schema: falcon.config_schema,
      },
    ]);
    const platform = registry.get('crowdstrike_falcon')!;
    expect(platform.secretFields).toEqual(['client_secret']);
    expect(platform.validate({ collect: true }).map((i) => i.location)).toEqual(
      expect.arrayContaining(['body/config/client_id', 'body/config/client_secret']),
    );
    expect(platform.validate({ collect: false })).toEqual([]);
    expect(
      platform
        .validate({ collect: true, client_id: 'abc', client_secret: 'def', member_cid: 'not-a-cid' })
        .map((i) => i.location),
    ).toEqual(['body/config/member_cid']);
    const config: Record<string, unknown> = { collect: true, client_id: 'abc', client_secret: 'def' };
    expect(platform.validate(config)).toEqual([]);
    expect(config.base_url).toBe('https://api.crowdstrike.com');
    expect(falcon.streams.map((s) => [s.name, s.cursor, s.retentionDays])).toEqual([['alerts', 'date', 90]]);
  });

  it('collected alerts normalize with the built-in mapping (valid OCSF)', async () => {
    const w = freshWindow(10);
    sim.addEvents('alerts', 6, w);
    const { map } = stream('crowdstrike_falcon', 'alerts');
    for (const raw of (await collectWindow(falcon, open(), 'alerts', w.from, w.to)).events) {
      const ocsf = map(raw);
      expect(ocsf.class_uid).toBe(2004);
      expect(ocsf.metadata.uid).toBe(raw.composite_id);
      expect(ocsf.time).toBe(Date.parse(raw.updated_timestamp as string));
    }
  });
});
