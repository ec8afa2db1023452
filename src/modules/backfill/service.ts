// Backfill rules: `streams` is a list (the singular `stream` is refused), the window is at
// most 90 days and starts at most 90 days back, ends after it starts and not in the future;
// only integrations that collect from a vendor connector, never a managed-provider parent
// (its children hold the tenants). The job is stored, then queued; a worker runs it
// (runner.ts). Anything outside the caller's scope is "not found".
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { parseDate } from '../../core/dates.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import { compileCollectionFilters } from '../../connectors/filters.js';
import { DAY_MS, type Connector } from '../../connectors/sdk.js';
import { setAuditTarget } from '../audit/service.js';
import type { IntegrationRow } from '../integrations/store.js';
import { MAX_BACKFILL_DAYS } from './schema.js';
import { isFinal, type BackfillJobRow, type BackfillStore, type JobStatus, type Progress } from './store.js';

export interface CreateInput {
  streams?: string[];
  stream?: unknown;
  from_ts: string;
  to_ts: string;
}

export interface BackfillServiceDeps {
  store: BackfillStore;
  clock: Clock;
  integrations: { find(scope: Scope, id: number): Promise<IntegrationRow | undefined> };
  connectorFor(platform: string): Connector | undefined;
  /** Queues backfill.run for a stored job. */
  enqueueRun(jobId: string): Promise<void>;
}

const MAX_WINDOW_MS = MAX_BACKFILL_DAYS * DAY_MS;
/**
 * Clock skew forgiven on the "now" rules, so a client that computes "90 days ago" or "now"
 * on its own clock is not refused for a few seconds; a to_ts in that margin ends at now.
 */
export const SKEW_MS = 60_000;
const notFound = () => errors.notFound('Backfill job');

/** Where a stream's backfill may start: the vendor's retention, as of now. */
export function retentionLimit(now: Date, retentionDays: number): Date {
  return new Date(now.getTime() - retentionDays * DAY_MS);
}

export function clampWarning(stream: string, retentionDays: number, from: Date, clamped: Date): string {
  return `${stream}: the vendor keeps ${retentionDays} days of history; collection starts at ${clamped.toISOString()} instead of ${from.toISOString()}`;
}

/** What the API returns for a job. */
export function represent(row: BackfillJobRow) {
  return {
    ...row,
    streams: row.streams as string[],
    progress: (row.progress ?? {}) as Progress,
    warnings: row.warnings ?? [],
    events: Number(row.events),
  };
}

function parseWindowDate(field: 'from_ts' | 'to_ts', value: string): Date {
  const date = parseDate(value);
  if (!date)
    throw new AppError('request.invalid_date', { detail: `body/${field} is not an ISO 8601 date`, details: { field } });
  return date;
}

