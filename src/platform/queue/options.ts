// Defaults and validation shared by both queue adapters, so a bad option fails the same
// way whichever backend runs (and before BullMQ's own, differently worded checks).
import { QueueOptionsError } from './errors.js';
import type { ConsumeOptions, JobOptions, RepeatOptions } from './port.js';

export const DEFAULT_ATTEMPTS = 3;
export const DEFAULT_BACKOFF_MS = 1000;
/** Upper bounds that keep every value inside a Postgres integer and a sane schedule. */
const MAX_ATTEMPTS = 100;
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

/** The text kept as a job's last error. */
export function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message || err.name : String(err);
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}
