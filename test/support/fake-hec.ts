// A Splunk HTTP Event Collector that behaves like the real one, from Splunk's public
// documentation: `Authorization: Splunk <token>`, a body of concatenated JSON event objects
// (whitespace between them optional), gzip bodies, the health endpoint, and the real answers
// {text, code[, invalid-event-number]} with their HTTP statuses. Like HEC, events before the
// first invalid one of a request are indexed; the rest of the request is not.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
// HEC's documented status codes: the one table Weir's own HEC input answers with.
import { HEC_CODES, type HecCode } from '../../src/modules/hec/answers.js';
import { TEST_TLS } from './webhook-receiver.js';

export interface HecToken {
  token: string;
  /** Indexes the token may write to (HEC's allow list); any when absent. */
  indexes?: string[];
  /** Index used when an event names none (default "main"). */
  defaultIndex?: string;
  disabled?: boolean;
}

export interface HecEvent {
  event: unknown;
  time?: number;
  index: string;
  sourcetype?: string;
  source?: string;
  host?: string;
  fields?: Record<string, unknown>;
  token: string;
}

export interface HecRequest {
  path: string;
  headers: IncomingMessage['headers'];
  status: number;
  code: number;
}

export interface FakeHec {
  url: string;
  events: HecEvent[];
  requests: HecRequest[];
  /** The next n event requests answer 503 code 9 (server busy). */
  setBusy(n: number, retryAfterSeconds?: number): void;
  /** The health endpoint answers 503 (queues full) while true. */
  setUnhealthy(unhealthy: boolean): void;
  close(): Promise<void>;
}

/** Splits concatenated JSON objects ({...}{...} or one per line) into their texts; null when malformed at `error`. */
export function splitConcatenated(text: string): { parts: string[]; error: number | null } {
  const parts: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      i++;
      continue;
    }
    if (text[i] !== '{') return { parts, error: parts.length };
    let depth = 0;
    let inString = false;
    let j = i;
    for (; j < n; j++) {
      const ch = text[j];
      if (inString) {
        if (ch === '\\') j++;
        else if (ch === '"') inString = false;
      } else if (ch === '"') inString = true;
      else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) break;
      }
    }
    if (j >= n) return { parts, error: parts.length };
    parts.push(text.slice(i, j + 1));
    i = j + 1;
  }
  return { parts, error: null };
}

export async function startFakeHec(options: { tokens: (string | HecToken)[]; tls?: boolean }): Promise<FakeHec> {
  const tokens = new Map(
    options.tokens.map((t) => (typeof t === 'string' ? { token: t } : t)).map((t) => [t.token, t]),
  );
  const events: HecEvent[] = [];
  const requests: HecRequest[] = [];
  const sockets = new Set<Socket>();
  let busy = 0;
  let busyRetryAfter: number | undefined;
  let unhealthy = false;

  function reply(
    req: IncomingMessage,
    res: ServerResponse,
    code: HecCode | 404,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ): void {
    const [status, text] = code === 404 ? [404, 'The requested URL was not found on this server.'] : HEC_CODES[code];
    requests.push({ path: req.url ?? '', headers: req.headers, status, code });
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
    res.end(JSON.stringify({ text, code, ...extra }));
  }

  function ingest(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    const auth = req.headers.authorization;
    if (!auth) return reply(req, res, 2);
    const m = /^Splunk\s+(\S+)$/.exec(auth);
    if (!m) return reply(req, res, 3);
    const token = tokens.get(m[1]!);
    if (!token) return reply(req, res, 4);
    if (token.disabled) return reply(req, res, 1);
    if (busy > 0) {
      busy--;
      return reply(req, res, 9, {}, busyRetryAfter === undefined ? {} : { 'retry-after': String(busyRetryAfter) });
    }
    let text: string;
    try {
      text =
        (req.headers['content-encoding'] ?? '').toLowerCase() === 'gzip'
          ? gunzipSync(raw).toString('utf8')
          : raw.toString('utf8');
    } catch {
      return reply(req, res, 6, { 'invalid-event-number': 0 });
    }
    if (text.trim() === '') return reply(req, res, 5);
    const { parts, error } = splitConcatenated(text);
    const accepted: HecEvent[] = [];
    let failed: { code: HecCode; at: number } | null = null;
    for (let i = 0; i < parts.length && !failed; i++) {
      let obj: Record<string, unknown>;
      try {
        obj = JSON.parse(parts[i]!) as Record<string, unknown>;
      } catch {
        failed = { code: 6, at: i };
        break;
      }
      if (!('event' in obj)) failed = { code: 12, at: i };
      else if (obj.event === '' || obj.event === null) failed = { code: 13, at: i };
      else if (obj.time !== undefined && !Number.isFinite(Number(obj.time))) failed = { code: 6, at: i };
      else if (
        obj.fields !== undefined &&
        (typeof obj.fields !== 'object' || obj.fields === null || Array.isArray(obj.fields))
      )
        failed = { code: 15, at: i };
      else {
        const index = typeof obj.index === 'string' && obj.index ? obj.index : (token.defaultIndex ?? 'main');
        if (token.indexes && !token.indexes.includes(index)) failed = { code: 7, at: i };
        else {
          accepted.push({
            event: obj.event,
            time: obj.time === undefined ? undefined : Number(obj.time),
            index,
            sourcetype: obj.sourcetype as string | undefined,
            source: obj.source as string | undefined,
            host: obj.host as string | undefined,
            fields: obj.fields as Record<string, unknown> | undefined,
            token: token.token,
          });
        }
      }
    }
    if (!failed && error !== null) failed = { code: 6, at: error };
    events.push(...accepted);
    if (failed) return reply(req, res, failed.code, { 'invalid-event-number': failed.at });
    reply(req, res, 0);
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!.replace(/\/+$/, '');
      if (
        req.method === 'GET' &&
        (path === '/services/collector/health' || path === '/services/collector/health/1.0')
      ) {
        return reply(req, res, unhealthy ? 18 : 17);
      }
      if (
        req.method === 'POST' &&
        ['/services/collector', '/services/collector/event', '/services/collector/event/1.0'].includes(path)
      ) {
        return ingest(req, res, Buffer.concat(chunks));
      }
      reply(req, res, 404);
    });
  }

  const server: Server = options.tls
    ? createHttpsServer({ cert: TEST_TLS.cert, key: TEST_TLS.key }, handle)
    : createHttpServer(handle);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    events,
    requests,
    setBusy(n, retryAfterSeconds) {
      busy = n;
      busyRetryAfter = retryAfterSeconds;
    },
    setUnhealthy(u) {
      unhealthy = u;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