export function createBackfillService(deps: BackfillServiceDeps) {
  const { store, clock } = deps;

  function checkWindow(input: CreateInput, now: Date): { from: Date; to: Date } {
    const from = parseWindowDate('from_ts', input.from_ts);
    const to = parseWindowDate('to_ts', input.to_ts);
    const window = { from_ts: from.toISOString(), to_ts: to.toISOString() };
    if (to.getTime() <= from.getTime()) {
      throw new AppError('backfill.invalid_window', { detail: 'to_ts must be after from_ts', details: window });
    }
    if (to.getTime() - from.getTime() > MAX_WINDOW_MS) {
      throw new AppError('backfill.window_too_long', {
        detail: `A backfill window is at most ${MAX_BACKFILL_DAYS} days; split it into several jobs`,
        details: { ...window, max_days: MAX_BACKFILL_DAYS },
      });
    }
    if (from.getTime() < now.getTime() - MAX_WINDOW_MS - SKEW_MS) {
      throw new AppError('backfill.start_too_old', {
        detail: `from_ts must be at most ${MAX_BACKFILL_DAYS} days in the past`,
        details: { ...window, max_days: MAX_BACKFILL_DAYS },
      });
    }
    if (to.getTime() > now.getTime() + SKEW_MS) {
      throw new AppError('backfill.invalid_window', {
        detail: 'to_ts must not be in the future',
        details: { ...window, now: now.toISOString() },
      });
    }
    const end = to > now ? now : to;
    if (end <= from)
      throw new AppError('backfill.invalid_window', { detail: 'to_ts must be after from_ts', details: window });
    return { from, to: end };
  }

  async function collectable(
    scope: Scope,
    integrationId: number,
  ): Promise<{ row: IntegrationRow; connector: Connector }> {
    const row = await deps.integrations.find(scope, integrationId);
    if (!row) throw errors.notFound('Integration');
    const connector = deps.connectorFor(row.platform);
    if (!connector) {
      throw new AppError('integration.not_collectable', {
        detail: `Platform "${row.platform}" has no vendor connector: its events are pushed, there is nothing to backfill`,
        details: { platform: row.platform },
      });
    }
    const config = row.config ?? {};
    if (config.partner === true || (await store.hasChildren(row.id))) {
      throw new AppError('backfill.managed_provider_parent', {
        detail: `Integration ${row.id} is a managed-provider parent; backfill its child integrations (one per customer tenant)`,
        details: { integration_id: row.id },
      });
    }
    if (!row.is_active || config.collect !== true) {
      throw new AppError('collection.not_collectable', {
        detail: row.is_active
          ? `Integration ${row.id} does not collect (config.collect is not true)`
          : `Integration ${row.id} is not active`,
        details: { integration_id: row.id, is_active: row.is_active, collect: config.collect === true },
      });
    }
    return { row, connector };
  }

  function checkStreams(input: CreateInput, connector: Connector, row: IntegrationRow): string[] {
    const streams = [...new Set(input.streams ?? [])];
    const known = connector.streams.map((s) => s.name);
    const unknown = streams.filter((s) => !known.includes(s));
    if (unknown.length > 0) {
      throw new AppError('backfill.unknown_stream', {
        detail: `Platform "${row.platform}" has no stream ${unknown.map((s) => `"${s}"`).join(', ')}; its streams: ${known.join(', ')}`,
        details: { unknown, streams: known },
      });
    }
    let filters;
    try {
      filters = compileCollectionFilters(row.collection_filters);
    } catch (err) {
      throw errors.validation(
        `The integration's collection filters are not valid (${(err as Error).message}); fix them first`,
      );
    }
    const disabled = streams.filter((s) => !filters.streamEnabled(s));
    if (disabled.length > 0) {
      throw errors.validation(
        `The integration's collection filters leave out ${disabled.join(', ')}; enable the stream first`,
        {
          errors: disabled.map((s) => ({
            location: 'body/streams',
            message: `${s} is disabled by the collection filters`,
          })),
        },
      );
    }
    return streams;
  }

  return {
    async create(actor: Actor, integrationId: number, input: CreateInput) {
      if (input.stream !== undefined) {
        throw new AppError('backfill.stream_singular', {
          detail: 'Send streams (a list, even for one stream), not stream',
          details: { field: 'stream' },
        });
      }
      const scope = scopeOf(actor);
      const { row, connector } = await collectable(scope, integrationId);
      if (input.streams === undefined) {
        throw errors.validation('body/streams is required', {
          errors: [{ location: 'body/streams', message: 'is required' }],
        });
      }
      const streams = checkStreams(input, connector, row);
      const now = clock.now();
      const { from, to } = checkWindow(input, now);

      const progress: Progress = {};
      const warnings: string[] = [];
      for (const name of streams) {
        const spec = connector.streams.find((s) => s.name === name)!;
        const limit = retentionLimit(now, spec.retentionDays);
        const start = from < limit ? limit : from;
        if (start !== from) warnings.push(clampWarning(name, spec.retentionDays, from, start));
        progress[name] = {
          chunk_from: start.toISOString(),
          chunk_to: null,
          cursor: null,
          events: 0,
          filtered: 0,
          pages: 0,
          done: start >= to,
          clamped_from: start !== from ? start.toISOString() : null,
        };
      }
      const job = await store.insert(
        {
          id: newId(),
          organization_id: row.organization_id,
          integration_id: row.id,
          streams,
          from_ts: from,
          to_ts: to,
          progress,
          warnings,
          created_by: actor.kind === 'user' ? actor.id : null,
        },
        now,
      );
      setAuditTarget({
        type: 'backfill_job',
        id: job.id,
        organizationId: row.organization_id,
        details: { integration_id: row.id, streams, from_ts: from, to_ts: to },
      });
      try {
        await deps.enqueueRun(job.id);
      } catch (err) {
        await store.finish(job.id, 'failed', 'could not be queued', clock.now());
        throw new AppError('dependency.unavailable', {
          detail: 'Dependency unavailable: job queue',
          details: { dependency: 'queue' },
          cause: err,
        });
      }
      return represent(job);
    },

    async list(scope: Scope, integrationId: number, status: JobStatus | undefined, page: OffsetPage) {
      if (!(await deps.integrations.find(scope, integrationId))) throw errors.notFound('Integration');
      const { items, total } = await store.list(scope, integrationId, status, page);
      return { items: items.map(represent), total };
    },

    async get(scope: Scope, id: string) {
      const row = await store.get(scope, id);
      if (!row) throw notFound();
      return represent(row);
    },

    async cancel(scope: Scope, id: string) {
      const updated = await store.requestCancel(scope, id, clock.now());
      if (updated) {
        setAuditTarget({
          type: 'backfill_job',
          id,
          organizationId: updated.organization_id,
          details: { status: updated.status },
        });
        return represent(updated);
      }
      const row = await store.get(scope, id);
      if (!row) throw notFound();
      if (isFinal(row.status)) {
        throw new AppError('backfill.already_finished', {
          detail: `Backfill job ${id} has already finished (${row.status})`,
          details: { status: row.status },
        });
      }
      // Raced with a transition between the two reads: report what it is now.
      return represent(row);
    },
  };
}

export type BackfillService = ReturnType<typeof createBackfillService>;
