import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformRegistry } from '../../modules/integrations/platforms.js';
import {
  collectWindow,
  contextPool,
  vendorRejection,
  windowSequence,
} from '../../../test/support/vendors/collect-all.js';
import {
  startAwsCloudtrailSimulator,
  type AwsCloudtrailSimulator,
} from '../../../test/support/vendors/aws_cloudtrail.js';
import { stream } from '../../../test/support/builtin.js';
import { awsCloudtrailConnector as cloudtrail } from './index.js';

const MIN = 60_000;
let sim: AwsCloudtrailSimulator;
const { ctx: open, closeAll } = contextPool(() => sim.config(), ['secret_access_key', 'session_token']);

/** A window of its own per test (whole seconds plus an odd millisecond offset, as the engine's windows are). */
const freshWindow = windowSequence(Math.floor((Date.now() - 60 * 24 * MIN) / 1000) * 1000 + 437);

beforeAll(async () => {
  sim = await startAwsCloudtrailSimulator();
});
afterEach(closeAll);
afterAll(async () => {
  await sim.close();
});

describe('aws_cloudtrail connector', () => {
  it('collects a window of many pages exactly once, signed with SigV4 and paced under 2 requests a second', async () => {
    const w = freshWindow();
    const ids = sim.addEvents('cloudtrail', 23, w);
    const throttledBefore = sim.throttled;
    const got = await collectWindow(cloudtrail, open(), 'cloudtrail', w.from, w.to, 5);
    expect(got.pages).toBe(5);
    expect([...got.keys].sort()).toEqual([...ids].sort());
    expect(got.events.map((e) => e.eventID)).toEqual(got.keys);
    expect(sim.throttled).toBe(throttledBefore);
    expect(sim.bodies.at(-1)).toMatchObject({
      StartTime: Math.floor(w.from.getTime() / 1000),
      EndTime: Math.ceil(w.to.getTime() / 1000),
      MaxResults: 5,
    });
  });

  it('keeps events on the window edges in exactly one window [from, to)', async () => {
    const w = freshWindow(10);
    const firstSecond = Math.ceil(w.from.getTime() / 1000) * 1000;
    // At the second that StartTime (rounded down) still includes, yet before `from`: the previous window's.
    const before = sim.addEvents('cloudtrail', 2, { from: new Date(firstSecond - 1000), to: w.from });
    const inside = sim.addEvents('cloudtrail', 4, { from: new Date(firstSecond), to: new Date(w.to.getTime()) });
    // At the second EndTime (rounded up, inclusive) still includes, yet at or after `to`: the next window's.
    const after = sim.addEvents('cloudtrail', 2, {
      from: new Date(Math.ceil(w.to.getTime() / 1000) * 1000),
      to: new Date(w.to.getTime() + 3000),
    });
    const got = await collectWindow(cloudtrail, open(), 'cloudtrail', w.from, w.to);
    expect([...got.keys].sort()).toEqual([...inside].sort());
    const previous = await collectWindow(cloudtrail, open(), 'cloudtrail', new Date(w.from.getTime() - 5000), w.from);
    const next = await collectWindow(cloudtrail, open(), 'cloudtrail', w.to, new Date(w.to.getTime() + 5000));
    expect([...previous.keys].sort()).toEqual([...before].sort());
    expect([...next.keys].sort()).toEqual([...after].sort());
  });

  it('backs off and retries a ThrottlingException, and gives rate_limited with a wait when it persists', async () => {
    const w = freshWindow(10);
    sim.addEvents('cloudtrail', 3, w);
    sim.rateLimit(1, 1);
    const ctx = open();
    expect((await collectWindow(cloudtrail, ctx, 'cloudtrail', w.from, w.to)).keys).toHaveLength(3);
    expect(ctx.http.usage.rateLimited).toBe(1);
    sim.rateLimit(4, 60);
    const err = await vendorRejection(collectWindow(cloudtrail, open(), 'cloudtrail', w.from, w.to));
    expect(err.kind).toBe('rate_limited');
    expect(err.details.retryAfterMs).toBeGreaterThan(0);
  }, 20_000);

  it('retries 5xx answers', async () => {
    const w = freshWindow(10);
    const ids = sim.addEvents('cloudtrail', 4, w);
    sim.serverError(2);
    const before = sim.requests;
    const got = await collectWindow(cloudtrail, open(), 'cloudtrail', w.from, w.to);
    expect([...got.keys].sort()).toEqual([...ids].sort());
    expect(sim.requests - before).toBe(3);
  });

  it('restarts the window when CloudTrail refuses the NextToken', async () => {
    const w = freshWindow(10);
    const ids = sim.addEvents('cloudtrail', 4, w);
    const ctx = open();
    const first = await cloudtrail.fetchPage(ctx, {
      stream: 'cloudtrail',
      cursor: null,
      from: w.from,
      to: w.to,
      pageSize: 2,
    });
    expect(first.next).not.toBeNull();
    // The same token with another window is "a token that was previously used in a request with different parameters".
    const other = await cloudtrail.fetchPage(ctx, {
      stream: 'cloudtrail',
      cursor: first.next,
      from: new Date(w.from.getTime() - 1000),
      to: w.to,
      pageSize: 2,
    });
    expect(other.keys).toEqual(first.keys);
    const rest = await collectWindow(cloudtrail, ctx, 'cloudtrail', w.from, w.to, 2);
    expect([...rest.keys].sort()).toEqual([...ids].sort());
    expect(
      (
        await vendorRejection(
          cloudtrail.fetchPage(ctx, {
            stream: 'cloudtrail',
            cursor: 'not-a-token',
            from: w.from,
            to: w.to,
            pageSize: 2,
          }),
        )
      ).kind,
    ).toBe('bad_request');
  });

  it('test() signs a LookupEvents call; wrong keys, a wrong secret and expired session credentials are auth errors', async () => {
    expect(await cloudtrail.test(open())).toMatch(/LookupEvents answered in eu-west-1/);
    expect(await cloudtrail.test(open(sim.sessionConfig()))).toMatch(/LookupEvents answered/);
    const badSecret = await vendorRejection(
      cloudtrail.test(open({ ...sim.config(), secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' })),
    );
    expect(badSecret).toMatchObject({ kind: 'auth' });
    expect(badSecret.message).toContain('InvalidSignatureException');
    expect(badSecret.message).not.toContain('wJalrXUtnFEMI');
    expect(
      (await vendorRejection(cloudtrail.test(open({ ...sim.config(), access_key_id: 'AKIAIOSFODNN7EXAMPLE' }))))
        .message,
    ).toContain('UnrecognizedClientException');
    expect((await vendorRejection(cloudtrail.test(open({ ...sim.config(), region: 'us-west-2' })))).kind).toBe('auth');
    sim.expireTokens();
    const expired = await vendorRejection(cloudtrail.test(open(sim.sessionConfig())));
    expect(expired).toMatchObject({ kind: 'auth' });
    expect(expired.message).toContain('ExpiredTokenException');
  });

  it('has a config schema that needs the keys to collect and keeps the secrets write-only', () => {
    const registry = createPlatformRegistry([
      {
        name: cloudtrail.platform,
        display_name: cloudtrail.display_name,
        kind: 'pull',
        description: cloudtrail.description,
        config_schema: cloudtrail.config_schema,
      },
    ]);
    const platform = registry.get('aws_cloudtrail')!;
    expect(platform.secretFields.sort()).toEqual(['secret_access_key', 'session_token']);
    expect(platform.validate({ collect: true }).map((i) => i.location)).toEqual(
      expect.arrayContaining(['body/config/access_key_id', 'body/config/secret_access_key']),
    );
    expect(platform.validate({})).toEqual([]);
    const config: Record<string, unknown> = {
      collect: true,
      access_key_id: 'AKIAIOSFODNN7EXAMPLE',
      secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    };
    expect(platform.validate(config)).toEqual([]);
    expect(config.region).toBe('us-east-1');
    expect(platform.validate({ ...config, region: 'Mars' }).map((i) => i.location)).toEqual(['body/config/region']);
    expect(
      cloudtrail.streams.map((s) => [s.name, s.cursor, s.retentionDays, s.pageSize, s.maxWindowMs, s.settleMs]),
    ).toEqual([['cloudtrail', 'date', 90, 50, 3_600_000, 900_000]]);
  });

  it('collects the CloudTrail records, which normalize with the built-in mapping (valid OCSF)', async () => {
    const w = freshWindow(10);
    sim.addEvents('cloudtrail', 8, w);
    const { map } = stream('aws_cloudtrail', 'cloudtrail');
    const got = await collectWindow(cloudtrail, open(), 'cloudtrail', w.from, w.to);
    expect(got.events).toHaveLength(8);
    for (const raw of got.events) {
      expect(raw).toHaveProperty('eventVersion');
      const ocsf = map(raw);
      expect(ocsf.metadata.uid).toBe(raw.eventID);
      expect(ocsf.time).toBe(Date.parse(raw.eventTime as string));
    }
  });
});
