// Running a live query (docs/live-queries.md): the integration's connector reads the query's
// time range from the vendor, page by page up to the page cap, with the vendor filter its
// query.ts rendered from the condition (connectors/query.ts decides what may be pushed down);
// each raw event goes through the stream's live mapping, the WHOLE condition is applied to the
// normalized event, and sort, fields, limit and aggregations are computed here as the store
// computes them. Vendor failures end the run failed with a reason a user can act on.
import { redact } from '../../connectors/call.js';
import { necessary, pushdownFields } from '../../connectors/query.js';
import type { ConnectorRuntime, ConnectorTarget } from '../../connectors/runtime.js';
import { VendorError, type Connector } from '../../connectors/sdk.js';
import type { NormalizedRecord } from '../../pipeline/envelope.js';
import type { CompiledMapping } from '../../pipeline/normalize/types.js';
import { compileField } from '../../pipeline/route/paths.js';
import { parseDuration, type PlannedQuery } from './query/definition.js';
import { SearchCancelled, type AggregationResult, type LiveExecutor } from './runner.js';
import type { StoredRow } from './store-query.js';

export interface LiveExecutorDeps {
  connectorFor(platform: string): Connector | undefined;
  runtime: ConnectorRuntime;
  /** The integration's connector target (config with secrets opened), or undefined when it is gone. */
  target(organizationId: number, integrationId: number): Promise<(ConnectorTarget & { platform: string }) | undefined>;
  /** The live mapping of the organization's stream (its own, else the built-in one). */
  mapping(
    organizationId: number,
    platform: string,
    stream: string,
  ): Promise<{ compiled: CompiledMapping; document: Record<string, unknown> } | undefined>;
  /** Most vendor pages one live query reads (WEIR_SEARCH_LIVE_MAX_PAGES). */
  maxPages: number;
  /** Longest Retry-After waited inside the query; a longer one fails it with the time to come back. */
  maxRetryWaitMs: number;
  now(): Date;
}

/** What the result says about the vendor side (`live` in the result). */
export interface LiveDetail {
  platform: string;
  stream: string;
  pushed_down: string | null;
  pages: number;
  page_cap: number;
  complete: boolean;
  fetched: number;
  unmapped: number;
  requests: number;
  rate_limited: number;
}

type Getter = (r: NormalizedRecord) => unknown;

function getter(path: string): { get: Getter; many: boolean } {
  return compileField(path, 'ocsf');
}

/** Orders values as the store's sort does for plain values: numbers, then text, then the rest by JSON. */
function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  const ja = JSON.stringify(a);
  const jb = JSON.stringify(b);
  return ja < jb ? -1 : ja > jb ? 1 : 0;
}

const absent = (v: unknown) => v === undefined || v === null;

export function sortRecords(records: NormalizedRecord[], sort: PlannedQuery['sort']): NormalizedRecord[] {
  const keys = sort.map((s) => ({ get: getter(s.field).get, desc: s.order === 'desc' }));
  return [...records].sort((x, y) => {
    for (const k of keys) {
      const a = k.get(x);
      const b = k.get(y);
      // asc nulls first, desc nulls last (the store's order).
      if (absent(a) || absent(b)) {
        if (absent(a) && absent(b)) continue;
        return absent(a) ? (k.desc ? 1 : -1) : k.desc ? -1 : 1;
      }
      const c = compare(a, b);
      if (c !== 0) return k.desc ? -c : c;
    }
    return x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
  });
}

function keyOf(v: unknown): string {
  return JSON.stringify(v ?? null);
}

export function aggregate(records: NormalizedRecord[], plan: PlannedQuery): AggregationResult[] {
  const out: AggregationResult[] = [];
  for (const a of plan.aggregations) {
    if (a.type === 'count') out.push({ type: 'count', value: records.length });
    else if (a.type === 'count_by') {
      const gets = a.fields.map((f) => getter(f).get);
      const buckets = new Map<string, { key: Record<string, unknown>; count: number }>();
      for (const r of records) {
        const values = gets.map((g) => g(r) ?? null);
        const k = keyOf(values);
        const b = buckets.get(k) ?? { key: Object.fromEntries(a.fields.map((f, i) => [f, values[i]])), count: 0 };
        b.count++;
        buckets.set(k, b);
      }
      out.push({
        type: 'count_by',
        fields: a.fields,
        buckets: [...buckets.values()].sort((x, y) => y.count - x.count).slice(0, a.size ?? 100),
      });
    } else if (a.type === 'top') {
      const { get, many } = getter(a.field);
      const counts = new Map<string, { value: unknown; count: number }>();
      for (const r of records) {
        const v = get(r);
        for (const value of many ? (Array.isArray(v) ? v : []) : [v]) {
          if (absent(value)) continue;
          const c = counts.get(keyOf(value)) ?? { value, count: 0 };
          c.count++;
          counts.set(keyOf(value), c);
        }
      }
      out.push({
        type: 'top',
        field: a.field,
        values: [...counts.values()].sort((x, y) => y.count - x.count).slice(0, a.size ?? 10),
      });
    } else {
      const ms = parseDuration(a.interval)!;
      const from = plan.from.getTime();
      const n = Math.ceil((plan.to.getTime() - from) / ms);
      const counts = new Array<number>(n).fill(0);
      for (const r of records) {
        const t = Number((r.ocsf as { time?: unknown }).time);
        const i = Math.floor((t - from) / ms);
        if (i >= 0 && i < n) counts[i]!++;
      }
      out.push({
        type: 'histogram',
        interval: a.interval,
        buckets: counts.map((count, i) => ({ start: new Date(from + i * ms).toISOString(), count })),
      });
    }
  }
  return out;
}

