// What the vendor simulators share: a loopback server, per-stream event logs built from the
// connector's fixtures, injected faults (429, 5xx) and the /__sim control endpoints that let
// a test in another process (the SIGKILL kill test) add events and read the ids back.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { VendorSimulator } from './types.js';

export type Raw = Record<string, unknown>;

export interface SimEvent {
  /** The vendor id the connector reports as the event's key. */
  id: string;
  timeMs: number;
  raw: Raw;
}

/** The connector's fixtures of a stream, the templates simulated events are cloned from. */
export function loadFixtures(platform: string, stream: string): Raw[] {
  const file = new URL(`../../../src/connectors/${platform}/fixtures/${stream}.json`, import.meta.url);
  return JSON.parse(readFileSync(file, 'utf8')) as Raw[];
}

/** The default window of addEvents: the last 30 minutes, ending 2 minutes ago (older than any settle delay). */
export function defaultWindow(now = Date.now()): { from: Date; to: Date } {
  return { from: new Date(now - 32 * 60_000), to: new Date(now - 2 * 60_000) };
}

/** n timestamps spread evenly over [from, to). */
export function spreadTimes(n: number, window: { from: Date; to: Date }): number[] {
  const from = window.from.getTime();
  const span = window.to.getTime() - from;
  if (!(span > 0)) throw new Error('addEvents: window.to must be after window.from');
  return Array.from({ length: n }, (_, i) => from + Math.floor((i * span) / n));
}

/** One stream's events, kept oldest first (time, then id) as vendors sort them. */
export class EventLog {
  private readonly events: SimEvent[] = [];

  static compare(a: SimEvent, b: SimEvent): number {
    return a.timeMs - b.timeMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }

  add(event: SimEvent): void {
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (EventLog.compare(this.events[mid]!, event) <= 0) lo = mid + 1;
      else hi = mid;
    }
    this.events.splice(lo, 0, event);
  }

  all(): readonly SimEvent[] {
    return this.events;
  }

  ids(): string[] {
    return this.events.map((e) => e.id);
  }
}

/** Faults injected by rateLimit()/serverError(), consumed one per data request in that order. */
export class Faults {
  private rate = { count: 0, seconds: 0 };
  private errors = 0;
  private errorSeq = 0;

  rateLimit(count: number, seconds: number): void {
    this.rate = { count, seconds };
  }

  serverError(count: number): void {
    this.errors = count;
  }

  next(): { kind: 'rate_limit'; seconds: number } | { kind: 'server_error'; status: 500 | 503 } | null {
    if (this.rate.count > 0) {
      this.rate.count -= 1;
      return { kind: 'rate_limit', seconds: this.rate.seconds };
    }
    if (this.errors > 0) {
      this.errors -= 1;
      this.errorSeq += 1;
      return { kind: 'server_error', status: this.errorSeq % 2 === 1 ? 500 : 503 };
    }
    return null;
  }
}

/** Ids the simulator never hands out twice. */
export function uniqueIds(make: () => string): () => string {
  const seen = new Set<string>();
  return () => {
    for (;;) {
      const id = make();
      if (!seen.has(id)) {
        seen.add(id);
        return id;
      }
    }
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

export async function readBody(req: IncomingMessage, limit = 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new Error('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

/** A node:http server on 127.0.0.1, port 0. A handler that throws answers a plain 500 (a simulator bug, visible in the test). */
export async function listen(handler: Handler): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    Promise.resolve()
      .then(() => handler(req, res, url))
      .catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { simulator_error: String(err) });
        else res.destroy();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        // Clients keep connections alive; close them so close() does not wait for their timeout.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function intParam(url: URL, name: string, fallback: number): number {
  const v = url.searchParams.get(name);
  if (v === null) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer`);
  return n;
}

/**
 * The control endpoints under /__sim/ (no auth: loopback test servers only). Answers true when
 * the request was one of them.
 *   GET  /__sim/ids[?stream=]                      -> {<stream>: [ids oldest first]}
 *   POST /__sim/events?stream&n[&from&to]          -> {ids}
 *   POST /__sim/rate-limit?count&seconds           -> {}
 *   POST /__sim/server-error?count                 -> {}
 *   GET  /__sim/stats                              -> {requests}
 */
export function simControl(
  sim: VendorSimulator,
  streams: readonly string[],
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): boolean {
  if (!url.pathname.startsWith('/__sim/')) return false;
  try {
    const action = `${req.method} ${url.pathname.slice('/__sim/'.length)}`;
    const stream = url.searchParams.get('stream');
    if (stream !== null && !streams.includes(stream)) throw new Error(`unknown stream ${stream}`);
    if (action === 'GET ids') {
      sendJson(res, 200, Object.fromEntries((stream ? [stream] : streams).map((s) => [s, sim.eventIds(s)])));
    } else if (action === 'POST events') {
      const from = url.searchParams.get('from');
      const to = url.searchParams.get('to');
      const window = from && to ? { from: new Date(from), to: new Date(to) } : undefined;
      sendJson(res, 200, { ids: sim.addEvents(stream ?? streams[0]!, intParam(url, 'n', 1), window) });
    } else if (action === 'POST rate-limit') {
      sim.rateLimit(intParam(url, 'count', 1), intParam(url, 'seconds', 1));
      sendJson(res, 200, {});
    } else if (action === 'POST server-error') {
      sim.serverError(intParam(url, 'count', 1));
      sendJson(res, 200, {});
    } else if (action === 'GET stats') {
      sendJson(res, 200, { requests: sim.requests });
    } else {
      sendJson(res, 404, { detail: `no simulator control ${action}` });
    }
  } catch (err) {
    sendJson(res, 400, { detail: (err as Error).message });
  }
  return true;
}

/** The first value of a request header. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** A cursor token: base64 of its parts joined by "|" (GitHub's audit-log cursors look like this). */
export function encodeCursor(...parts: (string | number)[]): string {
  return Buffer.from(parts.join('|'), 'utf8').toString('base64');
}

export function decodeCursor(token: string): string[] | null {
  const text = Buffer.from(token, 'base64').toString('utf8');
  const parts = text.split('|');
  return parts.length >= 2 && parts.every((p) => p !== '') ? parts : null;
}
