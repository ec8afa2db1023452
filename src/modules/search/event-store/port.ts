// The event store's port (docs/search.md, decision 0058): what the search family, the one pass
// and the organization's data deletion need of the store of normalized events, whichever engine
// keeps it. Two adapters: embedded on DuckDB (duckdb/store.ts, the default with the embedded
// database) and distributed on PostgreSQL (postgres.ts, day partitions of `events`). A third
// (ClickHouse, say) implements the same interface and passes the same contract suite
// (contract.test.ts).
import type { Condition } from '../../../pipeline/conditions/types.js';
import type { StoredCopies } from '../../../pipeline/delivery/engine-port.js';

/** What a read is limited to: the caller's organizations, the query's time range and condition. */
export interface StoreScope {
  organizationIds: readonly number[];
  from: Date;
  to: Date;
  condition: Condition | null;
}

export interface StoredRow {
  event_id: string;
  time: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  /** The whole event, or, when fields were asked for, absent. */
  event?: Record<string, unknown>;
  /** The asked fields' values by path. */
  fields?: Record<string, unknown>;
}

export interface Bucket {
  key: Record<string, unknown>;
  count: number;
}

/** One stored event as replay reads it: its stored text and origin. */
export interface PagedEvent {
  event_id: string;
  time: Date;
  organization_id: number;
  integration_id: number;
  stream: string;
  line: string;
}

export interface RowsOptions {
  fields: string[] | null;
  sort: { field: string; order: 'asc' | 'desc' }[];
  limit: number;
  offset?: number;
}

/** What one retention run removed, by organization. */
export interface RetentionRemoved {
  /** Events removed, by organization id. */
  removed: Map<number, number>;
  /** Storage units dropped whole (PostgreSQL's day partitions), and those a running search held up. */
  dropped: string[];
  deferred: string[];
}

/** What one size trim removed: the events received first, across organizations. */
export interface TrimRemoved {
  /** Events removed, by organization id. */
  removed: Map<number, number>;
  /** Their bytes of event text (what size() counts). */
  bytes: number;
}

export interface ParquetExport {
  /** Files written, relative to the export's directory. */
  files: string[];
  rows: number;
}

export interface EventStore {
  readonly kind: 'duckdb' | 'postgres';

  // Writing. The pass calls prepare() before the batch's transaction and write() inside it.
  /** Before the batch's transaction: what the copies need (PostgreSQL: day partitions; DuckDB: the write itself, once per batch id). */
  prepare(batchId: string, stored: readonly StoredCopies[]): Promise<void>;
  /** Inside the batch's transaction (PostgreSQL inserts there; an engine outside the database wrote in prepare). */
  write(stored: readonly StoredCopies[]): Promise<void>;
  /** The lane's path (replays, copies routed outside the pass): replaces the events by id, so a resent batch is not stored twice. */
  replace(stored: StoredCopies): Promise<void>;
  /** Throws when the store cannot be read and written (the destination test). */
  check(): Promise<void>;

  // Reading, each bounded by the store's statement timeout.
  rows(scope: StoreScope, opts: RowsOptions): Promise<StoredRow[]>;
  count(scope: StoreScope): Promise<number>;
  countBy(scope: StoreScope, fields: string[], size: number): Promise<Bucket[]>;
  /** The most frequent values of a field; a [*] path counts every element; missing values left out. */
  top(scope: StoreScope, field: string, size: number): Promise<{ value: unknown; count: number }[]>;
  /** Events per interval from `from`, every bucket of the range (zeros included). */
  histogram(scope: StoreScope, intervalMs: number): Promise<{ start: string; count: number }[]>;
  /** Matching events in (time, event_id) order after a keyset position (replay). */
  page(scope: StoreScope, after: { time: Date; id: string } | null, limit: number): Promise<PagedEvent[]>;

  // Keeping.
  /** Removes what each organization's retention (days, counted from when Weir received the event) no longer keeps, and every event of an organization not listed (deleted). */
  retain(now: Date, retentionDays: ReadonlyMap<number, number>): Promise<RetentionRemoved>;
  /**
   * The bytes of event text the store holds: the sum of each stored event's JSON text length in
   * UTF-8 bytes, as the pass wrote it (kept in a column beside the event), so every engine
   * answers the same for the same events whatever its own file or page overhead.
   */
  size(): Promise<number>;
  /**
   * Removes the events received first, across organizations (oldest first, ties by event id),
   * until the store holds at most `maxBytes` of event text (size()); what it removed.
   */
  trim(maxBytes: number): Promise<TrimRemoved>;
  /** Removes up to `limit` of an organization's events; the count. */
  deleteOrganization(organizationId: number, limit: number): Promise<number>;
  /** Writes the organizations' events of a time range as Parquet in Amazon Security Lake's layout under `dir` (parquet-export.ts). */
  exportParquet(opts: {
    organizationIds: readonly number[];
    from: Date;
    to: Date;
    dir: string;
    region: string;
    accountId: string;
  }): Promise<ParquetExport>;
  close(): Promise<void>;
}

/** PostgreSQL-style error for a read that ran past the statement timeout (the runner reports it). */
export class StoreTimeout extends Error {
  readonly code = '57014';
  constructor(ms: number) {
    super(`canceling statement due to statement timeout (${ms} ms)`);
    this.name = 'StoreTimeout';
  }
}
