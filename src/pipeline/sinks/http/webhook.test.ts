import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ocsfEvents, sinkBatch, sinkContext, failure } from '../../../../test/support/sink-batch.js';
import { startWebhookReceiver, TEST_TLS, type WebhookReceiver } from '../../../../test/support/webhook-receiver.js';
import type { Credential } from '../../../core/credentials.js';
import type { Sink } from '../types.js';
import { httpSink } from './index.js';
import { batchId, signature } from './webhook.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function receiver(options: Parameters<typeof startWebhookReceiver>[0] = {}): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver({ keepBodies: true, ...options });
  cleanups.push(() => r.close());
  return r;
}

function sink(config: Record<string, unknown>, credential: Credential | null = null, allowCidrs?: string[]): Sink {
  const s = httpSink.create(sinkContext({ config, credential, allowCidrs, type: httpSink }));
  cleanups.push(() => s.close());
  return s;
}

/** A server that answers every request with the given status, headers and body. */
async function fixedServer(status: number, headers: Record<string, string> = {}, body = ''): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(status, headers);
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(
    () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`;
}

describe('http (webhook) sink', () => {
  it('posts the batch as NDJSON with a stable batch id', async () => {
    const r = await receiver();
    const events = ocsfEvents(3);
    const batch = sinkBatch(events);
    const s = sink({ url: `${r.url}/hook?src=weir`, headers: { 'X-Team': 'soc' } });
    expect(await s.send(batch, AbortSignal.timeout(5000))).toEqual({});
    const req = r.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hook?src=weir');
    expect(req.headers['content-type']).toBe('application/x-ndjson');
    expect(req.headers['x-team']).toBe('soc');
    expect(req.headers['x-weir-event-count']).toBe('3');
    expect(req.headers['x-weir-batch-id']).toBe(batchId(batch.ids));
    expect(req.headers['x-weir-batch-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(req.body).toBe(`${batch.lines.join('\n')}\n`);
    expect([...r.received.keys()].sort()).toEqual(batch.ids.slice().sort());
    // A resend of the same events carries the same id; different events another.
    await s.send(batch, AbortSignal.timeout(5000));
    expect(r.requests[1]!.headers['x-weir-batch-id']).toBe(req.headers['x-weir-batch-id']);
    expect(r.stats().duplicates).toBe(3);
    expect(batchId(sinkBatch(ocsfEvents(3)).ids)).not.toBe(req.headers['x-weir-batch-id']);
  });

  it('sends a gzipped JSON array with PUT, bearer token and secret headers', async () => {
    const r = await receiver({ bearerToken: 'tok-123456' });
    const batch = sinkBatch(ocsfEvents(2));
    const s = sink(
      { url: r.url, method: 'PUT', format: 'json', gzip: true },
      { bearer_token: 'tok-123456', secret_headers: { 'X-Api-Key': 'k-secret' } },
    );
    await s.send(batch, AbortSignal.timeout(5000));
    const req = r.requests[0]!;
    expect(req.method).toBe('PUT');
    expect(req.headers['content-encoding']).toBe('gzip');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-api-key']).toBe('k-secret');
    expect(req.body).toBe(`[${batch.lines.join(',')}]`);
    expect(r.received.size).toBe(2);
  });

  it('signs the body as sent with HMAC-SHA256', async () => {
    const secret = 'a-long-hmac-secret-value';
    const r = await receiver({ hmacSecret: secret });
    const batch = sinkBatch(ocsfEvents(2));
    await sink({ url: r.url, gzip: true }, { hmac_secret: secret }).send(batch, AbortSignal.timeout(5000));
    const req = r.requests[0]!;
    const ts = req.headers['x-weir-timestamp'] as string;
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(5);
    expect(req.status).toBe(200);
    // The receiver recomputed the HMAC over the gzipped bytes and accepted it; the recipe itself:
    expect(signature(secret, '1700000000', 'abc')).toBe(
      `sha256=${createHmac('sha256', secret).update('1700000000.abc').digest('hex')}`,
    );
    // A wrong secret is refused by the receiver: auth failure, secret not in the message.
    const err = await failure(
      sink({ url: r.url }, { hmac_secret: 'not-the-right-secret!' }).send(batch, AbortSignal.timeout(5000)),
    );
    expect(err.kind).toBe('auth');
    expect(err.retryable).toBe(false);
    expect(err.message).not.toContain('not-the-right-secret');
  });

  it('maps 401 to auth without leaking the credential', async () => {
    const r = await receiver({ basicAuth: { username: 'weir', password: 'right-password' } });
    const ok = sink({ url: r.url }, { basic_username: 'weir', basic_password: 'right-password' });
    await ok.send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000));
    expect(r.stats().accepted).toBe(1);
    const err = await failure(
      sink({ url: r.url }, { basic_username: 'weir', basic_password: 'wrong-password' }).send(
        sinkBatch(ocsfEvents(1)),
        AbortSignal.timeout(5000),
      ),
    );
    expect(err).toMatchObject({ kind: 'auth', statusCode: 401, retryable: false });
    expect(err.message).toMatch(/^HTTP 401/);
    expect(err.message).not.toContain('wrong-password');
  });

  it('maps 5xx, 429 with Retry-After, 408 and other 4xx', async () => {
    const r = await receiver({ faults: { ratio: 1, modes: ['5xx'] } });
    const e5 = await failure(sink({ url: r.url }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)));
    expect(e5.kind).toBe('http_5xx');
    expect(e5.retryable).toBe(true);
    expect([500, 503]).toContain(e5.statusCode);
    r.setFaults({ ratio: 1, modes: ['429'], retryAfterSeconds: 7 });
    const e429 = await failure(sink({ url: r.url }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)));
    expect(e429).toMatchObject({ kind: 'rate_limited', retryable: true, retryAfterMs: 7000, statusCode: 429 });
    expect(r.received.size).toBe(0);

    const dated = await fixedServer(429, { 'retry-after': new Date(Date.now() + 30_000).toUTCString() });
    const eDate = await failure(sink({ url: dated }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)));
    expect(eDate.retryAfterMs).toBeGreaterThan(25_000);
    expect(eDate.retryAfterMs).toBeLessThanOrEqual(30_000);

    const e408 = await failure(
      sink({ url: await fixedServer(408) }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)),
    );
    expect(e408).toMatchObject({ kind: 'http_4xx', retryable: true });
    const e422 = await failure(
      sink({ url: await fixedServer(422, {}, '{"error":"bad schema","token":"abc"}') }).send(
        sinkBatch(ocsfEvents(1)),
        AbortSignal.timeout(5000),
      ),
    );
    expect(e422).toMatchObject({ kind: 'http_4xx', retryable: false, statusCode: 422 });
    expect(e422.message).toContain('bad schema');
    expect(e422.message).not.toContain('abc');
    const e302 = await failure(
      sink({ url: await fixedServer(302, { location: 'http://elsewhere/' }) }).send(
        sinkBatch(ocsfEvents(1)),
        AbortSignal.timeout(5000),
      ),
    );
    expect(e302).toMatchObject({ kind: 'config', retryable: false });
  });

  it('times out on abort and maps resets and refused connections to connection', async () => {
    const r = await receiver({ faults: { ratio: 1, modes: ['timeout'] } });
    const started = Date.now();
    const et = await failure(sink({ url: r.url }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(200)));
    expect(et).toMatchObject({ kind: 'timeout', retryable: true });
    expect(Date.now() - started).toBeLessThan(3000);

    r.setFaults({ ratio: 1, modes: ['reset'] });
    const er = await failure(sink({ url: r.url }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)));
    expect(er).toMatchObject({ kind: 'connection', retryable: true });

    const closed = await startWebhookReceiver();
    const url = closed.url;
    await closed.close();
    const ec = await failure(sink({ url }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)));
    expect(ec).toMatchObject({ kind: 'connection', retryable: true });
    expect(ec.message).toContain('ECONNREFUSED');
  });

  it('refuses loopback when the SSRF guard does not allow it, by address and by name', async () => {
    const r = await receiver();
    const byIp = await failure(
      sink({ url: r.url }, null, []).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)),
    );
    expect(byIp).toMatchObject({ kind: 'blocked_address', retryable: false });
    const port = new URL(r.url).port;
    const byName = await failure(
      sink({ url: `http://localhost:${port}/` }, null, []).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)),
    );
    expect(byName.kind).toBe('blocked_address');
    const t = await sink({ url: r.url }, null, []).test(AbortSignal.timeout(5000));
    expect(t).toMatchObject({ ok: false, error_kind: 'blocked_address' });
    expect(r.requests).toHaveLength(0);
  });

  it('test() reports reachability, credential refusal and failures without throwing', async () => {
    const r = await receiver({ bearerToken: 'good-token' });
    const ok = await sink({ url: r.url }, { bearer_token: 'good-token' }).test(AbortSignal.timeout(5000));
    expect(ok.ok).toBe(true);
    expect(ok.detail).toMatch(/HEAD .* answered 200/);
    expect(ok.latency_ms).toBeGreaterThanOrEqual(0);
    expect(r.requests[0]!.method).toBe('HEAD');
    expect(r.received.size).toBe(0);

    const bad = await sink({ url: r.url }, { bearer_token: 'bad-token' }).test(AbortSignal.timeout(5000));
    expect(bad).toMatchObject({ ok: false, error_kind: 'auth' });
    expect(bad.detail).not.toContain('bad-token');

    // Deliveries succeed on 2xx only: a 404 is a failure that says what the server answered.
    const notFound = await sink({ url: await fixedServer(404) }).test(AbortSignal.timeout(5000));
    expect(notFound).toMatchObject({ ok: false, error_kind: 'http_4xx' });
    expect(notFound.detail).toMatch(/HEAD .* answered 404 Not Found: nothing at this path/);
    const down = await sink({ url: await fixedServer(503) }).test(AbortSignal.timeout(5000));
    expect(down).toMatchObject({ ok: false, error_kind: 'http_5xx' });
    const refused = await sink({ url: 'http://127.0.0.1:1/' }).test(AbortSignal.timeout(5000));
    expect(refused).toMatchObject({ ok: false, error_kind: 'connection' });
    const badUrl = await sink({ url: 'http://user:pw@example.com/' }).test(AbortSignal.timeout(5000));
    expect(badUrl).toMatchObject({ ok: false, error_kind: 'config' });
    expect(badUrl.detail).not.toContain('pw@');
  });

  it('test() fails on any redirect, saying where it points and that deliveries do not follow it', async () => {
    for (const status of [301, 302, 307, 308]) {
      const url = await fixedServer(status, { location: 'https://login.example.com/sso?ticket=secret-ticket' });
      const t = await sink({ url }).test(AbortSignal.timeout(5000));
      expect(t, String(status)).toMatchObject({ ok: false, error_kind: 'config' });
      expect(t.detail).toContain(`answered ${status} `);
      expect(t.detail).toContain('(redirect to https://login.example.com/sso)');
      expect(t.detail).toContain('deliveries do not follow redirects');
      expect(t.detail).not.toContain('secret-ticket');
    }
    const found = await sink({ url: await fixedServer(302, { location: 'https://x.example/' }) }).test(
      AbortSignal.timeout(5000),
    );
    expect(found.detail).toMatch(/answered 302 Found \(redirect to https:\/\/x\.example\/\)/);
    // Delivery says the same.
    const err = await failure(
      sink({ url: await fixedServer(302, { location: '/elsewhere' }) }).send(
        sinkBatch(ocsfEvents(1)),
        AbortSignal.timeout(5000),
      ),
    );
    expect(err).toMatchObject({ kind: 'config', retryable: false });
    expect(err.message).toBe(
      'HTTP 302 Found (redirect to /elsewhere): deliveries do not follow redirects; set the final URL',
    );
  });

  it('test() counts 405 on every safe method as reachable: the address only takes POST', async () => {
    const t = await sink({ url: await fixedServer(405) }).test(AbortSignal.timeout(5000));
    expect(t).toMatchObject({ ok: true });
    expect(t.detail).toMatch(/GET .* answered 405 Method Not Allowed: the address exists/);
  });

  it('falls back to OPTIONS then GET when HEAD is not allowed', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.method!);
      res.writeHead(req.method === 'GET' ? 200 : 405);
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(
      () =>
        new Promise((r) => {
          server.closeAllConnections();
          server.close(r);
        }),
    );
    const t = await sink({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` }).test(
      AbortSignal.timeout(5000),
    );
    expect(seen).toEqual(['HEAD', 'OPTIONS', 'GET']);
    expect(t).toMatchObject({ ok: true });
    expect(t.detail).toContain('GET');
  });

  it('verifies TLS with a custom CA and refuses an unknown certificate', async () => {
    const r = await receiver({ tls: true });
    await sink({ url: r.url, tls_ca: TEST_TLS.cert }).send(sinkBatch(ocsfEvents(2)), AbortSignal.timeout(5000));
    expect(r.received.size).toBe(2);
    const err = await failure(sink({ url: r.url }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)));
    expect(err.kind).toBe('tls');
    await sink({ url: r.url, tls_reject_unauthorized: false }).send(
      sinkBatch(ocsfEvents(1)),
      AbortSignal.timeout(5000),
    );
    expect(r.received.size).toBe(3);
  });

  it('refuses settings that cannot work with a config error', async () => {
    const bad = [
      { url: 'ftp://example.com/' },
      { url: 'not a url' },
      { url: 'http://127.0.0.1/', headers: { 'Content-Length': '1' } },
      { url: 'http://127.0.0.1/', headers: { 'X-Weir-Batch-Id': 'x' } },
      { url: 'http://127.0.0.1/', headers: { 'X-Ok': 'a\r\nInjected: 1' } },
    ];
    for (const config of bad) {
      const err = await failure(sink(config).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(1000)));
      expect(err).toMatchObject({ kind: 'config', retryable: false });
    }
  });
});
