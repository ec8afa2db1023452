// The event store's retention (docs/search.md): each organization keeps its events for its
// retention (/api/organizations/{org_id}/retention), counted from when Weir received each
// event, so a backfill or a replayed archive of old events stays its whole retention. The
// engine removes what is due (event-store/*: PostgreSQL drops whole day partitions where it can
// and deletes in chunks elsewhere; DuckDB deletes by receipt time). Then the size budget
// (WEIR_SEARCH_MAX_BYTES, 0: none): while the store holds more bytes of event text than it, the
// events received first go, across organizations. What both removed is counted together on
// each organization (GET .../retention answers it) and logged apart.
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { EventStore, RetentionRemoved, TrimRemoved } from './event-store/port.js';

export interface RetentionOutcome {
  dropped: string[];
  deferred: string[];
  deleted: number;
  /** Events removed (by the retention days and the size budget together), by organization id. */
  removed: Record<string, number>;
  /** Of those, the events the size budget removed, by organization id, and their bytes of event text. */
  trimmed: Record<string, number>;
  trimmedBytes: number;
}

export function createRetention(deps: {
  events: Pick<EventStore, 'retain' | 'trim'>;
  retentions(): Promise<Map<number, number>>;
  /** Adds what was removed to each organization's count. */
  counted(removed: ReadonlyMap<number, number>, at: Date): Promise<void>;
  /** The size budget in bytes of event text (0: none). */
  maxBytes: number;
  clock: Clock;
  logger: Logger;
}) {
  return {
    async run(now: Date): Promise<RetentionOutcome> {
      const result: RetentionRemoved = await deps.events.retain(now, await deps.retentions());
      const trimmed: TrimRemoved =
        deps.maxBytes > 0 ? await deps.events.trim(deps.maxBytes) : { removed: new Map(), bytes: 0 };
      const removed = new Map(result.removed);
      for (const [org, n] of trimmed.removed) removed.set(org, (removed.get(org) ?? 0) + n);
      let deleted = 0;
      for (const n of removed.values()) deleted += n;
      if (removed.size > 0) await deps.counted(removed, deps.clock.now());
      const out: RetentionOutcome = {
        dropped: result.dropped,
        deferred: result.deferred,
        deleted,
        removed: Object.fromEntries(removed),
        trimmed: Object.fromEntries(trimmed.removed),
        trimmedBytes: trimmed.bytes,
      };
      if (deleted || result.dropped.length || result.deferred.length)
        deps.logger.info(out, 'event store retention removed events');
      return out;
    },
  };
}
