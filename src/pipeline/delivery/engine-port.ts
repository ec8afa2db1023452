// What the delivery engine (its lanes) and the routing write need from storage and telemetry, as
// interfaces: modules/delivery/store.ts and metrics.ts implement them. Every method joins
// the ambient transaction when one is open, so one unit of work spans several calls.
import type { RouteSpec } from '../route/types.js';

/** A change to the accounting ledger (modules/delivery/ledger.ts LedgerDelta). */
export interface LedgerEntry {
  organization_id: number;
  integration_id: number;
  stream: string;
  outcome:
    | 'filtered'
    | 'routed'
    | 'copies'
    | 'replayed'
    | 'delivered'
    | 'dead_lettered'
    | 'dropped'
    | 'shadow_delivered'
    | 'shadow_dropped';
  destination_id?: string;
  reason?: string;
  count: number;
}

/** replay: stored events re-delivered from the event store (docs/search.md). */
export type DeliveryKind = 'primary' | 'shadow' | 'reprocess' | 'replay';

/** The batch a routing write comes from: an ingest batch (the pass), a detection's findings, a leftover normalized batch. */
export interface SourceBatch {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
}

export interface NewDelivery {
  id: string;
  destination_id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  source_batch_id: string;
  kind: DeliveryKind;
  event_count: number;
  bytes: number;
  event_ids: string;
  events: string;
  /** W3C traceparent of the batch's trace, when it is traced: the delivery spans continue it. */
  trace_parent?: string | null;
}

export interface RouteStatDelta {
  route_id: string;
  organization_id: number;
  matched: number;
  sampled_out: number;
  /** Copies the route made for destinations that could receive them. */
  copies: number;
}

export interface LineageEventRow {
  event_id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  mapping_version_id: string | null;
  received_at: string;
  normalized_batch_id: string;
  routes: string[];
  filtered: string | null;
}

export interface LineageCopyRow {
  event_id: string;
  destination_id: string;
  delivery_batch_id: string;
  route_id: string | null;
  kind: DeliveryKind;
}

/** Everything routing one normalized batch writes, in one transaction. */
export interface RoutingWrite {
  batchId: string;
  /** `events` is '' until encodeDeliveries stores `bodies[i]` (the lines of deliveries[i]) in it. */
  deliveries: NewDelivery[];
  /** The lines of each delivery; rows with the same body share one array (encoded once). Emptied once encoded. */
  bodies: string[][];
  ledger: LedgerEntry[];
  routeStats: RouteStatDelta[];
  lineageEvents: LineageEventRow[];
  lineageCopies: LineageCopyRow[];
  /** Copies for destinations the pass writes itself (the event store), in the batch's transaction. */
  stored: StoredCopies[];
}

/**
 * One batch's copies for an inline destination (the event store: docs/search.md): written in
 * the batch's own transaction, so they count delivered at once. The columns queries filter on
 * most are read from the in-memory event by the pass; `lines` are the copies' JSON texts.
 */
export interface StoredCopies {
  destination_id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  ids: string[];
  lines: string[];
  /** Each event's time, epoch ms (its receipt time when the event's own is missing or absurd). */
  times: number[];
  /** When Weir received each event, epoch ms (retention counts from it). */
  received: number[];
  /** Each event's searched columns (stored-columns.ts STORED_COLUMNS order): the values' JSON texts. */
  columns: (string | null)[][];
  class_uid: (number | null)[];
  category_uid: (number | null)[];
  activity_id: (number | null)[];
  severity_id: (number | null)[];
  bytes: number;
}

/** Where inline copies go (the search module's event store). */
export interface InlineStore {
  /**
   * Before the batch's transaction: makes sure the storage the copies need exists (partitions),
   * or, for a store outside the database, writes them (once per batch id, so a batch whose
   * transaction failed and runs again is not stored twice).
   */
  prepare(batchId: string, stored: readonly StoredCopies[]): Promise<void>;
  /** Writes the copies; joins the open transaction. */
  write(stored: readonly StoredCopies[]): Promise<void>;
}

/** An outbox row claimed by a lane. */
export interface OutboxRow {
  id: string;
  destination_id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  kind: DeliveryKind;
  event_count: number;
  bytes: number;
  event_ids: string;
  /** The compressed body: base64 text, or its bytes when the row named them in the body log. */
  events: string | Buffer;
  attempts: number;
  /** How long ago the row was written (database clock), for the max_wait_ms rule. */
  age_ms: number;
  /** W3C traceparent of the batch that wrote the row, when it was traced. */
  trace_parent?: string | null;
}

