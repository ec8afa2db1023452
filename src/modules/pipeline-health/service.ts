// Pipeline health per integration, from stored data only (no vendor call): collection per
// stream (collector_state), quarantine, new fields (drift) and events in. Cached 60 s: the
// all-integrations answer per caller (the key carries the caller and its scope, so a
// changed scope never reads another scope's answer), the single answer per integration,
// shared by everyone who may read that integration (the scope check runs before the cache).
import { compileCollectionFilters } from '../../connectors/filters.js';
import type { Connector, StreamSpec } from '../../connectors/sdk.js';
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { errors } from '../../core/errors.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import type { CachePort } from '../../platform/cache/port.js';
import type {
  CounterRow,
  HealthIntegrationRow,
  NewFieldRow,
  PipelineHealthStore,
  QuarantineCount,
  StateRow,
} from './store.js';

export const CACHE_TTL_MS = 60_000;
/** Watermark lag (or, for opaque cursors, time since the last success) above which a stream is lagging: the spec's alert threshold, or three intervals when longer. */
export const LAGGING_AFTER_SECONDS = 1_800;
/** A recorded gap degrades the integration this long after it was detected; it is reported as long as the state keeps it. */
const RECENT_GAP_MS = 7 * 86_400_000;
const DAY_MS = 86_400_000;

export type StreamStatus = 'ok' | 'lagging' | 'failing' | 'capped' | 'idle' | 'never_run';
export type OverallStatus = 'healthy' | 'degraded' | 'failing' | 'idle' | 'inactive';

export interface StreamHealth {
  stream: string;
  status: StreamStatus;
  cursor: 'date' | 'opaque' | null;
  watermark_at: Date | null;
  lag_seconds: number | null;
  last_run_at: Date | null;
  last_success_at: Date | null;
  consecutive_failures: number;
  last_run_capped: boolean;
  last_error: string | null;
  last_error_at: Date | null;
  gap: { from: Date; to: Date | null; recorded: boolean; detected_at: Date | null } | null;
}

export interface PipelineHealthDeps {
  store: PipelineHealthStore;
  cache: CachePort;
  clock: Clock;
  connectorFor(platform: string): Connector | undefined;
  /** Collector setting default_interval_seconds, for streams no connector describes. */
  defaultIntervalSeconds(): Promise<number>;
  ttlMs?: number;
}

const seconds = (ms: number) => Math.max(0, Math.floor(ms / 1000));

function groupBy<T extends { integration_id: number }>(rows: T[]): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const r of rows) {
    const list = out.get(r.integration_id);
    if (list) list.push(r);
    else out.set(r.integration_id, [r]);
  }
  return out;
}

/** The cursor-lag rules of docs/collection.md applied to one state row (or its absence). */
function streamHealth(
  now: Date,
  name: string,
  state: StateRow | undefined,
  spec: StreamSpec | undefined,
  collecting: boolean,
  intervalMs: number,
): StreamHealth {
  const watermark = state?.watermark_at ?? null;
  const lag = watermark ? seconds(now.getTime() - watermark.getTime()) : null;
  let gap: StreamHealth['gap'] = null;
  const retentionLimit = spec ? now.getTime() - spec.retentionDays * DAY_MS : undefined;
  if (watermark && retentionLimit !== undefined && watermark.getTime() < retentionLimit) {
    // The vendor no longer holds [watermark, now - retention): the next cycle will skip it.
    gap = { from: watermark, to: new Date(retentionLimit), recorded: false, detected_at: null };
  } else if (state?.gap_from) {
    gap = { from: state.gap_from, to: state.gap_to, recorded: true, detected_at: state.gap_detected_at };
  }
  const threshold = Math.max(LAGGING_AFTER_SECONDS, seconds(3 * intervalMs));
  const sinceSuccess = state?.last_success_at ? seconds(now.getTime() - state.last_success_at.getTime()) : null;
  let status: StreamStatus;
  if (!collecting) status = 'idle';
  else if (!state || (state.last_run_at === null && state.last_success_at === null && state.consecutive_failures === 0))
    status = 'never_run';
  else if (state.consecutive_failures > 0) status = 'failing';
  else if (
    (lag !== null && lag > threshold) ||
    (lag === null && sinceSuccess !== null && sinceSuccess > threshold) ||
    (gap !== null && !gap.recorded)
  )
    status = 'lagging';
  else if (state.last_run_capped) status = 'capped';
  else status = 'ok';
  return {
    stream: name,
    status,
    cursor: spec?.cursor ?? null,
    watermark_at: watermark,
    lag_seconds: lag,
    last_run_at: state?.last_run_at ?? null,
    last_success_at: state?.last_success_at ?? null,
    consecutive_failures: state?.consecutive_failures ?? 0,
    last_run_capped: state?.last_run_capped ?? false,
    last_error: state?.last_error ?? null,
    last_error_at: state?.last_error_at ?? null,
    gap,
  };
}

