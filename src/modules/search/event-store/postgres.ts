// The event store on PostgreSQL (distributed mode; docs/search.md): `events`, partitioned by UTC
// day of the event's time (postgres-table.ts), read through the condition language's SQL
// (../query-sql.ts, ../store-query.ts). Retention counts from when Weir received an event: a
// day partition goes whole once every event in it was received before the longest retention;
// otherwise the rows of organizations whose retention passed are deleted in bounded chunks. The
// size budget (trim) deletes the events received first, across organizations, in chunks.
import type { Kysely } from 'kysely';
import { inTransaction } from '../../../platform/db/ambient.js';
import type { DB } from '../../../platform/db/index.js';
import { createEventsStore, dayOf } from './postgres-table.js';
import { createStoreQueries } from '../store-query.js';
import { exportThroughMemory } from './parquet-export.js';
import type { EventStore, RetentionRemoved, TrimRemoved } from './port.js';

const DAY = 86_400_000;
const CHUNK = 10_000;
const LOCK_TIMEOUT_MS = 2_000;

export function createPostgresEventStore(
  db: Kysely<DB>,
  opts: {
    statementTimeoutMs: number;
    /** Rows one statement of the size budget's deletes looks at (tests: small). */ trimChunk?: number;
  },
): EventStore & { tables: ReturnType<typeof createEventsStore> } {
  const tables = createEventsStore(db);
  const queries = createStoreQueries(db, opts.statementTimeoutMs);

  async function retain(now: Date, retentionDays: ReadonlyMap<number, number>): Promise<RetentionRemoved> {
    const days = [...retentionDays.values()];
    const longest = days.length ? Math.max(...days) : 0;
    const shortest = days.length ? Math.min(...days) : 0;
    const out: RetentionRemoved = { removed: new Map(), dropped: [], deferred: [] };
    const add = (org: number, n: number) => {
      if (n > 0) out.removed.set(org, (out.removed.get(org) ?? 0) + n);
    };
    for (const p of await tables.partitions()) {
      // An event's time is at most a day past its receipt (routing-write.ts): a partition this young holds nothing retention removes yet.
      if (days.length > 0 && p.day - DAY >= now.getTime() - shortest * DAY) continue;
      const contents = await tables.contents(p.name);
      const longestCutoff = now.getTime() - longest * DAY;
      if (contents.every((c) => c.last.getTime() < longestCutoff || !retentionDays.has(c.organization_id))) {
        if (await tables.dropPartition(p.name, LOCK_TIMEOUT_MS)) {
          out.dropped.push(p.name);
          for (const c of contents) add(c.organization_id, c.n);
        } else out.deferred.push(p.name);
        continue;
      }
      for (const c of contents) {
        const keep = retentionDays.get(c.organization_id);
        // A deleted organization's events go (its data deletion removes them too).
        const cutoff = keep === undefined ? Number.POSITIVE_INFINITY : now.getTime() - keep * DAY;
        if (c.first.getTime() >= cutoff) continue;
        const before = new Date(Math.min(cutoff, now.getTime() + DAY * 3650));
        let n: number;
        do {
          n = await tables.deleteOlder(p.name, c.organization_id, before, CHUNK);
          add(c.organization_id, n);
        } while (n === CHUNK);
      }
    }
    return out;
  }

  /** The size budget: deletes the events received first, in chunks, until the table holds at most `maxBytes` of event text. */
  async function trim(maxBytes: number): Promise<TrimRemoved> {
    const out: TrimRemoved = { removed: new Map(), bytes: 0 };
    let excess = (await tables.size()) - maxBytes;
    while (excess > 0) {
      const gone = await tables.deleteOldest(excess, opts.trimChunk ?? CHUNK);
      if (gone.length === 0) break;
      for (const g of gone) {
        out.removed.set(g.organization_id, (out.removed.get(g.organization_id) ?? 0) + g.n);
        out.bytes += g.bytes;
        excess -= g.bytes;
      }
    }
    return out;
  }

  return {
    kind: 'postgres',
    tables,
    prepare: (_batchId, stored) => tables.prepare(stored),
    write: (stored) => tables.write(stored),
    replace: (stored) => tables.replace(stored),
    check: async () => {
      await tables.ensureDay(dayOf(Date.now()));
    },
    rows: queries.rows,
    count: queries.count,
    countBy: queries.countBy,
    top: queries.top,
    histogram: queries.histogram,
    page: queries.page,
    retain,
    size: () => tables.size(),
    trim,
    deleteOrganization: (organizationId, limit) =>
      inTransaction(db, () => tables.deleteOrganization(organizationId, limit, 5_000)),
    exportParquet: (o) => exportThroughMemory(queries, o),
    close: async () => {},
  };
}
