import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collectWindow, contextPool, vendorRejection } from '../../../test/support/vendors/collect-all.js';
import { startGithubSimulator, type GithubSimulator } from '../../../test/support/vendors/github.js';
import { stream } from '../../../test/support/builtin.js';
import { createPlatformRegistry } from '../../modules/integrations/platforms.js';
import { githubConnector } from './index.js';

const MIN = 60_000;
let sim: GithubSimulator;
const { ctx, closeAll } = contextPool(() => sim.config(), ['token']);

beforeAll(async () => {
  sim = await startGithubSimulator();
});
afterEach(closeAll);
afterAll(async () => {
  await sim.close();
});

describe('github connector: audit_log', () => {
  // Bounds off the whole second: the search phrase is read to the second, the window is not.
  const now = Math.floor(Date.now() / 1000) * 1000;
  const from = new Date(now - 60 * MIN + 437);
  const to = new Date(now - 10 * MIN + 611);
  let inside: string[];
  let outside: string[];

  beforeAll(() => {
    outside = [
      ...sim.addEvents('audit_log', 10, { from: new Date(from.getTime() - 10 * MIN), to: from }),
      // Just before `from` and at `to`, inside the seconds the phrase asks for.
      ...sim.addEvents('audit_log', 1, { from: new Date(from.getTime() - 1), to: from }),
      ...sim.addEvents('audit_log', 10, { from: to, to: new Date(to.getTime() + 5 * MIN) }),
    ];
    inside = sim.addEvents('audit_log', 245, { from, to });
  });

  it('collects a window of many pages, every entry exactly once and nothing outside [from, to)', async () => {
    const before = sim.requests;
    const got = await collectWindow(githubConnector, ctx(), 'audit_log', from, to);
    expect(got.pages).toBe(3);
    expect(sim.requests - before).toBe(3);
    expect(new Set(got.keys).size).toBe(got.keys.length);
    expect([...got.keys].sort()).toEqual([...inside].sort());
    expect(got.keys.some((k) => outside.includes(k))).toBe(false);
    expect(got.events.map((e) => e._document_id)).toEqual(got.keys);
  });

  it('follows next links into /organizations/{id}/audit-log and resumes from a stored one', async () => {
    const c = ctx();
    const first = await githubConnector.fetchPage(c, { stream: 'audit_log', cursor: null, from, to, pageSize: 50 });
    expect(first.next).toContain('/organizations/90412377/audit-log');
    expect(first.next).toMatch(/after=/);
    const second = await githubConnector.fetchPage(c, {
      stream: 'audit_log',
      cursor: first.next,
      from,
      to,
      pageSize: 50,
    });
    // The first page also held the entry just before `from` (same second), filtered out here.
    expect(first.keys).toEqual(inside.slice(0, 49));
    expect(second.keys[0]).toBe(inside[49]);
    const otherWindow = await githubConnector.fetchPage(c, {
      stream: 'audit_log',
      cursor: first.next,
      from: new Date(from.getTime() + 1000),
      to,
      pageSize: 50,
    });
    // A cursor of another window is not followed: that window starts over from its beginning.
    expect(first.keys).toEqual(expect.arrayContaining(otherWindow.keys.slice(0, 40)));
  });

  it('collects the enterprise log when config.enterprise is set', async () => {
    const ent = await startGithubSimulator({ useEnterprise: true });
    try {
      const ids = ent.addEvents('audit_log', 30);
      const got = await collectWindow(
        githubConnector,
        ctx(ent.config()),
        'audit_log',
        new Date(Date.now() - 40 * MIN),
        new Date(Date.now() - MIN),
        7,
      );
      expect(got.pages).toBe(5);
      expect([...got.keys].sort()).toEqual([...ids].sort());
      expect(ent.eventIds('audit_log')).toEqual(ids);
    } finally {
      await ent.close();
    }
  });

  it('waits out a short 429 with retry-after and succeeds', async () => {
    sim.rateLimit(1, 1);
    const got = await collectWindow(githubConnector, ctx(), 'audit_log', from, to);
    expect(got.keys).toHaveLength(inside.length);
  });

  it('gives up on a long 429 with rate_limited and the time to come back', async () => {
    sim.rateLimit(1, 3600);
    const err = await vendorRejection(
      githubConnector.fetchPage(ctx(), { stream: 'audit_log', cursor: null, from, to, pageSize: 10 }),
    );
    expect(err.kind).toBe('rate_limited');
    expect(err.details.retryAfterMs).toBe(3_600_000);
  });

  it('reads a secondary rate limit answered 403 as rate_limited, not as refused credentials', async () => {
    sim.secondaryRateLimit(1, 120);
    const err = await vendorRejection(
      githubConnector.fetchPage(ctx(), { stream: 'audit_log', cursor: null, from, to, pageSize: 10 }),
    );
    expect(err.kind).toBe('rate_limited');
    expect(err.details).toMatchObject({ status: 403, retryAfterMs: 120_000 });
  });

  it('reads an exhausted primary rate limit (403, remaining 0) as rate_limited until the reset', async () => {
    const limited = await startGithubSimulator({ rateLimitPerHour: 1 });
    try {
      const window = { stream: 'audit_log', cursor: null, from, to, pageSize: 10 };
      await githubConnector.fetchPage(ctx(limited.config()), window);
      const err = await vendorRejection(githubConnector.fetchPage(ctx(limited.config()), window));
      expect(err.kind).toBe('rate_limited');
      expect(err.details.retryAfterMs).toBeGreaterThan(3_500_000);
    } finally {
      await limited.close();
    }
  });

  it('retries 500 and 503 answers', async () => {
    sim.serverError(2);
    const before = sim.requests;
    const got = await collectWindow(githubConnector, ctx(), 'audit_log', from, to);
    expect(got.keys).toHaveLength(inside.length);
    expect(sim.requests - before).toBe(5);
  });

  it('test() proves the token; a wrong token is auth, an unknown org is config; the token never shows', async () => {
    await expect(githubConnector.test(ctx())).resolves.toBe(
      'the token read the audit log of organization example-corp on 127.0.0.1:' + new URL(sim.url).port,
    );
    const wrong = { ...sim.config(), token: 'ghp_wrong0123456789' };
    const err = await vendorRejection(githubConnector.test(ctx(wrong)));
    expect(err.kind).toBe('auth');
    expect(err.details.status).toBe(401);
    expect(err.message).not.toContain('ghp_wrong0123456789');
    const unknown = await vendorRejection(githubConnector.test(ctx({ ...sim.config(), org: 'nobody' })));
    expect(unknown.kind).toBe('config');
    expect(unknown.message).toContain('organization nobody not found');
  });

  it('maps collected entries with the built-in mapping (valid OCSF)', async () => {
    const got = await collectWindow(githubConnector, ctx(), 'audit_log', from, new Date(from.getTime() + 5 * MIN));
    expect(got.events.length).toBeGreaterThan(10);
    const { map } = stream('github', 'audit_log');
    for (const raw of got.events) {
      const out = map(raw);
      expect(out.time).toBe(raw['@timestamp']);
    }
  });
});

