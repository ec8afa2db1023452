// A made-up vendor for the collection engine's tests: platform `test_vendor` with a date-cursor
// stream (`events`: since/until windows, offset page tokens) and an opaque-cursor stream
// (`alerts`: a resume sequence number, `more` while a page is full), both behind a bearer
// token. Its simulator can slow pages down, answer 429 / 5xx / 400, or fail every request
// until told otherwise, so the tests drive every path of a cycle. Register the connector
// (registerConnector(fakeVendorConnector)) before creating the test app.
import { configString, HOUR_MS, pullConfigSchema, VendorError, type Connector } from '../../../src/connectors/sdk.js';
import { defaultWindow, EventLog, Faults, header, listen, sendJson, spreadTimes, type SimEvent } from './sim-kit.js';
import type { VendorSimulator } from './types.js';

export const FAKE_PLATFORM = 'test_vendor';
export const FAKE_STREAMS = ['events', 'alerts'] as const;
export const FAKE_PAGE_SIZE = 10;

interface EventsAnswer {
  data: Record<string, unknown>[];
  next: string | null;
}
interface AlertsAnswer {
  data: Record<string, unknown>[];
  cursor: string | null;
  more: boolean;
}

export const fakeVendorConnector: Connector = {
  platform: FAKE_PLATFORM,
  display_name: 'Test Vendor',
  vendor: 'Test Vendor Inc.',
  description: 'A simulated vendor for the collection tests.',
  auth: 'bearer_token',
  config_schema: pullConfigSchema(
    {
      base_url: { type: 'string', minLength: 1, description: 'API base URL' },
      api_token: { type: 'string', minLength: 1, writeOnly: true, description: 'Bearer token' },
    },
    ['base_url', 'api_token'],
  ),
  streams: [
    {
      name: 'events',
      display_name: 'Events',
      description: 'Date-cursor stream',
      cursor: 'date',
      defaultWindowMs: HOUR_MS,
      intervalMs: 60_000,
      retentionDays: 7,
      pageSize: FAKE_PAGE_SIZE,
      maxWindowMs: 6 * HOUR_MS,
      settleMs: 1_000,
    },
    {
      name: 'alerts',
      display_name: 'Alerts',
      description: 'Opaque-cursor stream',
      cursor: 'opaque',
      defaultWindowMs: HOUR_MS,
      intervalMs: 60_000,
      retentionDays: 7,
      pageSize: FAKE_PAGE_SIZE,
      maxWindowMs: 6 * HOUR_MS,
      settleMs: 0,
    },
  ],
  async fetchPage(ctx, req) {
    const base = configString(ctx.config, 'base_url');
    const headers = { authorization: `Bearer ${configString(ctx.config, 'api_token')}` };
    if (req.stream === 'events') {
      if (!req.to) throw new VendorError('config', 'events is a date stream: a window end is required');
      const res = await ctx.http.request({
        url: `${base}/v1/events`,
        query: {
          since: req.from.toISOString(),
          until: req.to.toISOString(),
          limit: req.pageSize,
          after: req.cursor ?? undefined,
        },
        headers,
      });
      const body = res.json<EventsAnswer>();
      if (!Array.isArray(body.data)) throw new VendorError('invalid_response', 'events: no data array');
      return { events: body.data, keys: body.data.map((e) => String(e.id)), next: body.next };
    }
    if (req.stream === 'alerts') {
      const res = await ctx.http.request({
        url: `${base}/v1/alerts`,
        query: {
          cursor: req.cursor ?? undefined,
          since: req.cursor ? undefined : req.from.toISOString(),
          limit: req.pageSize,
        },
        headers,
      });
      const body = res.json<AlertsAnswer>();
      if (!Array.isArray(body.data)) throw new VendorError('invalid_response', 'alerts: no data array');
      return { events: body.data, keys: body.data.map((e) => String(e.id)), next: body.cursor, more: body.more };
    }
    throw new VendorError('config', `unknown stream ${req.stream}`);
  },
  async test(ctx) {
    await this.fetchPage(ctx, {
      stream: 'alerts',
      cursor: null,
      from: new Date(ctx.now().getTime() - 60_000),
      to: null,
      pageSize: 1,
    });
    return 'listed alerts';
  },
};

