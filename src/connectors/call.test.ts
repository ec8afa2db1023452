import { describe, expect, it } from 'vitest';
import { leaks } from '../../test/support/leaks.js';
import { testRuntime } from '../../test/support/vendors/collect-all.js';
import { callVendor, redact } from './call.js';
import { VendorError } from './sdk.js';

const SECRET = 'abcd-secret-1234';
const target = { key: 'call-test', config: { api_key: SECRET }, secrets: [SECRET] };

describe('callVendor', () => {
  it('returns the value and the latency', async () => {
    const out = await callVendor(
      testRuntime(),
      target,
      async (ctx) => `config has ${Object.keys(ctx.config).join(',')}`,
    );
    expect(out).toMatchObject({ ok: true, value: 'config has api_key' });
    expect(out.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('turns a VendorError into a failure, secrets stripped', async () => {
    const out = await callVendor(testRuntime(), target, async () => {
      throw new VendorError('auth', `key ${SECRET} refused`, { status: 401 });
    });
    expect(out).toMatchObject({ ok: false, error: { kind: 'auth', status: 401, message: 'key [redacted] refused' } });
  });

  it('hides an echoed Basic credential cut by the vendor, and any encoding of the secret', () => {
    const basic = Buffer.from(`svc:${SECRET}`).toString('base64');
    for (let cut = 6; cut <= basic.length; cut++) {
      const out = redact(`401 {"echo":"Authorization: Basic ${basic.slice(0, cut)}"}`, [SECRET]);
      expect(leaks(out, SECRET), out).toEqual([]);
    }
    expect(leaks(redact(`bad key ${encodeURIComponent(SECRET).slice(0, 9)}…`, [SECRET]), SECRET)).toEqual([]);
  });

  it('reports a connector bug as connector_error, redacted', async () => {
    const out = await callVendor(testRuntime(), target, async () => {
      throw new TypeError(`cannot read ${SECRET}`);
    });
    expect(out).toMatchObject({
      ok: false,
      error: { kind: 'connector_error', message: 'TypeError: cannot read [redacted]', status: null },
    });
  });

  it('gives up at the deadline even when the connector ignores its signal', async () => {
    const out = await callVendor(testRuntime(), target, () => new Promise(() => {}), {
      timeoutMs: 50,
      maxRetryWaitMs: 0,
    });
    expect(out).toMatchObject({ ok: false, error: { kind: 'timeout', status: null } });
  });
});
