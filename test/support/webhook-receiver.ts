// A webhook receiver for sink tests, chaos tests and benchmarks: it counts every event it
// accepted (by a key, so duplicates from at-least-once redelivery show up), keeps a record
// of each request, and can misbehave on purpose (5xx, hang, reset, 429) at a seeded ratio.
import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** A self-signed certificate for 127.0.0.1, ::1 and localhost (test only, valid until 2126). */
export const TEST_TLS = Object.freeze({
  cert: `-----BEGIN CERTIFICATE-----
MIIBrjCCAVSgAwIBAgIUNXYXd7SDZtB7K+qVCQvdXW0or7YwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJd2Vpci10ZXN0MCAXDTI2MTEyMjAzNDUxMFoYDzIxMjYxMDI5
MDM0NTEwWjAUMRIwEAYDVQQDDAl3ZWlyLXRlc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAARV7g1wNHHlJ7GKTCYEuJlkB4Yi1AXmAHf5VdGT0U7dTMl3v9eWh9jn
6To/7xwondRtQD4iyShK5WNhUP+3CLcqo4GBMH8wHQYDVR0OBBYEFMxdhsJeE+P/
M7GRekxxUfUDksLOMB8GA1UdIwQYMBaAFMxdhsJeE+P/M7GRekxxUfUDksLOMA8G
A1UdEwEB/wQFMAMBAf8wLAYDVR0RBCUwI4cEfwAAAYcQAAAAAAAAAAAAAAAAAAAA
AYIJbG9jYWxob3N0MAoGCCqGSM49BAMCA0gAMEUCIGHkzDd8aCjf58m6HdeAYdth
9BZ8k3OALoy7RZl65mw1AiEAoKF4k2LTVmMVfkKWNrP7qNy5SDN/aTg2UpMsGoCV
CFA=
-----END CERTIFICATE-----
`,
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgPhTBGo0USdyPxg6o
MWytmzwQ3vs+n79r0g1yxiDH4qahRANCAARV7g1wNHHlJ7GKTCYEuJlkB4Yi1AXm
AHf5VdGT0U7dTMl3v9eWh9jn6To/7xwondRtQD4iyShK5WNhUP+3CLcq
-----END PRIVATE KEY-----
`,
});

export type FaultMode = '5xx' | 'timeout' | 'reset' | '429';

export interface WebhookFaults {
  /** Share of requests that fail, 0..1. */
  ratio: number;
  modes: FaultMode[];
  /** Retry-After of 429 answers (default 1). */
  retryAfterSeconds?: number;
  /** How long a 'timeout' request hangs before its socket is cut (default: until close()). */
  hangMs?: number;
}

export interface WebhookReceiverOptions {
  /** Key events are counted by; default metadata.uid, else the line itself. */
  keyOf?: (event: unknown, line: string) => string;
  /** Seed of the fault draw (default 1): the same seed gives the same fault sequence. */
  seed?: number;
  faults?: WebhookFaults | null;
  /** Keep each request's decoded body in `requests` (off by default: benchmarks send a lot). */
  keepBodies?: boolean;
  /** Require `Authorization: Bearer <token>`. */
  bearerToken?: string;
  /** Require HTTP basic authentication. */
  basicAuth?: { username: string; password: string };
  /** Verify X-Weir-Signature / X-Weir-Timestamp (401 when wrong). */
  hmacSecret?: string;
  /** Serve HTTPS with TEST_TLS. */
  tls?: boolean;
  /** Status of an accepted request (default 200). */
  status?: number;
  /** Delay before answering an accepted request. */
  responseDelayMs?: number;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Bytes on the wire (compressed when gzip). */
  bytes: number;
  /** Events in the body (0 when the request was cut before it was read). */
  events: number;
  /** Status answered; null when the socket was cut or the request hung. */
  status: number | null;
  fault?: FaultMode;
  /** Decoded body, when keepBodies. */
  body?: string;
}

export interface WebhookStats {
  requests: number;
  accepted: number;
  faults: Record<FaultMode, number>;
  rejected: number;
  /** Events in accepted requests, duplicates included. */
  events: number;
  unique: number;
  duplicates: number;
}

export interface WebhookReceiver {
  url: string;
  /** Accepted events by key, with how many times each arrived. */
  received: Map<string, number>;
  requests: ReceivedRequest[];
  setFaults(faults: WebhookFaults | null): void;
  /** Changes the delay before answering an accepted request (0: at once). */
  setResponseDelay(ms: number): void;
  stats(): WebhookStats;
  /** Resolves once `count` distinct events were accepted; rejects after timeoutMs. */
  waitForUnique(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** mulberry32: small, fast, seedable; good enough to spread faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function defaultKey(event: unknown, line: string): string {
  const uid = (event as { metadata?: { uid?: unknown } } | null)?.metadata?.uid;
  return typeof uid === 'string' ? uid : line;
}

/** Splits a body into events: a JSON array, or NDJSON (blank lines ignored). Throws on bad JSON. */
export function parseEvents(text: string): { event: unknown; line: string }[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  if (trimmed.startsWith('[')) {
    const arr = JSON.parse(trimmed) as unknown;
    if (!Array.isArray(arr)) throw new Error('not a JSON array');
    return arr.map((event) => ({ event, line: JSON.stringify(event) }));
  }
  return trimmed
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => ({ event: JSON.parse(line) as unknown, line }));
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function authProblem(req: IncomingMessage, raw: Buffer, o: WebhookReceiverOptions): string | null {
  const auth = header(req, 'authorization') ?? '';
  if (o.bearerToken && !safeEqual(auth, `Bearer ${o.bearerToken}`)) return 'bad bearer token';
  if (o.basicAuth) {
    const expected = `Basic ${Buffer.from(`${o.basicAuth.username}:${o.basicAuth.password}`).toString('base64')}`;
    if (!safeEqual(auth, expected)) return 'bad basic credentials';
  }
  if (o.hmacSecret) {
    const ts = header(req, 'x-weir-timestamp') ?? '';
    const sig = header(req, 'x-weir-signature') ?? '';
    if (!/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > 300) return 'stale or missing timestamp';
    const mac = createHmac('sha256', o.hmacSecret).update(`${ts}.`).update(raw).digest('hex');
    if (!safeEqual(sig, `sha256=${mac}`)) return 'bad signature';
  }
  return null;
}

export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const keyOf = options.keyOf ?? defaultKey;
  const random = seededRandom(options.seed ?? 1);
  let faults = options.faults ?? null;
  let responseDelayMs = options.responseDelayMs ?? 0;
  const received = new Map<string, number>();
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const faultCounts: Record<FaultMode, number> = { '5xx': 0, timeout: 0, reset: 0, '429': 0 };
  let accepted = 0;
  let rejected = 0;
  let events = 0;
  let waiters: { count: number; resolve: () => void }[] = [];

  function later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  }

  function pickFault(): FaultMode | undefined {
    if (!faults || faults.modes.length === 0 || faults.ratio <= 0) return undefined;
    if (random() >= faults.ratio) return undefined;
    return faults.modes[Math.floor(random() * faults.modes.length)];
  }

  function answer(
    res: ServerResponse,
    record: ReceivedRequest,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    record.status = status;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const record: ReceivedRequest = {
      method: req.method ?? '',
      path: req.url ?? '/',
      headers: req.headers,
      bytes: 0,
      events: 0,
      status: null,
    };
    requests.push(record);
    const fault = pickFault();
    if (fault) {
      record.fault = fault;
      faultCounts[fault]++;
    }
    if (fault === 'reset') {
      // Cut before the body is read: the client sees its request die mid-flight.
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      record.bytes = raw.length;
      if (fault === 'timeout') {
        if (faults?.hangMs !== undefined) later(faults.hangMs, () => req.socket.destroy());
        return;
      }
      if (fault === '5xx') return answer(res, record, random() < 0.5 ? 500 : 503, { error: 'injected server error' });
      if (fault === '429')
        return answer(
          res,
          record,
          429,
          { error: 'slow down' },
          { 'retry-after': String(faults?.retryAfterSeconds ?? 1) },
        );
      const problem = authProblem(req, raw, options);
      if (problem) {
        rejected++;
        return answer(res, record, 401, { error: problem });
      }
      if (req.method === 'HEAD' || req.method === 'OPTIONS' || req.method === 'GET') {
        record.status = 200;
        res.writeHead(200, { allow: 'POST, PUT, HEAD, OPTIONS' });
        res.end();
        return;
      }
      let parsed: { event: unknown; line: string }[];
      let text: string;
      try {
        text =
          (header(req, 'content-encoding') ?? '').toLowerCase() === 'gzip'
            ? gunzipSync(raw).toString('utf8')
            : raw.toString('utf8');
        parsed = parseEvents(text);
      } catch (err) {
        rejected++;
        return answer(res, record, 400, { error: `unreadable body: ${(err as Error).message}` });
      }
      if (options.keepBodies) record.body = text;
      record.events = parsed.length;
      const finish = () => {
        for (const { event, line } of parsed) {
          const key = keyOf(event, line);
          received.set(key, (received.get(key) ?? 0) + 1);
        }
        events += parsed.length;
        accepted++;
        answer(res, record, options.status ?? 200, { ok: true, events: parsed.length });
        if (waiters.length) {
          const ready = waiters.filter((w) => received.size >= w.count);
          waiters = waiters.filter((w) => received.size < w.count);
          for (const w of ready) w.resolve();
        }
      };
      if (responseDelayMs > 0) later(responseDelayMs, finish);
      else finish();
    });
  }

  const server: Server = options.tls
    ? createHttpsServer({ cert: TEST_TLS.cert, key: TEST_TLS.key }, handle)
    : createHttpServer(handle);
  // The raw TCP socket, for TLS too: destroying it ends the TLS session above it.
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    received,
    requests,
    setFaults(f) {
      faults = f;
    },
    setResponseDelay(ms) {
      responseDelayMs = ms;
    },
    stats() {
      let unique = 0;
      let duplicates = 0;
      for (const n of received.values()) {
        unique++;
        duplicates += n - 1;
      }
      return { requests: requests.length, accepted, faults: { ...faultCounts }, rejected, events, unique, duplicates };
    },
    waitForUnique(count, timeoutMs = 10_000) {
      if (received.size >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => {
          timers.delete(t);
          waiters = waiters.filter((w) => w !== waiter);
          reject(new Error(`webhook receiver: ${received.size} of ${count} events after ${timeoutMs} ms`));
        }, timeoutMs);
        timers.add(t);
        const waiter = {
          count,
          resolve: () => {
            clearTimeout(t);
            timers.delete(t);
            resolve();
          },
        };
        waiters.push(waiter);
      });
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      server.closeAllConnections?.();
      await closed;
    },
  };
}
