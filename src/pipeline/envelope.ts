// What travels through the data plane. An ingest batch is the unit of durable acceptance
// (one queue job); a normalized record is one event after normalization.

/** Queue that carries ingest batches to the normalization stage (worker role). */
export const NORMALIZE_QUEUE = 'normalize';
export const NORMALIZE_JOB = 'normalize.batch';

export type EventSource = 'push' | 'pull' | 'reprocess';

/** One queue job. `ids[i]` is the envelope id of `events[i]`. */
export interface IngestBatch {
  /** UUIDv7; also the queue job id, and the id of the normalized batch it produces. */
  id: string;
  organization_id: number;
  integration_id: number;
  platform: string;
  stream: string;
  /** RFC 3339 UTC. */
  received_at: string;
  source: EventSource;
  /** Time-ordered UUIDs (v7), one per event. */
  ids: string[];
  /**
   * Raw events, each a JSON object: pushed events as the text they were accepted as
   * (validated, never re-encoded: the one pass parses them), collected ones as objects.
   */
  events: (string | Record<string, unknown>)[];
  /** Bytes of the events as received (after decompression). */
  bytes: number;
  /**
   * Pulled batches: the vendor's id of each event (same order as events). The normalization
   * stage drops an event whose key it has seen within the deduplication period.
   */
  keys?: string[];
  /** W3C trace context of the accepting request, when telemetry is on. */
  trace?: Record<string, string>;
}

/**
 * Durable acceptance of one ingest batch (push and pull alike): once it resolves, the batch
 * is queued for normalization and the ledger counts its events as in and pending. It
 * throws when the batch was not accepted (nothing of it counted or queued).
 */
export type AcceptBatch = (batch: IngestBatch) => Promise<void>;

/** The envelope every event carries, raw or normalized. */
export interface Envelope {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  received_at: string;
}

/** One normalized event with its envelope, in memory during the one pass (pipeline/pass). */
export interface NormalizedRecord extends Envelope {
  /** null: the event was already OCSF and passed through without a mapping (docs/mappings.md). */
  mapping_version_id: string | null;
  /** false: invalid OCSF delivered under a lenient policy; `issues` says why. */
  valid: boolean;
  issues?: { path: string; kind: string; message: string }[];
  ocsf: Record<string, unknown>;
}

/** Why an event is quarantined. */
export const QUARANTINE_KINDS = [
  'no_mapping',
  'no_matching_rule',
  'cast_failed',
  'missing_required',
  'invalid_ocsf',
  'mapping_error',
  /** A `parse` step of the mapping could not read the event's text (the detail gives the step and the position). */
  'parse_failed',
] as const;
export type QuarantineKind = (typeof QUARANTINE_KINDS)[number];

/**
 * Whether new events of an integration may come in now: refused while the data directory's
 * disk is under its floor or a destination the integration feeds is over its backlog budget
 * (modules/delivery/backlog.ts). The refusal is the answer a push gets (503 with Retry-After);
 * syslog waits (TCP, RELP) or drops and counts (UDP), pull collection pauses.
 */
export interface Admission {
  /** Reads what it needs (at most once a second). */
  check(integrationId: number): Promise<Refusal | undefined>;
  /** From the last reading, without waiting: for what cannot wait (UDP). */
  checkNow(integrationId: number): Refusal | undefined;
}

/** An AppError (core/errors.ts): its message is the detail a user can act on. */
export interface Refusal extends Error {
  code: string;
}