/** A row that stays in the outbox after a request; content null keeps its events as they are. */
export interface RowRewrite {
  id: string;
  attempts: number;
  /** From now (database clock). */
  delay_ms: number;
  last_error: string | null;
  content: { event_count: number; bytes: number; event_ids: string; events: string } | null;
}

export interface DlqRow {
  id: string;
  destination_id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  event_id: string;
  delivery_batch_id: string;
  event: string;
  error_kind: string;
  reason: string;
  status_code: number | null;
  attempts: number;
}

export interface DestinationStatDelta {
  destination_id: string;
  delivered: number;
  bytes: number;
  requests: number;
  failed_requests: number;
  dead_lettered: number;
  shadow_delivered: number;
  latency_ms: number;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerSnapshot {
  state: BreakerState;
  consecutive_failures: number;
  opened_at: Date | null;
}

export interface AttemptRecord {
  at: Date;
  ok: boolean;
  error: string | null;
}

export interface LineageAttemptRow {
  id: string;
  delivery_batch_id: string;
  destination_id: string;
  attempt: number;
  outcome: 'delivered' | 'retry' | 'dead_lettered' | 'partial';
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface TapSession {
  id: string;
  destination_id: string;
  remaining: number;
}

export interface EngineStore {
  /** Changes whenever one of the organization's routes is added, removed or edited. */
  routesFingerprint(organizationId: number): Promise<string>;
  /** The organization's enabled routes in position order. */
  enabledRoutes(organizationId: number): Promise<RouteSpec[]>;
  insertDeliveries(rows: NewDelivery[]): Promise<void>;
  /** Milliseconds until the destination's next outbox row may be claimed (its attempt is due, its lease ran out); null when it has none. */
  nextDeliveryDue(destinationId: string): Promise<number | null>;
  addLedger(entries: LedgerEntry[], at: Date): Promise<void>;
  addRouteStats(rows: RouteStatDelta[], hour: Date): Promise<void>;
  insertLineage(events: LineageEventRow[], copies: LineageCopyRow[]): Promise<void>;

  /**
   * Leases the destination's oldest due rows, in order, while their sums stay within the
   * budget; the first row is taken whatever its size when `firstAlways`.
   */
  claimDeliveries(
    destinationId: string,
    owner: string,
    budget: { events: number; bytes: number; firstAlways: boolean },
    leaseMs: number,
  ): Promise<OutboxRow[]>;
  /** Locks the rows still leased by `owner` (for update) and returns their ids. */
  lockOwned(ids: string[], owner: string): Promise<Set<string>>;
  deleteDeliveries(ids: string[], owner: string): Promise<void>;
  rewriteDeliveries(rows: RowRewrite[], owner: string): Promise<void>;
  insertDlq(rows: DlqRow[]): Promise<void>;
  addDestinationStats(delta: DestinationStatDelta, hour: Date): Promise<void>;
  /** Breaker fields always; the attempt fields when a request was made. */
  writeDestinationState(destinationId: string, breaker: BreakerSnapshot, attempt: AttemptRecord | null): Promise<void>;
  insertAttempts(rows: LineageAttemptRow[]): Promise<void>;
  /** Clears the leases `owner` still holds on the destination's rows (all of them, or those ids). */
  releaseDeliveries(destinationId: string, owner: string, ids?: string[]): Promise<void>;

  openTaps(destinationIds: string[]): Promise<TapSession[]>;
  insertTapSamples(rows: { session_id: string; destination_id: string; event: string }[]): Promise<void>;
  /** Events waiting: routing (normalized batches an earlier version left pending) and each destination's outbox. */
  lag(): Promise<{ partition: string; events: number }[]>;
}

/** The engine's counters (modules/delivery/metrics.ts); gauges read the engine's state. */
export interface EngineMetrics {
  sent(destinationId: string, kind: DeliveryKind, events: number): void;
  failure(destinationId: string, reason: string): void;
  deadLettered(destinationId: string, errorKind: string, events: number): void;
}

/** Runs fn in one transaction (joined by every store call inside). */
export type Transact = <T>(fn: () => Promise<T>) => Promise<T>;
