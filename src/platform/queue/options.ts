// Defaults and validation shared by both queue adapters, so a bad option fails the same
// way whichever backend runs (and before BullMQ's own, differently worded checks).
import { QueueOptionsError } from './errors.js';
import type { ConsumeOptions, JobOptions, RepeatOptions } from './port.js';

export const DEFAULT_ATTEMPTS = 3;
export const DEFAULT_BACKOFF_MS = 1000;
/** Upper bounds that keep every value inside a Postgres integer and a sane schedule. */
export const MAX_ATTEMPTS = 100;
export const DEFAULT_LEASE_MS = 30_000;
const MAX_MS = 2_147_483_647;

export interface ResolvedJobOptions {
  attempts: number;
  backoffMs: number;
  delayMs: number;
  jobId: string | undefined;
}

function integer(field: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new QueueOptionsError(field, `must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

// BullMQ rejects ids that look like integers (they collide with its generated ids) or hold
// ':' (its key separator); the database queue accepts anything, so both enforce BullMQ's rule.
function jobId(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length === 0 || value.length > 255) throw new QueueOptionsError('jobId', 'must be 1 to 255 characters');
  if (value.includes(':')) throw new QueueOptionsError('jobId', 'must not contain ":"');
  if (/^-?\d+$/.test(value)) throw new QueueOptionsError('jobId', 'must not be an integer');
  return value;
}

export function resolveJobOptions(options: JobOptions = {}): ResolvedJobOptions {
  return {
    attempts: integer('attempts', options.attempts, DEFAULT_ATTEMPTS, 1, MAX_ATTEMPTS),
    backoffMs: integer('backoffMs', options.backoffMs, DEFAULT_BACKOFF_MS, 0, MAX_MS),
    delayMs: integer('delayMs', options.delayMs, 0, 0, MAX_MS),
    jobId: jobId(options.jobId),
  };
}

export function resolveRepeat(key: string, options: RepeatOptions): number {
  if (key.length === 0 || key.length > 255 || key.includes(':')) {
    throw new QueueOptionsError('key', 'must be 1 to 255 characters without ":"');
  }
  return integer('everyMs', options.everyMs, 0, 1, MAX_MS);
}

export function resolveConcurrency(options: ConsumeOptions = {}): number {
  return integer('concurrency', options.concurrency, 1, 1, 1000);
}

export function queueName(name: string): string {
  if (name.length === 0 || name.length > 200 || name.includes(':')) {
    throw new QueueOptionsError('queue', 'must be 1 to 200 characters without ":"');
  }
  return name;
}

export interface LeaseTimings {
  /** How long a claim lives without renewal (database lease, BullMQ lockDuration). */
  holdMs: number;
  /** How often a running job's claim is renewed (heartbeat, BullMQ lockRenewTime). */
  renewMs: number;
  /** How often consumers look for expired claims (sweep, BullMQ stalledInterval). */
  checkMs: number;
}

/**
 * How the lease (WEIR_QUEUE_LEASE_MS) is spent, the same on both adapters, so that a job
 * held by a consumer that died is back in the queue within `leaseMs`: its claim expires
 * at most holdMs after the last renewal, and the next check comes at most checkMs later
 * (BullMQ needs a job marked by one check and still unlocked at the next: at most
 * max(holdMs, checkMs) + checkMs). Renewing at a third of the hold leaves two renewals of
 * slack for a busy event loop.
 */
export function leaseTimings(leaseMs: number = DEFAULT_LEASE_MS): LeaseTimings {
  const lease = integer('leaseMs', leaseMs, DEFAULT_LEASE_MS, 30, MAX_MS);
  const holdMs = Math.round((lease * 2) / 3);
  return { holdMs, renewMs: Math.max(10, Math.floor(holdMs / 3)), checkMs: lease - holdMs };
}

/** The text kept as a job's last error. */
export function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message || err.name : String(err);
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}
