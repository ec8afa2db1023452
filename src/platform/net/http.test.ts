import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetError, toNetError } from './errors.js';
import {
  BodyTooLargeError,
  createGuardedAgent,
  createGuardedFetch,
  createGuardedNodeAgents,
  createGuardedPool,
  readBody,
} from './http.js';
import { createNetPolicy } from './ssrf.js';

let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((_req, res) => res.end('hello'));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

const strict = createNetPolicy({ allowCidrs: [] });
const open = createNetPolicy({ allowCidrs: ['127.0.0.0/8'] });

async function refusal(p: Promise<unknown>): Promise<NetError> {
  const err = await p.then(
    () => expect.fail('the request went through'),
    (e: unknown) => e,
  );
  const found = toNetError(err);
  expect(found).toBeInstanceOf(NetError);
  return found;
}

describe('guarded dispatchers', () => {
  it('refuse a literal loopback address before connecting', async () => {
    const pool = createGuardedPool(`http://127.0.0.1:${port}`, strict);
    const err = await refusal(pool.request({ method: 'GET', path: '/' }));
    expect(err).toMatchObject({ kind: 'blocked_address' });
    expect(err.message).toMatch(/^refused to connect to 127\.0\.0\.1: loopback address \(allow it with /);
    await pool.close();
  });

  it('refuse a name that resolves to loopback (checked on the address dialled)', async () => {
    const agent = createGuardedAgent(strict);
    const err = await refusal(agent.request({ origin: `http://localhost:${port}`, method: 'GET', path: '/' }));
    expect(err.kind).toBe('blocked_address');
    await agent.close();
  });

  it('reach an allowed range, by name and by address', async () => {
    const agent = createGuardedAgent(open, { connections: 2 });
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const res = await agent.request({ origin, method: 'GET', path: '/' });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('hello');
    }
    await agent.close();
  });

  it('guard fetch (redirects not followed) and node:http agents alike', async () => {
    const blocked = createGuardedFetch(strict);
    expect((await refusal(blocked.fetch(`http://127.0.0.1:${port}/`))).kind).toBe('blocked_address');
    await blocked.close();
    const allowed = createGuardedFetch(open);
    expect(await (await allowed.fetch(`http://localhost:${port}/`)).text()).toBe('hello');
    await allowed.close();

    const viaNode = (agent: ReturnType<typeof createGuardedNodeAgents>['httpAgent'], host: string) =>
      new Promise<string>((ok, fail) =>
        get({ host, port, path: '/', agent }, (res) => res.setEncoding('utf8').on('data', ok)).on('error', fail),
      );
    const denied = createGuardedNodeAgents(strict);
    expect((await refusal(viaNode(denied.httpAgent, '127.0.0.1'))).kind).toBe('blocked_address');
    expect((await refusal(viaNode(denied.httpAgent, 'localhost'))).kind).toBe('blocked_address');
    denied.httpAgent.destroy();
    const permitted = createGuardedNodeAgents(open);
    expect(await viaNode(permitted.httpAgent, '127.0.0.1')).toBe('hello');
    permitted.httpAgent.destroy();
  });
});

describe('NetError', () => {
  const coded = (code: string) => Object.assign(new Error('x'), { code });

  it('classifies transport failures by code, an aborted signal first', () => {
    expect(toNetError(coded('ECONNREFUSED'))).toMatchObject({
      kind: 'connection',
      message: 'connection failed (ECONNREFUSED)',
    });
    expect(toNetError(coded('ENOTFOUND'))).toMatchObject({
      kind: 'dns',
      message: 'cannot resolve the host (ENOTFOUND)',
    });
    expect(toNetError(coded('UND_ERR_CONNECT_TIMEOUT'))).toMatchObject({
      kind: 'timeout',
      message: 'no answer within the time limit',
    });
    expect(toNetError(coded('CERT_HAS_EXPIRED'))).toMatchObject({ kind: 'tls' });
    expect(toNetError(new Error('boom'))).toMatchObject({ kind: 'connection', message: 'request failed (Error)' });
    expect(toNetError(coded('ECONNREFUSED'), AbortSignal.abort()).kind).toBe('timeout');
  });

  it('finds the guard error undici wrapped', () => {
    const guard = new NetError('blocked_address', 'refused');
    expect(toNetError(new TypeError('fetch failed', { cause: guard }))).toBe(guard);
  });
});

describe('readBody', () => {
  const body = () => Readable.from([Buffer.from('abcd'), Buffer.from('efgh')]);

  it('cuts at the cap and reads the rest away', async () => {
    const { bytes, size } = await readBody(body(), { maxBytes: 6, overflow: 'cut' });
    expect(bytes.toString()).toBe('abcdef');
    expect(size).toBe(8);
  });

  it('fails past the cap, or on an announced length over it', async () => {
    await expect(readBody(body(), { maxBytes: 6, overflow: 'fail' })).rejects.toBeInstanceOf(BodyTooLargeError);
    await expect(readBody(body(), { maxBytes: 100, overflow: 'fail', contentLength: '101' })).rejects.toThrow(
      'the answer is larger than the limit of 100 bytes',
    );
    expect((await readBody(body(), { maxBytes: 8, overflow: 'fail' })).bytes.toString()).toBe('abcdefgh');
  });
});
