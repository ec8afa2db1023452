// One collection cycle: one stream of one integration, under the stream's lock. Pages are
// fetched one at a time; each page's events are durably accepted (acceptPulled: on the
// normalize queue) BEFORE the cursor moves past them, so a worker killed at any point
// re-fetches at most one page, whose vendor keys the normalization stage then drops.
// docs/collection.md, "A collection cycle".
import type { Tracer } from '@opentelemetry/api';
import type { ConnectorRuntime } from '../../connectors/runtime.js';
import { streamOf, VendorError, type Connector, type ConnectorContext, type StreamSpec } from '../../connectors/sdk.js';
import { compileCollectionFilters } from '../../connectors/filters.js';
import type { Clock } from '../../core/clock.js';
import type { LockPort, Lease } from '../../platform/lock/port.js';
import type { Logger } from '../../platform/logger.js';
import type { AcceptBatch, Admission } from '../../pipeline/envelope.js';
import { acceptPulled } from '../../pipeline/sources/pull.js';
import type { CollectorSettings } from '../collector-config/settings.js';
import type { IntegrationRow } from '../integrations/store.js';
import type { CollectionMetrics } from './metrics.js';
import type { CollectionStore, RunRow, StateRow, Usage } from './store.js';
import { backoffMs, encodeDateCursor, planWindow, redact } from './windows.js';

export interface CyclePayload {
  run_id: string;
  integration_id: number;
  stream: string;
}

export interface CycleOutcome {
  status: RunRow['status'];
  pages: number;
  events: number;
  filtered: number;
  capped: boolean;
  error: string | null;
}

export interface EngineDeps {
  store: CollectionStore;
  clock: Clock;
  logger: Logger;
  /** Durable acceptance of a page's batches (ingest's AcceptBatch). */
  accept: AcceptBatch;
  /** New events of an integration refused for now (disk floor, destination backlog budgets): the cycle waits with its cursor. */
  admission?: Admission | undefined;
  lock: LockPort;
  lockTtlMs: number;
  settings: { current(): Promise<CollectorSettings> };
  integrations: {
    /** The row, whatever its organization (the worker acts for the scheduler). */
    row(id: number): Promise<IntegrationRow | undefined>;
    collectTarget(
      row: IntegrationRow,
    ): Promise<{ config: Record<string, unknown>; secrets: string[]; tenantId: string | null }>;
  };
  runtime: Pick<ConnectorRuntime, 'open'>;
  connectorFor(platform: string): Connector | undefined;
  metrics: CollectionMetrics;
  tracer?: Tracer;
  /** The current trace context as a W3C carrier (telemetry on): pulled batches continue the cycle's trace. */
  traceContext?: () => Record<string, string>;
}

export const lockKey = (integrationId: number, stream: string) => `collect:${integrationId}:${stream}`;

/** Why an integration's stream is not collected, or null when it is. */
export function notCollectable(
  row: Pick<IntegrationRow, 'is_active' | 'platform' | 'config'>,
  connector: Connector | undefined,
): string | null {
  if (!connector) return `platform ${row.platform} has no vendor connector`;
  if (!row.is_active) return 'the integration is not active';
  if (row.config?.collect !== true) return 'the integration does not collect (config.collect is not true)';
  if (row.config?.partner === true)
    return 'a managed-provider parent does not collect itself; its child integrations do';
  return null;
}

class Stop extends Error {}

