import { generateKeyPairSync } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collectWindow, contextPool, vendorRejection } from '../../../test/support/vendors/collect-all.js';
import {
  startGoogleWorkspaceSimulator,
  type GoogleWorkspaceSimulator,
} from '../../../test/support/vendors/google_workspace.js';
import { stream } from '../../../test/support/builtin.js';
import { createPlatformRegistry } from '../../modules/integrations/platforms.js';
import { googleWorkspaceConnector as google } from './index.js';

const MIN = 60_000;
// A service account key made for this run: the simulator holds the public half.
const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
const privatePem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();

let sim: GoogleWorkspaceSimulator;
const pool = contextPool(() => sim.config(), ['private_key']);
const ctx = (config: Record<string, unknown> = sim.config(), key = 'it') => pool.ctx(config, { key });

beforeAll(async () => {
  sim = await startGoogleWorkspaceSimulator({ privateKeyPem: privatePem, publicKeyPem: publicPem });
});
afterEach(pool.closeAll);
afterAll(async () => {
  await sim.close();
});

describe('google workspace connector: login and admin', () => {
  const now = Date.now();
  const from = new Date(now - 60 * MIN);
  const to = new Date(now - 10 * MIN);
  let inside: string[];
  let outside: string[];

  beforeAll(() => {
    outside = [
      ...sim.addEvents('login', 10, { from: new Date(from.getTime() - 10 * MIN), to: from }),
      // Exactly at `to`: the API's endTime includes it, the window [from, to) does not.
      ...sim.addEvents('login', 1, { from: to, to: new Date(to.getTime() + 1) }),
      ...sim.addEvents('login', 10, { from: new Date(to.getTime() + 1), to: new Date(to.getTime() + 5 * MIN) }),
    ];
    inside = sim.addEvents('login', 230, { from, to });
  });

  it('collects a window of many pages (newest first), every activity exactly once, with one token', async () => {
    const before = { requests: sim.requests, tokens: sim.tokenRequests };
    const got = await collectWindow(google, ctx(sim.config(), 'pages'), 'login', from, to, 60);
    expect(got.pages).toBe(4);
    expect(sim.requests - before.requests).toBe(4);
    expect(sim.tokenRequests - before.tokens).toBe(1);
    expect(new Set(got.keys).size).toBe(got.keys.length);
    expect([...got.keys].sort()).toEqual([...inside].sort());
    expect(got.keys.some((k) => outside.includes(k))).toBe(false);
    expect(got.keys).toEqual([...inside].reverse());
    expect(sim.eventIds('login').filter((id) => inside.includes(id))).toEqual(inside);
  });

  it('collects the admin stream from its own report', async () => {
    const ids = sim.addEvents('admin', 25, { from, to });
    const got = await collectWindow(google, ctx(), 'admin', from, to, 10);
    expect(got.pages).toBe(3);
    expect([...got.keys].sort()).toEqual([...ids].sort());
    expect(got.events.every((e) => (e.id as { applicationName: string }).applicationName === 'admin')).toBe(true);
  });

  it('gets a new token once when the API refuses an expired one', async () => {
    const c = ctx(sim.config(), 'expire');
    await google.fetchPage(c, { stream: 'login', cursor: null, from, to, pageSize: 10 });
    const tokensBefore = sim.tokenRequests;
    sim.expireTokens();
    const got = await collectWindow(google, c, 'login', from, to, 1000);
    expect(got.keys).toHaveLength(inside.length);
    expect(sim.tokenRequests - tokensBefore).toBe(1);
  });

  it('is auth when the API refuses the fresh token too', async () => {
    // Tokens of this simulator's token endpoint, presented to another Reports API: always 401.
    const other = await startGoogleWorkspaceSimulator({ privateKeyPem: privatePem, publicKeyPem: publicPem });
    try {
      const tokensBefore = sim.tokenRequests;
      const err = await vendorRejection(
        google.fetchPage(ctx({ ...sim.config(), base_url: other.url }, 'foreign'), {
          stream: 'login',
          cursor: null,
          from,
          to,
          pageSize: 10,
        }),
      );
      expect(err).toMatchObject({ kind: 'auth', details: { status: 401 } });
      expect(sim.tokenRequests - tokensBefore).toBe(2);
      expect(other.requests).toBe(2);
    } finally {
      await other.close();
    }
  });

  it('waits out a short 429, gives up on a long one, reads 403 rateLimitExceeded as a rate limit', async () => {
    sim.rateLimit(1, 1);
    expect((await collectWindow(google, ctx(), 'login', from, to, 1000)).keys).toHaveLength(inside.length);
    sim.rateLimit(1, 3600);
    const long = await vendorRejection(
      google.fetchPage(ctx(), { stream: 'login', cursor: null, from, to, pageSize: 10 }),
    );
    expect(long.kind).toBe('rate_limited');
    expect(long.details.retryAfterMs).toBe(3_600_000);
    sim.rateLimit403(1);
    const forbidden = await vendorRejection(
      google.fetchPage(ctx(), { stream: 'login', cursor: null, from, to, pageSize: 10 }),
    );
    expect(forbidden.kind).toBe('rate_limited');
    expect(forbidden.details).toMatchObject({ status: 403, retryAfterMs: MIN });
  });

  it('retries 500 and 503 answers', async () => {
    sim.serverError(2);
    const before = sim.requests;
    const got = await collectWindow(google, ctx(), 'login', from, to, 1000);
    expect(got.keys).toHaveLength(inside.length);
    expect(sim.requests - before).toBe(3);
  });

  it('test() proves the key and delegation; a wrong key, a non-admin subject or a bad PEM fail without showing the key', async () => {
    await expect(google.test(ctx())).resolves.toBe(
      'the service account, acting as it.admin@example.com, read the login audit report',
    );
    // A key pasted with the JSON file's escaped newlines, and a PKCS#1 key, work the same.
    await expect(
      google.test(ctx({ ...sim.config(), private_key: privatePem.replace(/\n/g, '\\n') }, 'escaped')),
    ).resolves.toBeTypeOf('string');
    const pkcs1 = pair.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    await expect(google.test(ctx({ ...sim.config(), private_key: pkcs1 }, 'pkcs1'))).resolves.toBeTypeOf('string');

    const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const wrongKey = await vendorRejection(google.test(ctx({ ...sim.config(), private_key: other }, 'wrong-key')));
    expect(wrongKey.kind).toBe('auth');
    expect(wrongKey.message).toContain('invalid_grant');
    expect(wrongKey.message).not.toContain('PRIVATE KEY');

    const notAdmin = await vendorRejection(
      google.test(ctx({ ...sim.config(), subject: 'jane.doe@example.com' }, 'not-admin')),
    );
    expect(notAdmin).toMatchObject({ kind: 'auth', details: { status: 403 } });

    const badPem = await vendorRejection(
      google.test(
        ctx(
          { ...sim.config(), private_key: '-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----' },
          'bad-pem',
        ),
      ),
    );
    expect(badPem.kind).toBe('config');
    expect(badPem.message).not.toContain('c2VjcmV0');
  });

  it('maps collected activities with the built-in mappings (valid OCSF)', async () => {
    sim.addEvents('admin', 8, { from, to: new Date(from.getTime() + 5 * MIN) });
    for (const name of ['login', 'admin']) {
      const got = await collectWindow(google, ctx(), name, from, new Date(from.getTime() + 5 * MIN));
      expect(got.events.length).toBeGreaterThan(5);
      const { map } = stream('google_workspace', name);
      for (const raw of got.events) expect(map(raw).time).toBe(Date.parse((raw.id as { time: string }).time));
    }
  });
});