function rowOf(r: NormalizedRecord, fields: string[] | null): StoredRow {
  const t = Number((r.ocsf as { time?: unknown }).time);
  const row: StoredRow = {
    event_id: r.id,
    time: new Date(Number.isFinite(t) ? t : Date.parse(r.received_at)).toISOString(),
    organization_id: r.organization_id,
    integration_id: r.integration_id,
    stream: r.stream,
  };
  if (fields) row.fields = Object.fromEntries(fields.map((f) => [f, getter(f).get(r) ?? null]));
  else row.event = r.ocsf;
  return row;
}

/** Why a vendor call failed, in words a user can act on (secrets stripped). */
function vendorFailure(platform: string, err: VendorError, secrets: readonly string[]): Error {
  const hint: Record<string, string> = {
    auth: 'check the integration credentials (POST /api/integrations/{id}/test)',
    rate_limited: `the vendor asked to wait ${Math.ceil((err.details.retryAfterMs ?? 0) / 1000)} s; run the query again later`,
    bad_request: 'the vendor refused the request',
    config: 'the integration config is incomplete for vendor calls',
    unavailable: 'the vendor did not answer; try again later',
    invalid_response: 'the vendor answered something its API does not document',
    blocked_address: 'the vendor address is not allowed by the outbound network policy',
  };
  return new Error(
    `live query on ${platform} failed (vendor ${err.kind}${err.details.status ? `, HTTP ${err.details.status}` : ''}): ${redact(err.message, secrets)}; ${hint[err.kind] ?? ''}`.trim(),
  );
}

export function createLiveExecutors(deps: LiveExecutorDeps) {
  function executor(connector: Connector): LiveExecutor & { streams: string[] } {
    const spec = connector.query!;
    const streams = connector.streams.map((s) => s.name).filter((s) => spec.streams[s] !== undefined);
    return {
      streams,
      async run(run, input, plan, progress, signal) {
        const stream = input.stream ?? streams[0]!;
        const streamSpec = connector.streams.find((s) => s.name === stream);
        if (!streamSpec || !spec.streams[stream])
          throw new Error(`${connector.platform} has no stream ${stream} to query live`);
        const target = await deps.target(run.organization_id, input.integration_id!);
        if (!target) throw new Error('the integration no longer exists');
        const live = await deps.mapping(run.organization_id, connector.platform, stream);
        if (!live)
          throw new Error(
            `no live mapping for ${connector.platform} / ${stream}: publish one before querying the vendor`,
          );
        const filter = spec.render(
          stream,
          necessary(plan.condition, pushdownFields(spec.streams[stream]!, live.document, spec.absent), spec.or),
        );

        const open = deps.runtime.open(target, signal, { maxRetryWaitMs: deps.maxRetryWaitMs });
        const matched: NormalizedRecord[] = [];
        const detail: LiveDetail = {
          platform: connector.platform,
          stream,
          pushed_down: filter.text,
          pages: 0,
          page_cap: deps.maxPages,
          complete: false,
          fetched: 0,
          unmapped: 0,
          requests: 0,
          rate_limited: 0,
        };
        const receivedAt = deps.now();
        try {
          let cursor: string | null = null;
          while (detail.pages < deps.maxPages) {
            if (signal.aborted) throw new SearchCancelled();
            const page = await connector.fetchPage(open.ctx, {
              stream,
              cursor,
              from: plan.from,
              to: plan.to,
              pageSize: streamSpec.pageSize,
              ...(filter.text === null ? {} : { filter: filter.params }),
            });
            detail.pages++;
            detail.fetched += page.events.length;
            page.events.forEach((raw, i) => {
              const mapped = live.compiled.map(raw, { receivedAtMs: receivedAt.getTime() });
              if (!mapped.ok) {
                detail.unmapped++;
                return;
              }
              const record = {
                id: page.keys[i] ?? '',
                organization_id: run.organization_id,
                integration_id: input.integration_id!,
                stream,
                received_at: receivedAt.toISOString(),
                mapping_version_id: '',
                valid: true,
                ocsf: mapped.event,
              } as NormalizedRecord;
              if (plan.predicate(record)) matched.push(record);
            });
            const done = streamSpec.cursor === 'opaque' ? !page.more : page.next === null;
            if (done) {
              detail.complete = true;
              break;
            }
            cursor = page.next ?? cursor;
            await progress(detail.pages / deps.maxPages);
          }
        } catch (err) {
          if (err instanceof VendorError) throw vendorFailure(connector.platform, err, target.secrets);
          throw err;
        } finally {
          detail.requests = open.usage.requests;
          detail.rate_limited = open.usage.rateLimited;
          await open.close().catch(() => undefined);
        }
        const rows = sortRecords(matched, plan.sort)
          .slice(0, plan.limit)
          .map((r) => rowOf(r, plan.fields));
        return {
          matched: matched.length,
          result: { rows, aggregations: aggregate(matched, plan) },
          detail: { ...detail },
        };
      },
    };
  }

  const cache = new Map<string, LiveExecutor & { streams: string[] }>();
  /** The executor of a platform whose connector declares live queries; undefined otherwise. */
  return (platform: string): (LiveExecutor & { streams: string[] }) | undefined => {
    const connector = deps.connectorFor(platform);
    if (!connector?.query) return undefined;
    let e = cache.get(platform);
    if (!e) cache.set(platform, (e = executor(connector)));
    return e;
  };
}
