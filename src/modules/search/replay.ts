// Replay (docs/search.md): the stored events that match a condition in a time range,
// re-delivered to one destination, as a job. Events are read in (time, event id) order a page
// at a time; each page becomes outbox rows of kind `replay` (one per integration and stream)
// with their ledger count (`replayed`) and the replay's position, in ONE transaction, so a job
// retried after a crash resumes after the last page written and never sends a page twice. The
// destination's lane then delivers them like any copy (retries, breaker, dead-letter queue).
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { inScope, scopeOf, targetOrganization, type Scope } from '../../core/scope.js';
import type { Logger } from '../../platform/logger.js';
import { encodeLines } from '../../pipeline/batch-codec.js';
import type { LedgerEntry, NewDelivery } from '../../pipeline/delivery/engine-port.js';
import { setAuditTarget } from '../audit/service.js';
import { planQuery, type QueryInput, type TimeRange } from './query/definition.js';
import { ownerKey } from './runs.js';
import type { ReplayRow, SearchStore } from './store.js';
import type { StoreQueries } from './store-query.js';

export const REPLAY_JOB = 'search.replay';
const PAGE = 1_000;

export interface ReplayBody {
  organization_id?: number;
  destination_id: string;
  time: TimeRange;
  where?: QueryInput['where'];
  query?: string;
}

/** What replay needs of destinations and the outbox (the destinations and delivery modules). */
export interface ReplayPorts {
  destination(
    id: string,
  ): Promise<{ organization_id: number | null; enabled: boolean; name: string; type: string } | undefined>;
  write(rows: NewDelivery[], ledger: LedgerEntry[], at: Date): Promise<void>;
  wake(): void;
}

export function replayOut(r: ReplayRow) {
  const total = r.total === null ? null : Number(r.total);
  const replayed = Number(r.replayed);
  return {
    id: r.id,
    organization_id: r.organization_id,
    destination_id: r.destination_id,
    query: r.query as QueryInput,
    state: r.state,
    total,
    replayed,
    progress: total === null ? 0 : total === 0 ? 1 : Math.min(1, replayed / total),
    error: r.error,
    run_by: r.actor,
    created_at: r.created_at,
    finished_at: r.finished_at,
  };
}

