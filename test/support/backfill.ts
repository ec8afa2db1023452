// An in-memory vendor for backfill tests: a connector ('test_backfill') whose two date
// streams hold one event every few hours over the last 40 days, paged by an offset token,
// with a log of every page asked for and a hook that runs before a page is answered
// (to rate-limit, abort or cancel at a chosen page).
import { registerConnector } from '../../src/connectors/index.js';
import {
  DAY_MS,
  HOUR_MS,
  pullConfigSchema,
  type Connector,
  type ConnectorContext,
  type FetchRequest,
  type Page,
} from '../../src/connectors/sdk.js';

export const BACKFILL_PLATFORM = 'test_backfill';

export interface PageCall {
  stream: string;
  from: Date;
  to: Date | null;
  cursor: string | null;
  pageSize: number;
}

export interface FakeVendor {
  connector: Connector;
  calls: PageCall[];
  /** Runs before the page is answered; may throw (a vendor error) or act (cancel, abort). */
  beforePage: ((call: PageCall, index: number, ctx: ConnectorContext) => Promise<void> | void) | null;
  /** The vendor's events of a stream in [from, to), oldest first. */
  eventsIn(stream: string, from: Date, to: Date): { id: string; ts: string; stream: string }[];
  reset(): void;
}

/** Every `stepHours` hours back from a fixed anchor; the anchor is the hour after the module loads. */
function generate(stream: string, stepHours: number, now: number): { id: string; ts: string; stream: string }[] {
  const anchor = Math.ceil(now / HOUR_MS) * HOUR_MS;
  const out: { id: string; ts: string; stream: string }[] = [];
  for (let t = anchor - 40 * DAY_MS; t < anchor; t += stepHours * HOUR_MS) {
    out.push({ id: `${stream}-${t}`, ts: new Date(t).toISOString(), stream });
  }
  return out;
}

export function fakeBackfillVendor(): FakeVendor {
  const now = Date.now();
  const data: Record<string, { id: string; ts: string; stream: string }[]> = {
    events: generate('events', 6, now),
    audit: generate('audit', 12, now),
  };
  const vendor: FakeVendor = {
    calls: [],
    beforePage: null,
    eventsIn(stream, from, to) {
      return (data[stream] ?? []).filter((e) => e.ts >= from.toISOString() && e.ts < to.toISOString());
    },
    reset() {
      vendor.calls.length = 0;
      vendor.beforePage = null;
    },
    connector: {
      platform: BACKFILL_PLATFORM,
      display_name: 'Backfill test vendor',
      vendor: 'Test',
      description: 'In-memory vendor for backfill tests',
      auth: 'api_token',
      config_schema: pullConfigSchema(
        { api_key: { type: 'string', minLength: 8, writeOnly: true }, partner: { type: 'boolean' } },
        ['api_key'],
      ),
      streams: [
        {
          name: 'events',
          display_name: 'Events',
          description: 'one every 6 h',
          cursor: 'date',
          defaultWindowMs: HOUR_MS,
          intervalMs: 60_000,
          retentionDays: 30,
          pageSize: 3,
          maxWindowMs: DAY_MS,
          settleMs: 0,
        },
        {
          name: 'audit',
          display_name: 'Audit',
          description: 'one every 12 h',
          cursor: 'date',
          defaultWindowMs: HOUR_MS,
          intervalMs: 60_000,
          retentionDays: 7,
          pageSize: 5,
          maxWindowMs: 2 * DAY_MS,
          settleMs: 0,
        },
      ],
      async fetchPage(ctx: ConnectorContext, req: FetchRequest): Promise<Page> {
        if (typeof ctx.config.api_key !== 'string') throw new Error('no api key');
        const call: PageCall = {
          stream: req.stream,
          from: req.from,
          to: req.to,
          cursor: req.cursor,
          pageSize: req.pageSize,
        };
        const index = vendor.calls.push(call) - 1;
        await vendor.beforePage?.(call, index, ctx);
        if (ctx.signal.aborted) throw new Error('aborted');
        const all = vendor.eventsIn(req.stream, req.from, req.to ?? new Date());
        const offset = req.cursor ? Number(req.cursor) : 0;
        const slice = all.slice(offset, offset + req.pageSize);
        const next = offset + req.pageSize < all.length ? String(offset + req.pageSize) : null;
        return { events: slice, keys: slice.map((e) => e.id), next };
      },
      async test() {
        return 'ok';
      },
    },
  };
  registerConnector(vendor.connector);
  return vendor;
}
