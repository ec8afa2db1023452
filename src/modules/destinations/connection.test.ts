// POST /destinations/{id}/test against a real local HTTP server, through a fake sink type
// that connects the way real sinks do (the SSRF guard's resolve, then the request).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { DeliveryError, type SinkContext, type SinkType } from '../../pipeline/sinks/types.js';

const SECRET = 'probe-SECRET-9f8e7d6c';

const closed: string[] = [];

// Answers 200 to the right bearer token and 401 echoing the token otherwise (the test
// checks that an echoed credential is redacted).
const FAKE_HTTP: SinkType = {
  type: 'fake_http',
  title: 'Fake HTTP',
  description: 'GET {url}/health with a bearer token',
  configSchema: Type.Object({ url: Type.String() }, { additionalProperties: false }),
  credentialSchema: Type.Object({ token: Type.String() }, { additionalProperties: false }),
  credentialRequired: true,
  create(ctx: SinkContext) {
    return {
      send: async () => ({}),
      async test(signal) {
        const started = performance.now();
        const url = new URL(`${String(ctx.config.url)}/health`);
        await ctx.net.resolve(url.hostname);
        const res = await fetch(url, { headers: { authorization: `Bearer ${ctx.credential?.token ?? ''}` }, signal });
        const text = await res.text();
        if (res.status === 401) throw new DeliveryError('auth', `server answered 401: ${text}`, { statusCode: 401 });
        return {
          ok: res.ok,
          detail: `health answered ${res.status}`,
          latency_ms: performance.now() - started,
          ...(res.ok ? {} : { error_kind: 'http_5xx' as const }),
        };
      },
      close: async () => {
        closed.push(ctx.destinationId);
      },
    };
  },
};

let t: TestApp;
let server: Server;
let baseUrl: string;
let orgA: number;
let adminA: Principal;
const seen: string[] = [];

type Json = Record<string, unknown>;
const BASE = '/api/collectors/destinations';