describe('github connector: declaration', () => {
  const platform = createPlatformRegistry([
    {
      name: 'github',
      display_name: 'GitHub',
      kind: 'pull',
      description: '',
      config_schema: githubConnector.config_schema,
    },
  ]).get('github')!;

  it('requires the token and an org or enterprise only when collecting; the token is a secret', () => {
    expect(platform.secretFields).toEqual(['token']);
    expect(platform.validate({})).toEqual([]);
    expect(platform.validate({ collect: true }).map((i) => i.location)).toEqual(
      expect.arrayContaining(['body/config/token', 'body/config/org', 'body/config/enterprise']),
    );
    expect(platform.validate({ collect: true, token: 't' }).length).toBeGreaterThan(0);
    const org = { collect: true, token: 't', org: 'example-corp' };
    expect(platform.validate(org)).toEqual([]);
    expect(org).toMatchObject({ base_url: 'https://api.github.com' });
    expect(platform.validate({ collect: true, token: 't', enterprise: 'example-enterprise' })).toEqual([]);
    expect(platform.validate({ collect: true, token: 't', org: '../etc' })).not.toEqual([]);
  });

  it('declares a date stream with the vendor retention', () => {
    expect(githubConnector.streams).toMatchObject([
      { name: 'audit_log', cursor: 'date', retentionDays: 180, pageSize: 100 },
    ]);
  });
});
