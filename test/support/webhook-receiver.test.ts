import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type FaultMode, type WebhookReceiver } from './webhook-receiver.js';

const open: WebhookReceiver[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function start(options: Parameters<typeof startWebhookReceiver>[0] = {}): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(options);
  open.push(r);
  return r;
}

function post(
  url: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/x-ndjson', ...headers }, signal });
}

const ev = (uid: string) => JSON.stringify({ class_uid: 1, metadata: { uid } });

describe('webhook receiver', () => {
  it('counts events of NDJSON, JSON array and gzip bodies by metadata.uid, with duplicates', async () => {
    const r = await start({ keepBodies: true });
    expect((await post(r.url, `${ev('a')}\n${ev('b')}\n`)).status).toBe(200);
    expect((await post(r.url, `[${ev('b')},${ev('c')}]`, { 'content-type': 'application/json' })).status).toBe(200);
    expect((await post(r.url, gzipSync(`${ev('c')}\n`), { 'content-encoding': 'gzip' })).status).toBe(200);
    expect(Object.fromEntries(r.received)).toEqual({ a: 1, b: 2, c: 2 });
    expect(r.stats()).toMatchObject({ requests: 3, accepted: 3, events: 5, unique: 3, duplicates: 2 });
    expect(r.requests[2]!.body).toBe(`${ev('c')}\n`);
    expect((await post(r.url, '{not json')).status).toBe(400);
    expect(r.stats().rejected).toBe(1);
  });

  it('counts by a custom key and waits for a number of distinct events', async () => {
    const r = await start({ keyOf: (e) => String((e as { n: number }).n % 2) });
    const waiting = r.waitForUnique(2, 2000);
    await post(r.url, '{"n":1}\n{"n":3}\n');
    await post(r.url, '{"n":2}\n');
    await waiting;
    expect(Object.fromEntries(r.received)).toEqual({ '1': 2, '0': 1 });
    await expect(r.waitForUnique(3, 50)).rejects.toThrow(/2 of 3 events/);
  });

  it('draws faults from a seed: the same seed, the same sequence', async () => {
    const modes: FaultMode[] = ['5xx', '429'];
    const run = async (seed: number) => {
      const r = await start({ seed, faults: { ratio: 0.5, modes, retryAfterSeconds: 4 } });
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) statuses.push((await post(r.url, `${ev(`e${i}`)}\n`)).status);
      return { statuses, r };
    };
    const a = await run(42);
    const b = await run(42);
    const c = await run(7);
    expect(a.statuses).toEqual(b.statuses);
    expect(a.statuses).not.toEqual(c.statuses);
    const failed = a.statuses.filter((s) => s !== 200).length;
    expect(failed).toBeGreaterThan(5);
    expect(failed).toBeLessThan(25);
    expect(a.statuses.every((s) => [200, 429, 500, 503].includes(s))).toBe(true);
    const stats = a.r.stats();
    expect(stats.faults['5xx'] + stats.faults['429']).toBe(failed);
    // Only accepted requests count their events.
    expect(stats.unique).toBe(30 - failed);
    const r429 = a.r.requests.find((q) => q.fault === '429');
    expect(r429?.status).toBe(429);
  });

  it('answers 429 with Retry-After, resets sockets and hangs requests', async () => {
    const r = await start({ faults: { ratio: 1, modes: ['429'], retryAfterSeconds: 9 } });
    const res = await post(r.url, `${ev('x')}\n`);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('9');

    r.setFaults({ ratio: 1, modes: ['reset'] });
    await expect(post(r.url, `${ev('x')}\n`)).rejects.toThrow();

    r.setFaults({ ratio: 1, modes: ['timeout'], hangMs: 100 });
    const started = Date.now();
    await expect(post(r.url, `${ev('x')}\n`)).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);

    r.setFaults({ ratio: 1, modes: ['timeout'] });
    await expect(post(r.url, `${ev('x')}\n`, {}, AbortSignal.timeout(100))).rejects.toThrow();
    r.setFaults(null);
    expect((await post(r.url, `${ev('x')}\n`)).status).toBe(200);
    expect(r.stats()).toMatchObject({ accepted: 1, unique: 1, faults: { '429': 1, reset: 1, timeout: 2, '5xx': 0 } });
    // close() must not wait for the request still hanging.
  });

  it('checks bearer tokens and HMAC signatures', async () => {
    const r = await start({ bearerToken: 'tkn', hmacSecret: 'sixteen-chars-secret' });
    const body = `${ev('s')}\n`;
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = `sha256=${createHmac('sha256', 'sixteen-chars-secret').update(`${ts}.${body}`).digest('hex')}`;
    expect(
      (await post(r.url, body, { authorization: 'Bearer tkn', 'x-weir-timestamp': ts, 'x-weir-signature': sig }))
        .status,
    ).toBe(200);
    expect(
      (await post(r.url, body, { authorization: 'Bearer nope', 'x-weir-timestamp': ts, 'x-weir-signature': sig }))
        .status,
    ).toBe(401);
    expect(
      (await post(r.url, `${body} `, { authorization: 'Bearer tkn', 'x-weir-timestamp': ts, 'x-weir-signature': sig }))
        .status,
    ).toBe(401);
    expect(
      (
        await post(r.url, body, {
          authorization: 'Bearer tkn',
          'x-weir-timestamp': String(Number(ts) - 3600),
          'x-weir-signature': sig,
        })
      ).status,
    ).toBe(401);
    expect(r.stats()).toMatchObject({ accepted: 1, rejected: 3 });
  });
});
