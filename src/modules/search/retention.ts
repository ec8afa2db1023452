// The event store's retention (docs/search.md): each organization keeps its events for its
// retention (/api/organizations/{org_id}/retention). A day partition older than every
// organization's retention is dropped whole; in younger ones, the rows of organizations with a
// shorter retention (or deleted ones) are deleted in bounded chunks. A drop that a running
// search holds up is tried again at the next run instead of stalling the writers.
import type { Logger } from '../../platform/logger.js';
import type { EventsStore } from './events-store.js';

const DAY = 86_400_000;
const CHUNK = 10_000;
const LOCK_TIMEOUT_MS = 2_000;

export interface RetentionOutcome {
  dropped: string[];
  deferred: string[];
  deleted: number;
}

export function createRetention(deps: { events: EventsStore; retentions(): Promise<Map<number, number>>; logger: Logger }) {
  return {
    async run(now: Date): Promise<RetentionOutcome> {
      const retentions = await deps.retentions();
      const days = [...retentions.values()];
      const longest = days.length ? Math.max(...days) : 0;
      const shortest = days.length ? Math.min(...days) : 0;
      const out: RetentionOutcome = { dropped: [], deferred: [], deleted: 0 };
      for (const p of await deps.events.partitions()) {
        const end = p.day + DAY;
        if (end <= now.getTime() - longest * DAY) {
          if (await deps.events.dropPartition(p.name, LOCK_TIMEOUT_MS)) out.dropped.push(p.name);
          else out.deferred.push(p.name);
          continue;
        }
        if (p.day >= now.getTime() - shortest * DAY && days.length > 0) continue;
        for (const org of await deps.events.organizationsIn(p.name)) {
          const keep = retentions.get(org);
          // A deleted organization's events go (its data deletion removes them too).
          const cutoff = new Date(keep === undefined ? end : now.getTime() - keep * DAY);
          if (p.day >= cutoff.getTime()) continue;
          let n: number;
          do {
            n = await deps.events.deleteOlder(p.name, org, cutoff, CHUNK);
            out.deleted += n;
          } while (n === CHUNK);
        }
      }
      if (out.dropped.length || out.deleted || out.deferred.length) deps.logger.info(out, 'event store retention');
      return out;
    },
  };
}