describe('google workspace connector: declaration', () => {
  const platform = createPlatformRegistry([
    {
      name: 'google_workspace',
      display_name: 'Google Workspace',
      kind: 'pull',
      description: '',
      config_schema: google.config_schema,
    },
  ]).get('google_workspace')!;

  it('requires the service account and subject only when collecting; the private key is a secret', () => {
    expect(platform.secretFields).toEqual(['private_key']);
    expect(platform.validate({})).toEqual([]);
    expect(platform.validate({ collect: true }).map((i) => i.location)).toEqual(
      expect.arrayContaining(['body/config/client_email', 'body/config/private_key', 'body/config/subject']),
    );
    const config: Record<string, unknown> = {
      collect: true,
      client_email: 'sa@p.iam.gserviceaccount.com',
      private_key: privatePem,
      subject: 'admin@example.com',
    };
    expect(platform.validate(config)).toEqual([]);
    expect(config).toMatchObject({
      customer_id: 'my_customer',
      base_url: 'https://admin.googleapis.com',
      token_uri: 'https://oauth2.googleapis.com/token',
    });
    expect(platform.validate({ ...config, subject: 'not an email' })).not.toEqual([]);
  });

  it('declares two date streams with the vendor retention', () => {
    expect(google.streams).toMatchObject([
      { name: 'login', cursor: 'date', retentionDays: 180, pageSize: 1000 },
      { name: 'admin', cursor: 'date', retentionDays: 180, pageSize: 1000 },
    ]);
  });
});