async function makeDestination(
  app: TestApp,
  who: Principal,
  name: string,
  url: string,
  token = SECRET,
): Promise<string> {
  const res = await app.app.inject({
    method: 'POST',
    url: BASE,
    headers: who.headers,
    payload: { name, type: 'fake_http', config: { url }, credential: { token } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return String(res.json<Json>().id);
}

const probe = (app: TestApp, who: Principal, id: string) =>
  app.app.inject({ method: 'POST', url: `${BASE}/${id}/test`, headers: who.headers });

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(String(req.headers.authorization));
    if (req.headers.authorization === `Bearer ${SECRET}`) res.writeHead(200).end('ok');
    else res.writeHead(401).end(`bad token ${String(req.headers.authorization).slice(7)}`);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await createTestApp({
    env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' },
    captureLogs: true,
  });
  t.container.destinations.types.register(FAKE_HTTP);
  orgA = await createOrganization(t, 'Org A');
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
});
afterAll(async () => {
  await t?.close();
  await new Promise((ok) => server.close(ok));
});

describe('POST /destinations/{id}/test', () => {
  it('connects with the decrypted credential, closes the sink, and records the outcome in the credential audit', async () => {
    const id = await makeDestination(t, adminA, 'Good', baseUrl);
    seen.length = 0;
    const res = await probe(t, adminA, id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true, detail: 'health answered 200', latency_ms: expect.any(Number) });
    expect(seen).toEqual([`Bearer ${SECRET}`]);
    expect(closed).toContain(id);
    const audit = (
      await t.app.inject({ method: 'GET', url: `${BASE}/${id}/credential/audit`, headers: adminA.headers })
    ).json();
    expect(audit.items[0]).toMatchObject({
      operation_id: 'destinations.test',
      outcome: 'success',
      details: { ok: true },
    });
  });

  it('reports a refused credential as ok false with its kind, the echoed secret redacted', async () => {
    const id = await makeDestination(t, adminA, 'Wrong token', baseUrl, 'not-the-right-token-123');
    const res = await probe(t, adminA, id);
    expect(res.statusCode).toBe(200);
    const body = res.json<Json>();
    expect(body).toMatchObject({ ok: false, error_kind: 'auth' });
    expect(String(body.detail)).toContain('server answered 401');
    expect(res.body).not.toContain('not-the-right-token-123');
    const entry = await t.container.database.db
      .selectFrom('audit_log')
      .select('details')
      .where('operation_id', '=', 'destinations.test')
      .where('target_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(entry.details).toMatchObject({ ok: false, error_kind: 'auth' });
    expect(JSON.stringify(t.logs)).not.toContain('not-the-right-token-123');
  });

  it('reports an unreachable destination and a revoked credential without failing the request', async () => {
    const dead = createServer();
    await new Promise<void>((ok) => dead.listen(0, '127.0.0.1', ok));
    const port = (dead.address() as AddressInfo).port;
    await new Promise((ok) => dead.close(ok));
    const id = await makeDestination(t, adminA, 'Gone', `http://127.0.0.1:${port}`);
    expect((await probe(t, adminA, id)).json()).toMatchObject({ ok: false, error_kind: 'connection' });

    await t.app.inject({ method: 'POST', url: `${BASE}/${id}/credential/revoke`, headers: adminA.headers });
    expect((await probe(t, adminA, id)).json()).toMatchObject({
      ok: false,
      error_kind: 'config',
      detail: expect.stringContaining('no credential'),
    });
    expect((await probe(t, adminA, 'no-such-destination')).statusCode).toBe(404);
  });

  it('refuses addresses WEIR_OUTBOUND_ALLOW_CIDRS does not allow (SSRF guard), before connecting', async () => {
    // This app allows 127.0.0.1/32 only: the rest of loopback and the metadata address stay refused.
    const port = new URL(baseUrl).port;
    for (const url of [`http://127.0.0.2:${port}`, 'http://169.254.169.254', `http://[::1]:${port}`]) {
      const id = await makeDestination(t, adminA, `Blocked ${url}`, url);
      seen.length = 0;
      const res = await probe(t, adminA, id);
      expect(res.statusCode).toBe(200);
      expect(res.json(), url).toMatchObject({
        ok: false,
        error_kind: 'blocked_address',
        detail: expect.stringContaining('WEIR_OUTBOUND_ALLOW_CIDRS'),
      });
      expect(seen).toEqual([]);
    }
  });

  it('records the outcome for health: a failed test is the current error, a later success clears it (kept as history)', async () => {
    const id = await makeDestination(t, adminA, 'Recovering', baseUrl, 'stale-token-abcdef');
    const health = async () =>
      (await t.app.inject({ method: 'GET', url: `${BASE}/${id}/health`, headers: adminA.headers })).json<Json>();
    expect((await probe(t, adminA, id)).json()).toMatchObject({ ok: false });
    const failing = await health();
    expect(failing).toMatchObject({
      status: 'degraded',
      last_test_ok: false,
      current_error: expect.stringMatching(/^test: server answered 401/),
    });
    expect(JSON.stringify(failing)).not.toContain('stale-token-abcdef');

    const rotated = await t.app.inject({
      method: 'POST',
      url: `${BASE}/${id}/credential/rotate`,
      headers: adminA.headers,
      payload: { credential: { token: SECRET } },
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect((await probe(t, adminA, id)).json()).toMatchObject({ ok: true });
    const recovered = await health();
    // No event was delivered yet: idle rather than healthy, and nothing is failing.
    expect(recovered).toMatchObject({
      status: 'idle',
      current_error: null,
      last_test_ok: true,
      last_error: expect.stringMatching(/^test: /),
    });
    expect(Date.parse(String(recovered.last_test_at))).toBeGreaterThanOrEqual(
      Date.parse(String(recovered.last_error_at)),
    );
  });
});
