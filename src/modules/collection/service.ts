// The collectors operations: state rows, summary, cost, the catalogue of connectors, cursor
// reset and trigger. Everything is read through the caller's scope; an integration outside
// it is "not found", like one that does not exist.
import { streamOf, type Connector } from '../../connectors/sdk.js';
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import { setAuditTarget } from '../audit/service.js';
import type { IntegrationRow } from '../integrations/store.js';
import { notCollectable } from './cycle.js';
import { enabledStreams, type SchedulerDeps } from './scheduler.js';
import type { CollectionStore, ListedState, StateFilter } from './store.js';

export interface CollectionServiceDeps {
  store: CollectionStore;
  clock: Clock;
  integrations: { find(scope: Scope, id: number): Promise<IntegrationRow | undefined> };
  connectorFor(platform: string): Connector | undefined;
  allConnectors(): Connector[];
  enqueueCycle: SchedulerDeps['enqueueCycle'];
}

/** Watermark lag above which a stream counts as lagging in the summary (the spec's example alert threshold). */
export const LAGGING_AFTER_SECONDS = 1800;
export const COST_DAYS_MAX = 90;

const seconds = (ms: number) => Math.max(0, Math.round(ms / 1000));

export function createCollectionService(deps: CollectionServiceDeps) {
  const { store, clock } = deps;

  const cursorKind = (platform: string, stream: string) => {
    const connector = deps.connectorFor(platform);
    return (connector && streamOf(connector, stream)?.cursor) ?? null;
  };

  function represent(row: ListedState, now: Date) {
    const kind = cursorKind(row.platform, row.stream);
    return {
      integration_id: row.integration_id,
      integration_name: row.integration_name,
      organization_id: row.organization_id,
      platform: row.platform,
      stream: row.stream,
      cursor_kind: kind,
      watermark_at: kind === 'date' ? row.watermark_at : null,
      last_success_at: row.last_success_at,
      consecutive_failures: row.consecutive_failures,
      last_run_capped: row.last_run_capped,
      last_error: row.last_error,
      paused_reason: row.paused_reason ?? null,
      lag_seconds: kind === 'date' && row.watermark_at ? seconds(now.getTime() - row.watermark_at.getTime()) : null,
      next_run_at: row.next_run_at,
      cycles_skipped_locked: Number(row.cycles_skipped_locked),
      gap: row.gap_from && row.gap_to ? { from: row.gap_from, to: row.gap_to, detected_at: row.gap_detected_at } : null,
    };
  }

  /** The integration and stream in scope, or 404 (either unknown). */
  async function streamInScope(scope: Scope, integrationId: number, stream: string) {
    const row = await deps.integrations.find(scope, integrationId);
    if (!row) throw errors.notFound('Integration');
    const connector = deps.connectorFor(row.platform);
    const spec = connector ? streamOf(connector, stream) : undefined;
    return { row, connector, spec };
  }

  const unknownStream = (row: IntegrationRow, stream: string, connector: Connector | undefined) =>
    new AppError('collection.unknown_stream', {
      detail: `Platform ${row.platform} has no collected stream "${stream}"`,
      details: { stream, streams: connector?.streams.map((s) => s.name) ?? [] },
    });

  return {
    async states(scope: Scope, filter: StateFilter) {
      const now = clock.now();
      return (await store.listStates(scope, filter)).map((r) => represent(r, now));
    },

    async summary(scope: Scope) {
      const now = clock.now();
      const rows = (await store.listStates(scope, {})).map((r) => represent(r, now));
      const lagging = (r: (typeof rows)[number]) => r.lag_seconds !== null && r.lag_seconds > LAGGING_AFTER_SECONDS;
      const byPlatform = new Map<
        string,
        { platform: string; streams: number; failing: number; lagging: number; capped: number }
      >();
      for (const r of rows) {
        const p = byPlatform.get(r.platform) ?? { platform: r.platform, streams: 0, failing: 0, lagging: 0, capped: 0 };
        p.streams += 1;
        if (r.consecutive_failures > 0) p.failing += 1;
        if (lagging(r)) p.lagging += 1;
        if (r.last_run_capped) p.capped += 1;
        byPlatform.set(r.platform, p);
      }
      const lags = rows.map((r) => r.lag_seconds).filter((l): l is number => l !== null);
      return {
        generated_at: now,
        integrations: new Set(rows.map((r) => r.integration_id)).size,
        streams: rows.length,
        healthy: rows.filter((r) => r.last_success_at !== null && r.consecutive_failures === 0 && !lagging(r)).length,
        failing: rows.filter((r) => r.consecutive_failures > 0).length,
        lagging: rows.filter(lagging).length,
        capped: rows.filter((r) => r.last_run_capped).length,
        never_run: rows.filter((r) => r.last_success_at === null && r.consecutive_failures === 0).length,
        cycles_skipped_locked: rows.reduce((n, r) => n + r.cycles_skipped_locked, 0),
        max_watermark_lag_seconds: lags.length ? Math.max(...lags) : null,
        lagging_after_seconds: LAGGING_AFTER_SECONDS,
        gaps: rows
          .filter((r) => r.gap !== null)
          .map((r) => ({
            integration_id: r.integration_id,
            integration_name: r.integration_name,
            stream: r.stream,
            ...r.gap!,
          })),
        platforms: [...byPlatform.values()].sort((a, b) => a.platform.localeCompare(b.platform)),
      };
    },

    async costSummary(scope: Scope, days: number, filter: StateFilter) {
      const now = clock.now();
      const fromDay = new Date(now.getTime() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
      const [intake, usage] = await Promise.all([
        store.dailyIntake(scope, fromDay, filter),
        store.dailyUsage(scope, fromDay, filter),
      ]);
      const items = new Map<
        string,
        {
          integration_id: number;
          integration_name: string;
          organization_id: number;
          platform: string;
          day: string;
          events: number;
          bytes: number;
          requests: number;
          rate_limited: number;
          errors: number;
          pages: number;
          filtered: number;
        }
      >();
      const entry = (r: {
        integration_id: number;
        organization_id: number;
        name: string;
        platform: string;
        day: string;
      }) => {
        const k = `${r.integration_id}/${r.day}`;
        let e = items.get(k);
        if (!e) {
          e = {
            integration_id: r.integration_id,
            integration_name: r.name,
            organization_id: r.organization_id,
            platform: r.platform,
            day: r.day,
            events: 0,
            bytes: 0,
            requests: 0,
            rate_limited: 0,
            errors: 0,
            pages: 0,
            filtered: 0,
          };
          items.set(k, e);
        }
        return e;
      };
      for (const r of intake) Object.assign(entry(r), { events: Number(r.events ?? 0), bytes: Number(r.bytes ?? 0) });
      for (const r of usage) {
        Object.assign(entry(r), {
          requests: Number(r.requests ?? 0),
          rate_limited: Number(r.rate_limited ?? 0),
          errors: Number(r.errors ?? 0),
          pages: Number(r.pages ?? 0),
          filtered: Number(r.filtered ?? 0),
        });
      }
      const list = [...items.values()].sort(
        (a, b) => b.day.localeCompare(a.day) || a.integration_id - b.integration_id,
      );
      const totals = list.reduce(
        (t, e) => ({ events: t.events + e.events, bytes: t.bytes + e.bytes, requests: t.requests + e.requests }),
        { events: 0, bytes: 0, requests: 0 },
      );
      return { days, from_day: fromDay, to_day: now.toISOString().slice(0, 10), totals, items: list };
    },

    platformsStreams() {
      return deps
        .allConnectors()
        .map((c) => ({
          platform: c.platform,
          display_name: c.display_name,
          vendor: c.vendor,
          streams: c.streams.map((s) => ({
            name: s.name,
            display_name: s.display_name,
            description: s.description,
            cursor_kind: s.cursor,
            default_window_seconds: seconds(s.defaultWindowMs),
            interval_seconds: seconds(s.intervalMs),
            retention_days: s.retentionDays,
            page_size: s.pageSize,
            max_window_seconds: seconds(s.maxWindowMs),
            settle_seconds: seconds(s.settleMs),
          })),
        }))
        .sort((a, b) => a.platform.localeCompare(b.platform));
    },

    vendors() {
      const byVendor = new Map<string, Connector[]>();
      for (const c of deps.allConnectors()) byVendor.set(c.vendor, [...(byVendor.get(c.vendor) ?? []), c]);
      return [...byVendor.entries()]
        .map(([vendor, list]) => ({
          vendor,
          platforms: list.map((c) => c.platform).sort(),
          auth: [...new Set(list.map((c) => c.auth))].sort(),
          cursor_kinds: [...new Set(list.flatMap((c) => c.streams.map((s) => s.cursor)))].sort(),
          tenant_discovery: list.some((c) => c.tenants !== undefined),
          // Backfill walks time windows: a vendor with a date-cursor stream can be backfilled.
          backfill: list.some((c) => c.streams.some((s) => s.cursor === 'date')),
        }))
        .sort((a, b) => a.vendor.localeCompare(b.vendor));
    },

    async resetCursor(scope: Scope, integrationId: number, stream: string) {
      const { row, connector, spec } = await streamInScope(scope, integrationId, stream);
      if (!spec) throw unknownStream(row, stream, connector);
      const before = await store.getState(row.id, spec.name);
      const now = clock.now();
      const after = await store.resetCursor(row.id, row.organization_id, spec.name, now);
      setAuditTarget({
        type: 'collector_state',
        id: `${row.id}/${spec.name}`,
        organizationId: row.organization_id,
        details: {
          integration_id: row.id,
          stream: spec.name,
          cursor_kind: spec.cursor,
          previous_watermark_at: before?.watermark_at?.toISOString() ?? null,
          had_cursor: Boolean(before?.cursor),
        },
      });
      return represent({ ...after, integration_name: row.name, platform: row.platform }, now);
    },

    /** Enqueues a cycle now (even while collection is paused); answers the run id as the task id. */
    async trigger(actor: Actor, integrationId: number, stream: string) {
      const { row, connector, spec } = await streamInScope(scopeOf(actor), integrationId, stream);
      const refused = notCollectable(row, connector);
      if (refused)
        throw new AppError('collection.not_collectable', {
          detail: `Integration ${row.id} cannot be collected: ${refused}`,
          details: { integration_id: row.id },
        });
      if (!spec) throw unknownStream(row, stream, connector);
      if (!enabledStreams(row, connector!).some((s) => s.name === spec.name)) {
        throw new AppError('collection.not_collectable', {
          detail: `Stream ${spec.name} is left out by the integration's collection filters`,
          details: { integration_id: row.id, stream: spec.name },
        });
      }
      const id = newId();
      await store.ensureState(row.id, row.organization_id, spec.name, clock.now());
      await deps.enqueueCycle({
        id,
        organization_id: row.organization_id,
        integration_id: row.id,
        stream: spec.name,
        reason: 'trigger',
        requested_by: actor.kind === 'user' ? actor.id : null,
      });
      setAuditTarget({
        type: 'collector_state',
        id: `${row.id}/${spec.name}`,
        organizationId: row.organization_id,
        details: { task_id: id, stream: spec.name },
      });
      return { task_id: id, integration_id: row.id, stream: spec.name, status: 'queued' as const };
    },
  };
}

export type CollectionService = ReturnType<typeof createCollectionService>;
