import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collectWindow, contextPool, vendorRejection } from '../../../test/support/vendors/collect-all.js';
import { startOktaSimulator, type OktaSimulator } from '../../../test/support/vendors/okta.js';
import { stream } from '../../../test/support/builtin.js';
import { createPlatformRegistry } from '../../modules/integrations/platforms.js';
import { oktaConnector } from './index.js';

const MIN = 60_000;
let sim: OktaSimulator;
const { ctx, closeAll } = contextPool(() => sim.config(), ['api_token']);

beforeAll(async () => {
  sim = await startOktaSimulator();
});
afterEach(closeAll);
afterAll(async () => {
  await sim.close();
});

describe('okta connector: system_log', () => {
  const now = Date.now();
  const from = new Date(now - 60 * MIN);
  const to = new Date(now - 10 * MIN);
  let inside: string[];
  let outside: string[];

  beforeAll(() => {
    outside = [
      ...sim.addEvents('system_log', 15, { from: new Date(from.getTime() - 20 * MIN), to: from }),
      ...sim.addEvents('system_log', 15, { from: to, to: new Date(to.getTime() + 5 * MIN) }),
    ];
    inside = sim.addEvents('system_log', 230, { from, to });
  });

  it('collects a window of many pages, every event exactly once and nothing outside [from, to)', async () => {
    const before = sim.requests;
    const got = await collectWindow(oktaConnector, ctx(), 'system_log', from, to, 50);
    expect(got.pages).toBe(5);
    expect(sim.requests - before).toBe(5);
    expect(new Set(got.keys).size).toBe(got.keys.length);
    expect([...got.keys].sort()).toEqual([...inside].sort());
    expect(got.keys.some((k) => outside.includes(k))).toBe(false);
    expect(got.events.map((e) => e.uuid)).toEqual(got.keys);
    // The simulator's order is the vendor's: ascending by published.
    const ids = sim.eventIds('system_log');
    expect(ids.filter((id) => inside.includes(id))).toEqual(got.keys);
  });

  it('resumes from a stored next link, and starts the window over when the link belongs elsewhere', async () => {
    const c = ctx();
    const first = await oktaConnector.fetchPage(c, { stream: 'system_log', cursor: null, from, to, pageSize: 100 });
    expect(first.next).toMatch(/after=/);
    const second = await oktaConnector.fetchPage(c, {
      stream: 'system_log',
      cursor: first.next,
      from,
      to,
      pageSize: 100,
    });
    expect(second.keys[0]).toBe(inside[100]);
    const foreign = first.next!.replace(sim.url, 'http://127.0.0.2:1');
    const again = await oktaConnector.fetchPage(c, { stream: 'system_log', cursor: foreign, from, to, pageSize: 100 });
    expect(again.keys).toEqual(first.keys);
    // A cursor of another window is not followed into this one.
    const otherWindow = await oktaConnector.fetchPage(c, {
      stream: 'system_log',
      cursor: first.next,
      from,
      to: new Date(to.getTime() - MIN),
      pageSize: 100,
    });
    expect(otherWindow.keys).toEqual(first.keys);
  });

  it('waits out a short 429 (X-Rate-Limit-Reset) and succeeds', async () => {
    sim.rateLimit(1, 1);
    const got = await collectWindow(oktaConnector, ctx(), 'system_log', from, to, 1000);
    expect(got.keys).toHaveLength(inside.length);
  });

  it('gives up on a long 429 with rate_limited and the time to come back', async () => {
    sim.rateLimit(1, 3600);
    const err = await vendorRejection(
      oktaConnector.fetchPage(ctx(), { stream: 'system_log', cursor: null, from, to, pageSize: 10 }),
    );
    expect(err.kind).toBe('rate_limited');
    expect(err.details.retryAfterMs).toBeGreaterThan(3_500_000);
  });

  it('retries 500 and 503 answers', async () => {
    sim.serverError(2);
    const before = sim.requests;
    const got = await collectWindow(oktaConnector, ctx(), 'system_log', from, to, 1000);
    expect(got.keys).toHaveLength(inside.length);
    expect(sim.requests - before).toBe(3);
  });

  it('test() proves the token; a wrong token is auth and never shows in the message', async () => {
    await expect(oktaConnector.test(ctx())).resolves.toMatch(/System Log of 127\.0\.0\.1/);
    const wrong = { ...sim.config(), api_token: 'wrong-token-0123456789' };
    const err = await vendorRejection(oktaConnector.test(ctx(wrong)));
    expect(err.kind).toBe('auth');
    expect(err.details.status).toBe(401);
    expect(err.message).not.toContain('wrong-token-0123456789');
  });

  it('maps collected events with the built-in mapping (valid OCSF)', async () => {
    const got = await collectWindow(oktaConnector, ctx(), 'system_log', from, new Date(from.getTime() + 5 * MIN), 1000);
    expect(got.events.length).toBeGreaterThan(10);
    const { map } = stream('okta', 'system_log');
    for (const raw of got.events) {
      const out = map(raw);
      expect(out.time).toBe(Date.parse(String(raw.published)));
      expect(out.class_uid).toBeTypeOf('number');
    }
  });
});

describe('okta connector: declaration', () => {
  const platform = createPlatformRegistry([
    { name: 'okta', display_name: 'Okta', kind: 'pull', description: '', config_schema: oktaConnector.config_schema },
  ]).get('okta')!;

  it('requires the org URL and the token only when collecting; the token is a secret', () => {
    expect(platform.secretFields).toEqual(['api_token']);
    expect(platform.validate({})).toEqual([]);
    expect(platform.validate({ collect: true }).map((i) => i.location)).toEqual(
      expect.arrayContaining(['body/config/api_token', 'body/config/base_url']),
    );
    expect(platform.validate({ collect: true, base_url: 'https://example.okta.com', api_token: '00abc' })).toEqual([]);
    expect(platform.validate({ collect: true, base_url: 'ftp://example.okta.com', api_token: '00abc' })).not.toEqual(
      [],
    );
  });

  it('declares a date stream with the vendor retention', () => {
    const [spec] = oktaConnector.streams;
    expect(spec).toMatchObject({ name: 'system_log', cursor: 'date', retentionDays: 90, pageSize: 1000 });
    expect(spec!.settleMs).toBeLessThan(2 * MIN);
  });
});

describe('okta simulator in its own process', () => {
  it('serves the events it was started with and lists their ids on /__sim/ids', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/vendors/okta-main.ts', '25'], {
      cwd: new URL('../../..', import.meta.url).pathname,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`okta-main exited with ${code}`)));
      });
      const started = JSON.parse(line) as { url: string; config: Record<string, unknown>; ids: number };
      expect(started.ids).toBe(25);
      const ids = ((await (await fetch(`${started.url}/__sim/ids`)).json()) as { system_log: string[] }).system_log;
      expect(ids).toHaveLength(25);
      const added = (await (
        await fetch(`${started.url}/__sim/events?stream=system_log&n=5`, { method: 'POST' })
      ).json()) as { ids: string[] };
      expect(added.ids).toHaveLength(5);
      const c = ctx(started.config);
      const end = new Date(Date.now() - MIN);
      const got = await collectWindow(oktaConnector, c, 'system_log', new Date(end.getTime() - 40 * MIN), end, 10);
      expect([...got.keys].sort()).toEqual([...ids, ...added.ids].sort());
    } finally {
      child.kill('SIGTERM');
    }
  });
});