export function createPipelineHealthService(deps: PipelineHealthDeps) {
  const { store, cache, clock } = deps;
  const ttl = deps.ttlMs ?? CACHE_TTL_MS;

  function enabledStreams(row: HealthIntegrationRow, connector: Connector): Set<string> {
    const selected = connector.streamsFor ? new Set(connector.streamsFor(row.config ?? {})) : undefined;
    const streams = connector.streams.filter((s) => !selected || selected.has(s.name));
    try {
      const { streamEnabled } = compileCollectionFilters(row.collection_filters);
      return new Set(streams.filter((s) => streamEnabled(s.name)).map((s) => s.name));
    } catch {
      // Filters that no longer compile: collection schedules every stream (and fails visibly).
      return new Set(streams.map((s) => s.name));
    }
  }

  function integrationHealth(
    now: Date,
    row: HealthIntegrationRow,
    parts: { states: StateRow[]; quarantine: QuarantineCount[]; fields: NewFieldRow[]; counters: CounterRow[] },
    defaultIntervalSeconds: number,
    sinceDay: string,
  ) {
    const connector = deps.connectorFor(row.platform);
    const collecting =
      Boolean(connector) && row.is_active && row.config?.collect === true && row.config?.partner !== true;
    const states = new Map(parts.states.map((s) => [s.stream, s]));
    const names = new Set<string>(collecting && connector ? enabledStreams(row, connector) : []);
    for (const s of parts.states) names.add(s.stream);
    const ownInterval =
      typeof row.config?.interval_seconds === 'number' ? row.config.interval_seconds * 1000 : undefined;
    const streams = [...names].sort().map((name) => {
      const spec = connector?.streams.find((s) => s.name === name);
      const interval = ownInterval ?? spec?.intervalMs ?? defaultIntervalSeconds * 1000;
      return streamHealth(now, name, states.get(name), spec, collecting, interval);
    });

    const byKind: Record<string, number> = {};
    let open = 0;
    let recent = 0;
    for (const q of parts.quarantine) {
      if (q.open > 0) byKind[q.error_kind] = q.open;
      open += q.open;
      recent += q.recent;
    }
    const byStream: Record<string, number> = {};
    let eventsIn = 0;
    let lastEventAt: Date | null = null;
    for (const c of parts.counters) {
      byStream[c.stream] = c.events_in;
      eventsIn += c.events_in;
      if (c.last_event_at && (!lastEventAt || c.last_event_at > lastEventAt)) lastEventAt = c.last_event_at;
    }
    const newFields = {
      count: parts.fields[0]?.total ?? 0,
      paths: parts.fields.map((f) => ({ stream: f.stream, path: f.path })),
    };

    const issues: string[] = [];
    for (const s of streams) {
      if (s.status === 'failing')
        issues.push(
          `stream ${s.stream}: ${s.consecutive_failures} failed cycle(s) in a row${s.last_error ? `: ${s.last_error}` : ''}`,
        );
      if (s.status === 'lagging')
        issues.push(
          `stream ${s.stream}: lagging (${s.lag_seconds ?? seconds(now.getTime() - (s.last_success_at?.getTime() ?? now.getTime()))} s behind)`,
        );
      if (s.status === 'capped')
        issues.push(`stream ${s.stream}: the last cycle stopped at its ceiling with backlog left`);
      if (s.gap)
        issues.push(
          `stream ${s.stream}: ${s.gap.recorded ? 'data lost' : 'losing data'} between ${s.gap.from.toISOString()} and ${s.gap.to?.toISOString() ?? 'now'} (older than the vendor's retention)`,
        );
    }
    if (recent > 0) issues.push(`${recent} event(s) quarantined in the last 24 h`);
    if (newFields.count > 0) issues.push(`${newFields.count} new field(s) not mapped yet`);
    const recentGap = streams.some(
      (s) =>
        s.gap && (!s.gap.recorded || !s.gap.detected_at || now.getTime() - s.gap.detected_at.getTime() < RECENT_GAP_MS),
    );
    let status: OverallStatus;
    if (!row.is_active) status = 'inactive';
    else if (streams.some((s) => s.status === 'failing')) status = 'failing';
    else if (streams.some((s) => s.status === 'lagging' || s.status === 'capped') || recentGap || recent > 0)
      status = 'degraded';
    else if (eventsIn === 0 && !streams.some((s) => s.status === 'ok')) status = 'idle';
    else status = 'healthy';

    return {
      integration_id: row.id,
      name: row.name,
      platform: row.platform,
      organization_id: row.organization_id,
      is_active: row.is_active,
      status,
      issues,
      collection: { mode: connector ? ('pull' as const) : ('push' as const), collecting, streams },
      quarantine: { open, last_24h: recent, by_error_kind: byKind },
      new_fields: newFields,
      events_in: { since_day: sinceDay, total: eventsIn, by_stream: byStream, last_event_at: lastEventAt },
    };
  }

  async function compute(scope: Scope, only?: number) {
    const now = clock.now();
    const since = new Date(now.getTime() - DAY_MS);
    const sinceDay = since.toISOString().slice(0, 10);
    const rows = await store.integrations(scope, only);
    const [states, quarantine, fields, counters, defaultInterval] = [
      groupBy(await store.states(scope, only)),
      groupBy(await store.quarantine(scope, only, since)),
      groupBy(await store.newFields(scope, only)),
      groupBy(await store.counters(scope, only, sinceDay)),
      await deps.defaultIntervalSeconds(),
    ];
    const items = rows.map((row) =>
      integrationHealth(
        now,
        row,
        {
          states: states.get(row.id) ?? [],
          quarantine: quarantine.get(row.id) ?? [],
          fields: fields.get(row.id) ?? [],
          counters: counters.get(row.id) ?? [],
        },
        defaultInterval,
        sinceDay,
      ),
    );
    return { cached_at: now, items };
  }

  /** The cached value, or computes and caches it; a cache that fails only costs a recomputation. */
  async function cached<T>(key: string, make: () => Promise<T>): Promise<T> {
    const hit = await cache.get<T>(key).catch(() => undefined);
    if (hit !== undefined) return hit;
    const value = await make();
    await cache.set(key, value, ttl).catch(() => undefined);
    return value;
  }

  return {
    async list(actor: Actor) {
      const scope = scopeOf(actor);
      const scopeKey = scope.global ? 'global' : [...scope.organizationIds].sort((a, b) => a - b).join(',');
      return cached(`pipeline-health:list:${actor.kind}:${actor.id}:${scopeKey}`, () => compute(scope));
    },

    async get(scope: Scope, integrationId: number) {
      const [row] = await store.integrations(scope, integrationId);
      if (!row) throw errors.notFound('Integration');
      // Computed within the integration's own organization: the same answer for every reader.
      return cached(`pipeline-health:integration:${row.id}`, async () => {
        const { cached_at, items } = await compute({ global: false, organizationIds: [row.organization_id] }, row.id);
        return { ...items[0]!, cached_at };
      });
    },
  };
}

export type PipelineHealthService = ReturnType<typeof createPipelineHealthService>;