export function createCycleRunner(deps: EngineDeps) {
  const { store, clock, logger } = deps;

  async function finish(runId: string, outcome: CycleOutcome): Promise<CycleOutcome> {
    await store.finishRun(
      runId,
      {
        status: outcome.status,
        pages: outcome.pages,
        events: outcome.events,
        capped: outcome.capped,
        error: outcome.error,
      },
      clock.now(),
    );
    return outcome;
  }

  async function run(payload: CyclePayload, signal: AbortSignal): Promise<CycleOutcome> {
    const { run_id: runId, integration_id: integrationId, stream } = payload;
    const empty = { pages: 0, events: 0, filtered: 0, capped: false };
    await store.startRun(runId, clock.now());
    const row = await deps.integrations.row(integrationId);
    const connector = row ? deps.connectorFor(row.platform) : undefined;
    const spec = connector ? streamOf(connector, stream) : undefined;
    const refused = !row
      ? 'the integration no longer exists'
      : (notCollectable(row, connector) ?? (spec ? null : `platform ${row.platform} has no stream ${stream}`));
    if (refused || !row || !connector || !spec)
      return finish(runId, { status: 'failed', ...empty, error: refused ?? 'not collectable' });

    // The pipeline cannot take this integration's events now: the cursor stays where it is and
    // the scheduler's next cycle tries again (a cycle already running stops at its next page).
    const held = await deps.admission?.check(integrationId);
    if (held) {
      const now = clock.now();
      await store.ensureState(integrationId, row.organization_id, stream, now);
      await store.updateState(integrationId, stream, { paused_reason: held.message }, now);
      logger.info(
        { integration_id: integrationId, stream, reason: held.message },
        'collection cycle paused: the pipeline does not take new events of this integration now',
      );
      return finish(runId, { status: 'paused', ...empty, error: held.message });
    }

    const lease = await deps.lock.acquire(lockKey(integrationId, stream), deps.lockTtlMs);
    if (!lease) {
      await store.ensureState(integrationId, row.organization_id, stream, clock.now());
      await store.countSkipped(integrationId, stream, clock.now());
      deps.metrics.skippedLocked(integrationId, stream);
      logger.info(
        { integration_id: integrationId, stream },
        'collection cycle skipped: the previous cycle still holds the stream',
      );
      return finish(runId, { status: 'skipped_locked', ...empty, error: null });
    }
    // Renewed in the background too: one slow page (vendor retries, Retry-After waits) must
    // not outlive the lease. A lost lease stops the cycle before its next cursor write.
    const lost = new AbortController();
    const heartbeat = setInterval(
      () => {
        void lease.renew(deps.lockTtlMs).then(
          (kept) =>
            kept || lost.abort(new Stop('the stream lock expired during the cycle; another cycle may have taken over')),
          (err: unknown) => logger.warn({ err }, 'could not renew a collection lock'),
        );
      },
      Math.max(250, Math.floor(deps.lockTtlMs / 3)),
    );
    heartbeat.unref();
    try {
      return await collect(runId, row, connector, spec, lease, AbortSignal.any([signal, lost.signal]));
    } finally {
      clearInterval(heartbeat);
      await lease.release().catch((err: unknown) => logger.warn({ err }, 'could not release a collection lock'));
    }
  }

  async function collect(
    runId: string,
    row: IntegrationRow,
    connector: Connector,
    spec: StreamSpec,
    lease: Lease,
    signal: AbortSignal,
  ): Promise<CycleOutcome> {
    const started = clock.now();
    const key = { organization_id: row.organization_id, integration_id: row.id, stream: spec.name };
    await store.ensureState(row.id, row.organization_id, spec.name, started);
    const state = (await store.getState(row.id, spec.name)) as StateRow;
    const settings = await deps.settings.current();
    const tally: PageLoop['tally'] = { pages: 0, events: 0, filtered: 0, capped: false, paused: null };
    let secrets: readonly string[] = [];
    let usage: Usage | undefined;
    let closeConnector: (() => Promise<void>) | undefined;
    try {
      const filters = compileCollectionFilters(row.collection_filters);
      const target = await deps.integrations.collectTarget(row);
      secrets = target.secrets;
      const open = deps.runtime.open(
        { key: row.id, config: target.config, secrets: target.secrets, tenantId: target.tenantId },
        signal,
      );
      closeConnector = open.close;
      const cycle: PageLoop = {
        ctx: open.ctx,
        connector,
        spec,
        row,
        state,
        tally,
        deadline: started.getTime() + settings.max_cycle_seconds * 1000,
        maxPages: settings.max_pages_per_cycle,
        drops: filters.drops,
        lease,
        signal,
      };
      try {
        if (spec.cursor === 'date') await dateLoop(cycle);
        else await opaqueLoop(cycle);
      } finally {
        usage = {
          requests: open.usage.requests,
          rate_limited: open.usage.rateLimited,
          errors: open.usage.errors,
          pages: tally.pages,
          events: tally.events,
          filtered: tally.filtered,
          bytes: open.usage.bytes,
        };
      }
      const now = clock.now();
      await store.updateState(
        row.id,
        spec.name,
        {
          last_run_at: started,
          last_success_at: now,
          consecutive_failures: 0,
          last_error: null,
          last_run_capped: tally.capped,
          paused_reason: tally.paused,
          last_events: tally.events,
          last_duration_ms: now.getTime() - started.getTime(),
          // A capped stream has backlog: its next cycle is due at the next scheduler pass.
          ...(tally.capped ? { next_run_at: now } : {}),
        },
        now,
        tally.events,
      );
      return await finish(runId, { status: 'succeeded', ...tally, error: null });
    } catch (err) {
      const now = clock.now();
      const stopped = signal.aborted || err instanceof Stop;
      const reason: unknown = signal.aborted ? signal.reason : undefined;
      const message =
        reason instanceof Stop ? reason.message : redact(err instanceof Error ? err.message : String(err), secrets);
      if (stopped) {
        // Shutdown or a lost lock is not the vendor's fault: no failure counted, retried soon.
        await store.updateState(
          row.id,
          spec.name,
          { last_run_at: started, last_events: tally.events, last_duration_ms: now.getTime() - started.getTime() },
          now,
          tally.events,
        );
        logger.info({ integration_id: row.id, stream: spec.name, reason: message }, 'collection cycle stopped');
        return await finish(runId, { status: 'failed', ...tally, error: message });
      }
      const failures = state.consecutive_failures + 1;
      const retryAfter =
        err instanceof VendorError && err.kind === 'rate_limited' ? err.details.retryAfterMs : undefined;
      await store.updateState(
        row.id,
        spec.name,
        {
          last_run_at: started,
          consecutive_failures: failures,
          last_error: message,
          last_error_at: now,
          last_run_capped: false,
          last_events: tally.events,
          last_duration_ms: now.getTime() - started.getTime(),
          next_run_at: new Date(now.getTime() + backoffMs(failures, retryAfter)),
        },
        now,
        tally.events,
      );
      logger.warn(
        {
          integration_id: row.id,
          stream: spec.name,
          failures,
          error: message,
          kind: err instanceof VendorError ? err.kind : 'internal',
        },
        'collection cycle failed',
      );
      return await finish(runId, { status: 'failed', ...tally, error: message });
    } finally {
      if (usage && (usage.requests > 0 || usage.pages > 0))
        await store
          .addUsage(key, usage, clock.now())
          .catch((err: unknown) => logger.warn({ err }, 'could not record vendor usage'));
      await closeConnector?.().catch(() => undefined);
    }
  }

  interface PageLoop {
    ctx: ConnectorContext;
    connector: Connector;
    spec: StreamSpec;
    row: IntegrationRow;
    state: StateRow;
    /** paused: why the cycle stopped before its ceiling with backlog left (the admission refused), else null. */
    tally: { pages: number; events: number; filtered: number; capped: boolean; paused: string | null };
    deadline: number;
    maxPages: number;
    drops: (event: Record<string, unknown>) => boolean;
    lease: Lease;
    signal: AbortSignal;
  }

  /** Accepts a page's kept events; only then may the caller move the cursor. */
  async function accept(c: PageLoop, events: Record<string, unknown>[], keys: string[]): Promise<void> {
    if (keys.length !== events.length)
      throw new VendorError(
        'invalid_response',
        `the connector returned ${events.length} events and ${keys.length} keys`,
      );
    const keptEvents: Record<string, unknown>[] = [];
    const keptKeys: string[] = [];
    for (let i = 0; i < events.length; i++) {
      if (c.drops(events[i]!)) c.tally.filtered += 1;
      else {
        keptEvents.push(events[i]!);
        keptKeys.push(keys[i]!);
      }
    }
    if (keptEvents.length > 0) {
      const accepted = await acceptPulled(
        deps.accept,
        clock,
        {
          organizationId: c.row.organization_id,
          integrationId: c.row.id,
          platform: c.row.platform,
          stream: c.spec.name,
          events: keptEvents,
          keys: keptKeys,
        },
        undefined,
        deps.traceContext?.(),
      );
      c.tally.events += accepted.events;
    }
    c.tally.pages += 1;
  }

  /** After a page: keep the lock, and stop at the ceiling. True when the cycle may fetch another page. */
  async function mayContinue(c: PageLoop): Promise<boolean> {
    if (!(await c.lease.renew(deps.lockTtlMs)))
      throw new Stop('the stream lock expired during the cycle; another cycle may have taken over');
    if (c.signal.aborted) throw new Stop('collection was stopped');
    if (!(c.tally.pages < c.maxPages && clock.now().getTime() < c.deadline)) return false;
    const refused = await deps.admission?.check(c.row.id);
    if (refused) c.tally.paused = refused.message;
    return !refused;
  }

  async function moveCursor(c: PageLoop, point: { cursor: string | null; watermark_at?: Date }): Promise<void> {
    if (!(await store.advance(c.row.id, c.spec.name, c.state.reset_at, point, clock.now())))
      throw new Stop('the cursor was reset during the cycle');
  }

  async function dateLoop(c: PageLoop): Promise<void> {
    // Windows of one cycle end at its start's horizon: later events wait for the next cycle
    // instead of being chased with ever smaller windows.
    const horizon = clock.now();
    let plan = planWindow(c.spec, c.state, horizon);
    if (plan?.gap) {
      const now = clock.now();
      await store.updateState(
        c.row.id,
        c.spec.name,
        { gap_from: plan.gap.from, gap_to: plan.gap.to, gap_detected_at: now },
        now,
      );
      logger.warn(
        { integration_id: c.row.id, stream: c.spec.name, gap_from: plan.gap.from, gap_to: plan.gap.to },
        'collection gap: the watermark had fallen behind the vendor retention',
      );
    }
    while (plan) {
      const page = await c.connector.fetchPage(c.ctx, {
        stream: c.spec.name,
        cursor: plan.page,
        from: plan.from,
        to: plan.to,
        pageSize: c.spec.pageSize,
      });
      await accept(c, page.events, page.keys);
      if (page.next !== null) {
        await moveCursor(c, { cursor: encodeDateCursor(plan.from, plan.to, page.next) });
        plan = { from: plan.from, to: plan.to, page: page.next };
      } else {
        await moveCursor(c, { cursor: null, watermark_at: plan.to });
        plan = planWindow(c.spec, { cursor: null, watermark_at: plan.to }, horizon);
      }
      if (!plan) return;
      if (!(await mayContinue(c))) {
        c.tally.capped = true;
        return;
      }
    }
  }

  async function opaqueLoop(c: PageLoop): Promise<void> {
    let cursor = c.state.cursor;
    const from = new Date(clock.now().getTime() - c.spec.defaultWindowMs);
    for (;;) {
      const page = await c.connector.fetchPage(c.ctx, {
        stream: c.spec.name,
        cursor,
        from,
        to: null,
        pageSize: c.spec.pageSize,
      });
      await accept(c, page.events, page.keys);
      if (page.next !== null && page.next !== cursor) {
        await moveCursor(c, { cursor: page.next });
        cursor = page.next;
      }
      if (page.more !== true) return;
      if (!(await mayContinue(c))) {
        c.tally.capped = true;
        return;
      }
    }
  }

  return { run };
}

export type CycleRunner = ReturnType<typeof createCycleRunner>;
