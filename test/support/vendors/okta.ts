// The Okta System Log API as Okta documents it (developer.okta.com, "System Log API",
// "Rate limits", "Error codes"):
//   GET /api/v1/logs?since&until&limit(1-1000, default 100)&sortOrder(ASCENDING|DESCENDING)&after
//   Authorization: SSWS <api token>; a wrong or missing token is 401 E0000011.
//   The answer is a JSON array of LogEvent objects; pages are chained by
//   `Link: <...>; rel="self"` and `<...&after=...>; rel="next"`. A bounded query (until given)
//   has no next link once the results are exhausted; a polling query (no until) always has one.
//   Every answer carries X-Rate-Limit-Limit/-Remaining/-Reset (epoch seconds of the reset);
//   over the limit it is 429 E0000047 with the same headers (Okta sends no Retry-After).
// Events are clones of src/connectors/okta/fixtures/system_log.json with a fresh uuid and
// `published`. The /__sim/ control endpoints (sim-kit.ts) serve other processes.
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EventPatch, FilteringSimulator, VendorSimulator } from './types.js';
import {
  decodeCursor,
  defaultWindow,
  encodeCursor,
  EventLog,
  Faults,
  header,
  listen,
  loadFixtures,
  sendJson,
  simControl,
  spreadTimes,
  uniqueIds,
  type SimEvent,
} from './sim-kit.js';

export interface OktaSimulatorOptions {
  /** The API token it accepts (default: a random one). */
  apiToken?: string;
  /** Requests per minute before a real 429 (Okta's per-endpoint limit; default high enough to never trigger). */
  rateLimitPerMinute?: number;
  /** Delay before each data answer, so a test can kill a collector mid-page. */
  latencyMs?: number;
}

export interface OktaSimulator extends VendorSimulator, FilteringSimulator {
  readonly apiToken: string;
}

const STREAMS = ['system_log'] as const;
const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;

function oktaError(code: string, summary: string, causes: string[] = []) {
  return {
    errorCode: code,
    errorSummary: summary,
    errorLink: code,
    errorId: `oae${randomBytes(11).toString('base64url')}`,
    errorCauses: causes.map((errorSummary) => ({ errorSummary })),
  };
}

/** Okta reads ISO 8601 timestamps; anything else is E0000001. */
function parseTime(v: string | null): number | null | 'invalid' {
  if (v === null) return null;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/.test(v)) return 'invalid';
  const t = Date.parse(v);
  return Number.isNaN(t) ? 'invalid' : t;
}

type Pred = (raw: Record<string, unknown>) => boolean;

/**
 * Okta's filter expressions as far as Weir sends them: `attr eq|sw|co "value"` joined by
 * and/or with parentheses, backslash escapes in strings. Compared case-insensitively (the
 * wider reading, which Weir's local filter must narrow). null when it cannot be read.
 */
export function parseOktaFilter(text: string): Pred | null {
  const tokens = text.match(/\s*("(?:[^"\\]|\\.)*"|\(|\)|[A-Za-z_][A-Za-z0-9_.]*)/gy);
  if (!tokens || tokens.join('').length !== text.length) return null;
  const toks = tokens.map((t) => t.trim());
  let i = 0;
  const valueAt = (raw: Record<string, unknown>, path: string) =>
    path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], raw);
  const primary = (): Pred | null => {
    if (toks[i] === '(') {
      i++;
      const inner = expr();
      if (toks[i++] !== ')') return null;
      return inner;
    }
    const [attr, op, lit] = [toks[i], toks[i + 1], toks[i + 2]];
    i += 3;
    if (!attr || !op || !lit?.startsWith('"') || !['eq', 'sw', 'co'].includes(op)) return null;
    const want = lit.slice(1, -1).replace(/\\(.)/g, '$1').toLowerCase();
    return (raw) => {
      const v = valueAt(raw, attr);
      if (typeof v !== 'string') return false;
      const got = v.toLowerCase();
      return op === 'eq' ? got === want : op === 'sw' ? got.startsWith(want) : got.includes(want);
    };
  };
  const chain = (next: () => Pred | null, word: string, join: (a: Pred, b: Pred) => Pred) => (): Pred | null => {
    let left = next();
    while (left && toks[i] === word) {
      i++;
      const right = next();
      if (!right) return null;
      const l: Pred = left;
      left = join(l, right);
    }
    return left;
  };
  const and = chain(primary, 'and', (a, b) => (r) => a(r) && b(r));
  const expr = chain(and, 'or', (a, b) => (r) => a(r) || b(r));
  const out = expr();
  return out && i === toks.length ? out : null;
}