export function createReplayService(deps: {
  store: SearchStore;
  queries: StoreQueries;
  ports: ReplayPorts;
  clock: Clock;
  logger: Logger;
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  enqueue(replayId: string): Promise<void>;
}) {
  const { store, queries, ports, clock, logger } = deps;

  async function visible(scope: Scope, id: string): Promise<ReplayRow> {
    const row = await store.getReplay(scope, id);
    if (!row) throw errors.notFound('Replay');
    return row;
  }

  async function start(actor: Actor, body: ReplayBody) {
    const scope = scopeOf(actor);
    const organizationId = await targetOrganization(store, scope, body.organization_id);
    const dest = await ports.destination(body.destination_id);
    // A destination of another organization reads as not found; a global one takes any organization's events.
    if (
      !dest ||
      (dest.organization_id !== null && dest.organization_id !== organizationId) ||
      (dest.organization_id !== null && !inScope(scope, dest.organization_id))
    ) {
      throw errors.notFound('Destination');
    }
    if (!dest.enabled) {
      throw new AppError('search.destination_unusable', {
        detail: `Destination "${dest.name}" is disabled: enable it before replaying to it`,
        details: { destination_id: body.destination_id },
      });
    }
    const input: QueryInput = {
      organization_id: organizationId,
      time: body.time,
      ...(body.where !== undefined ? { where: body.where } : {}),
      ...(body.query !== undefined ? { query: body.query } : {}),
    };
    const plan = planQuery(input, { now: clock.now(), maxRangeDays: 3650, maxLimit: Number.MAX_SAFE_INTEGER });
    const stored = { ...input, time: { from: plan.from.toISOString(), to: plan.to.toISOString() } };
    const id = newId();
    await deps.transaction(async () => {
      await store.insertReplay(
        {
          id,
          organization_id: organizationId,
          destination_id: body.destination_id,
          query: stored as Record<string, unknown>,
          created_by: actor.kind === 'user' ? actor.id : null,
          actor: ownerKey(actor),
        },
        clock.now(),
      );
      await deps.enqueue(id);
    });
    setAuditTarget({
      type: 'replay',
      id,
      organizationId,
      details: { destination_id: body.destination_id, destination: dest.name, query: stored },
    });
    return replayOut((await store.getReplay(undefined, id))!);
  }

  /** Runs a replay to its end, resuming after the last page written. */
  async function execute(id: string, signal: AbortSignal): Promise<void> {
    let r = await store.getReplay(undefined, id);
    if (!r || ['completed', 'failed', 'cancelled'].includes(r.state)) return;
    const input = r.query as QueryInput;
    try {
      const plan = planQuery(input, { now: r.created_at, maxRangeDays: 3650, maxLimit: Number.MAX_SAFE_INTEGER });
      const scope = { organizationIds: [r.organization_id], from: plan.from, to: plan.to, condition: plan.condition };
      if (r.total === null) await store.updateReplay(id, { state: 'running', total: await queries.count(scope) });
      else await store.updateReplay(id, { state: 'running' });
      let after = r.cursor_time && r.cursor_id ? { time: new Date(r.cursor_time), id: r.cursor_id } : null;
      for (;;) {
        r = (await store.getReplay(undefined, id))!;
        if (r.cancel_requested || signal.aborted) {
          await store.updateReplay(id, { state: 'cancelled', finished_at: clock.now() });
          return;
        }
        const page = await queries.page(scope, after, PAGE);
        if (page.length === 0) break;
        const last = page[page.length - 1]!;
        const groups = new Map<string, typeof page>();
        for (const e of page) {
          const key = `${e.integration_id}\u0000${e.stream}`;
          const g = groups.get(key);
          if (g) g.push(e);
          else groups.set(key, [e]);
        }
        const rows: NewDelivery[] = [];
        const ledger: LedgerEntry[] = [];
        for (const g of groups.values()) {
          const lines = g.map((e) => e.line);
          const origin = {
            organization_id: r.organization_id,
            integration_id: g[0]!.integration_id,
            stream: g[0]!.stream,
          };
          rows.push({
            id: newId(),
            destination_id: r.destination_id,
            ...origin,
            source_batch_id: `${id}:${last.event_id}:${g[0]!.event_id}`,
            kind: 'replay',
            event_count: g.length,
            bytes: lines.reduce((n, l) => n + Buffer.byteLength(l), 0),
            event_ids: g.map((e) => e.event_id).join(','),
            events: await encodeLines(lines),
          });
          ledger.push({ ...origin, outcome: 'replayed', destination_id: r.destination_id, count: g.length });
        }
        const replayed = Number(r.replayed) + page.length;
        await deps.transaction(async () => {
          await ports.write(rows, ledger, clock.now());
          await store.updateReplay(id, { replayed, cursor_time: last.time, cursor_id: last.event_id });
        });
        ports.wake();
        after = { time: last.time, id: last.event_id };
        if (page.length < PAGE) break;
      }
      await store.updateReplay(id, { state: 'completed', finished_at: clock.now() });
    } catch (err) {
      logger.warn({ err, replay_id: id }, 'a replay failed');
      await store.updateReplay(id, {
        state: 'failed',
        error: (err instanceof Error ? err.message : String(err)).slice(0, 1000),
        finished_at: clock.now(),
      });
    }
  }

  return {
    start,
    execute,
    async get(actor: Actor, id: string) {
      return replayOut(await visible(scopeOf(actor), id));
    },
    async cancel(actor: Actor, id: string) {
      const r = await visible(scopeOf(actor), id);
      setAuditTarget({ type: 'replay', id, organizationId: r.organization_id });
      if (r.state === 'queued')
        await store.updateReplay(id, { state: 'cancelled', cancel_requested: true, finished_at: clock.now() });
      else if (r.state === 'running') await store.updateReplay(id, { cancel_requested: true });
      return replayOut((await store.getReplay(undefined, id))!);
    },
  };
}

export type ReplayService = ReturnType<typeof createReplayService>;
