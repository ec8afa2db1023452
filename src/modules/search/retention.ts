// The event store's retention (docs/search.md): each organization keeps its events for its
// retention (/api/organizations/{org_id}/retention), counted from when Weir received each
// event, so a backfill or a replayed archive of old events stays its whole retention. The
// engine removes what is due (event-store/*: PostgreSQL drops whole day partitions where it can
// and deletes in chunks elsewhere; DuckDB deletes by receipt time); what it removed is counted
// on each organization (GET .../retention answers it) and logged.
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { EventStore, RetentionRemoved } from './event-store/port.js';

export interface RetentionOutcome {
  dropped: string[];
  deferred: string[];
  deleted: number;
  /** Events removed, by organization id. */
  removed: Record<string, number>;
}

export function createRetention(deps: {
  events: Pick<EventStore, 'retain'>;
  retentions(): Promise<Map<number, number>>;
  /** Adds what was removed to each organization's count. */
  counted(removed: ReadonlyMap<number, number>, at: Date): Promise<void>;
  clock: Clock;
  logger: Logger;
}) {
  return {
    async run(now: Date): Promise<RetentionOutcome> {
      const result: RetentionRemoved = await deps.events.retain(now, await deps.retentions());
      let deleted = 0;
      for (const n of result.removed.values()) deleted += n;
      if (result.removed.size > 0) await deps.counted(result.removed, deps.clock.now());
      const out: RetentionOutcome = { dropped: result.dropped, deferred: result.deferred, deleted, removed: Object.fromEntries(result.removed) };
      if (deleted || result.dropped.length || result.deferred.length) deps.logger.info(out, 'event store retention removed events');
      return out;
    },
  };
}