export interface FakeVendor extends VendorSimulator {
  /** Every data request waits this long before answering (a slow vendor, so a cycle can be caught mid-way). */
  pageDelayMs: number;
  /** The next `count` data requests answer 400 (a refusal the HTTP client does not retry). */
  badRequest(count: number): void;
  /** While set, every data request answers this status (500: retried then failed). */
  failing: number | null;
  readonly token: string;
}

export async function startFakeVendor(options: { token?: string; pageDelayMs?: number } = {}): Promise<FakeVendor> {
  const token = options.token ?? 'fake-vendor-token-0123456789';
  const logs = { events: new EventLog(), alerts: new EventLog() };
  const faults = new Faults();
  let badRequests = 0;
  let requests = 0;
  let seq = 0;
  let alertSeq = 0;
  const alertSeqOf = new Map<string, number>();

  const sim = await listen(async (req, res, url) => {
    const path = url.pathname;
    if (path !== '/v1/events' && path !== '/v1/alerts') return sendJson(res, 404, { error: 'not found' });
    requests += 1;
    if (fake.pageDelayMs > 0) await new Promise((r) => setTimeout(r, fake.pageDelayMs));
    if (header(req, 'authorization') !== `Bearer ${token}`) return sendJson(res, 401, { error: 'invalid token' });
    if (fake.failing !== null) return sendJson(res, fake.failing, { error: 'injected failure' });
    if (badRequests > 0) {
      badRequests -= 1;
      return sendJson(res, 400, { error: 'injected bad request' });
    }
    const fault = faults.next();
    if (fault?.kind === 'rate_limit')
      return sendJson(res, 429, { error: 'slow down' }, { 'retry-after': String(fault.seconds) });
    if (fault?.kind === 'server_error') return sendJson(res, fault.status, { error: 'unavailable' });
    const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? 10)));
    if (path === '/v1/events') {
      const since = Date.parse(url.searchParams.get('since') ?? '');
      const until = Date.parse(url.searchParams.get('until') ?? '');
      if (Number.isNaN(since) || Number.isNaN(until))
        return sendJson(res, 400, { error: 'since and until are required' });
      const offset = Number(url.searchParams.get('after') ?? 0);
      const inWindow = logs.events.all().filter((e) => e.timeMs >= since && e.timeMs < until);
      const page = inWindow.slice(offset, offset + limit);
      return sendJson(res, 200, {
        data: page.map((e) => e.raw),
        next: offset + limit < inWindow.length ? String(offset + limit) : null,
      });
    }
    // alerts: resume after a sequence number; the first call (no cursor) starts at `since`.
    const cursor = url.searchParams.get('cursor');
    const since = Date.parse(url.searchParams.get('since') ?? '');
    const after = cursor !== null ? Number(cursor) : null;
    const pending = logs.alerts
      .all()
      .filter((e) => (after !== null ? alertSeqOf.get(e.id)! > after : Number.isNaN(since) || e.timeMs >= since));
    pending.sort((a, b) => alertSeqOf.get(a.id)! - alertSeqOf.get(b.id)!);
    const page = pending.slice(0, limit);
    const last = page.length ? alertSeqOf.get(page[page.length - 1]!.id)! : after;
    return sendJson(res, 200, {
      data: page.map((e) => e.raw),
      cursor: last === null ? null : String(last),
      more: pending.length > limit,
    });
  });

  const fake: FakeVendor = {
    url: sim.url,
    platform: FAKE_PLATFORM,
    token,
    pageDelayMs: options.pageDelayMs ?? 0,
    failing: null,
    config: () => ({ collect: true, base_url: sim.url, api_token: token }),
    addEvents(stream, n, window = defaultWindow()) {
      const log = logs[stream as keyof typeof logs];
      if (!log) throw new Error(`unknown stream ${stream}`);
      return spreadTimes(n, window).map((timeMs) => {
        const id = `${stream}-${++seq}`;
        const event: SimEvent = {
          id,
          timeMs,
          raw: { id, time: new Date(timeMs).toISOString(), kind: stream, message: `${stream} event ${seq}` },
        };
        if (stream === 'alerts') alertSeqOf.set(id, ++alertSeq);
        log.add(event);
        return id;
      });
    },
    eventIds: (stream) => logs[stream as keyof typeof logs]?.ids() ?? [],
    rateLimit: (count, seconds) => faults.rateLimit(count, seconds),
    serverError: (count) => faults.serverError(count),
    badRequest: (count) => {
      badRequests = count;
    },
    expireTokens: () => undefined,
    get requests() {
      return requests;
    },
    close: () => sim.close(),
  };
  return fake;
}