export async function startOktaSimulator(options: OktaSimulatorOptions = {}): Promise<OktaSimulator> {
  const apiToken = options.apiToken ?? `00${randomBytes(20).toString('base64url')}`;
  const perMinute = options.rateLimitPerMinute ?? 1_000_000;
  const log = new EventLog();
  const faults = new Faults();
  const templates = loadFixtures('okta', 'system_log');
  const newId = uniqueIds(() => randomUUID());
  let requests = 0;
  const filters: string[] = [];
  let minute = { start: 0, used: 0 };

  function rateHeaders(remaining: number, resetEpochS: number): Record<string, string> {
    return {
      'x-rate-limit-limit': String(perMinute),
      'x-rate-limit-remaining': String(Math.max(0, remaining)),
      'x-rate-limit-reset': String(resetEpochS),
    };
  }

  async function logs(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    requests += 1;
    if (options.latencyMs) await sleep(options.latencyMs);
    const now = Date.now();
    if (header(req, 'authorization') !== `SSWS ${apiToken}`) {
      sendJson(res, 401, oktaError('E0000011', 'Invalid token provided'));
      return;
    }
    const fault = faults.next();
    if (fault?.kind === 'rate_limit') {
      sendJson(
        res,
        429,
        oktaError('E0000047', 'API call exceeded rate limit due to too many requests.'),
        rateHeaders(0, Math.ceil((now + fault.seconds * 1000) / 1000)),
      );
      return;
    }
    if (fault?.kind === 'server_error') {
      if (fault.status === 500) sendJson(res, 500, oktaError('E0000009', 'Internal Server Error'));
      else sendJson(res, 503, oktaError('E0000010', 'Service is in read only mode'));
      return;
    }
    if (now - minute.start >= 60_000) minute = { start: now - (now % 60_000), used: 0 };
    minute.used += 1;
    const reset = Math.ceil((minute.start + 60_000) / 1000);
    if (minute.used > perMinute) {
      sendJson(
        res,
        429,
        oktaError('E0000047', 'API call exceeded rate limit due to too many requests.'),
        rateHeaders(0, reset),
      );
      return;
    }
    const limits = rateHeaders(perMinute - minute.used, reset);

    const invalid: string[] = [];
    const since = parseTime(url.searchParams.get('since'));
    const until = parseTime(url.searchParams.get('until'));
    if (since === 'invalid') invalid.push('since: must be an ISO 8601 timestamp');
    if (until === 'invalid') invalid.push('until: must be an ISO 8601 timestamp');
    const limitRaw = url.searchParams.get('limit') ?? String(DEFAULT_LIMIT);
    const limit = Number(limitRaw);
    if (!/^\d+$/.test(limitRaw) || limit < 1 || limit > MAX_LIMIT)
      invalid.push(`limit: must be between 1 and ${MAX_LIMIT}`);
    const sortOrder = url.searchParams.get('sortOrder') ?? 'ASCENDING';
    if (sortOrder !== 'ASCENDING' && sortOrder !== 'DESCENDING')
      invalid.push('sortOrder: must be ASCENDING or DESCENDING');
    const filterRaw = url.searchParams.get('filter');
    let filter: ((raw: Record<string, unknown>) => boolean) | null = null;
    if (filterRaw !== null) {
      filters.push(filterRaw);
      filter = parseOktaFilter(filterRaw);
      if (!filter) invalid.push(`filter: invalid filter expression: ${filterRaw}`);
    }
    const afterRaw = url.searchParams.get('after');
    const after = afterRaw === null ? null : decodeCursor(afterRaw);
    if (afterRaw !== null && (after === null || after.length !== 2 || !/^\d+$/.test(after[0]!)))
      invalid.push('after: invalid cursor');
    if (invalid.length > 0 || since === 'invalid' || until === 'invalid') {
      sendJson(res, 400, oktaError('E0000001', `Api validation failed: ${invalid.join('; ')}`, invalid), limits);
      return;
    }
    // Okta's default lower bound is seven days back; a polling query runs up to now.
    const lower = since ?? now - 7 * 86_400_000;
    const upper = until ?? now;
    const ascending = sortOrder === 'ASCENDING';
    let matching = log.all().filter((e) => e.timeMs >= lower && e.timeMs < upper && (!filter || filter(e.raw)));
    if (!ascending) matching = [...matching].reverse();
    if (after) {
      const pos: SimEvent = { timeMs: Number(after[0]), id: after[1]!, raw: {} };
      matching = matching.filter((e) => (ascending ? EventLog.compare(e, pos) > 0 : EventLog.compare(e, pos) < 0));
    }
    const page = matching.slice(0, limit);
    const origin = `http://${header(req, 'host') ?? '127.0.0.1'}`;
    const self = new URL(`${url.pathname}${url.search}`, origin);
    const links = [`<${self.href}>; rel="self"`];
    const last = page[page.length - 1];
    const polling = until === null;
    if (matching.length > page.length || polling) {
      const next = new URL(self.href);
      if (last) next.searchParams.set('after', encodeCursor(last.timeMs, last.id));
      links.push(`<${next.href}>; rel="next"`);
    }
    sendJson(
      res,
      200,
      page.map((e) => e.raw),
      { ...limits, link: links.join(', ') },
    );
  }

  let closed = false;
  const server = await listen(async (req, res, url) => {
    if (simControl(sim, STREAMS, req, res, url)) return;
    if (url.pathname === '/api/v1/logs') {
      if (req.method !== 'GET') {
        sendJson(res, 405, oktaError('E0000022', 'The endpoint does not support the provided HTTP method'), {
          allow: 'GET',
        });
        return;
      }
      await logs(req, res, url);
      return;
    }
    sendJson(res, 404, oktaError('E0000007', `Not found: Resource not found: ${url.pathname} (Page)`));
  });

  function add(stream: string, n: number, window?: { from: Date; to: Date }, patch?: EventPatch): string[] {
    if (stream !== 'system_log') throw new Error(`okta simulator: no stream ${stream}`);
    return spreadTimes(n, window ?? defaultWindow()).map((timeMs, i) => {
      const id = newId();
      const raw = structuredClone(templates[i % templates.length]!);
      patch?.(raw, i);
      raw.uuid = id;
      raw.published = new Date(timeMs).toISOString();
      log.add({ id, timeMs, raw });
      return id;
    });
  }

  const sim: OktaSimulator = {
    url: server.url,
    platform: 'okta',
    apiToken,
    config: () => ({ collect: true, base_url: server.url, api_token: apiToken }),
    addEvents: (stream, n, window) => add(stream, n, window),
    addPatched: (stream, n, window, patch) => add(stream, n, window, patch),
    eventIds(stream) {
      if (stream !== 'system_log') throw new Error(`okta simulator: no stream ${stream}`);
      return log.ids();
    },
    rateLimit: (count, seconds) => faults.rateLimit(count, seconds),
    serverError: (count) => faults.serverError(count),
    expireTokens() {
      // SSWS tokens are static: nothing expires.
    },
    filters,
    get requests() {
      return requests;
    },
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
    },
  };
  return sim;
}
