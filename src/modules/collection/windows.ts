// The arithmetic of a collection cycle, free of I/O so it is tested on its own: which window
// a date stream asks for next (watermark, default window, retention gap, settle delay, longest
// window), the stored cursor's shape, and how long a failing stream waits before its next try.
// docs/collection.md, "A collection cycle" and "Collector state".
import { createRedactor, redactAndCut } from '../../core/redaction.js';
import { DAY_MS, type StreamSpec } from '../../connectors/sdk.js';
import { backoffDelay } from '../../platform/net/retry.js';

/** The stored cursor of a date stream: the open window and the vendor's page token inside it. */
export interface DateCursor {
  from: string;
  to: string;
  page: string | null;
}

export interface WindowPlan {
  from: Date;
  to: Date;
  /** The vendor's page token inside the window (null: its first page). */
  page: string | null;
  /** Set when the start had fallen behind the vendor's retention: what can no longer be fetched. */
  gap?: { from: Date; to: Date };
}

export function encodeDateCursor(from: Date, to: Date, page: string | null): string {
  const c: DateCursor = { from: from.toISOString(), to: to.toISOString(), page };
  return JSON.stringify(c);
}

/** The stored date cursor, or null when there is none or it is not one (a cursor of another kind starts over from the watermark). */
export function parseDateCursor(raw: string | null): DateCursor | null {
  if (!raw) return null;
  try {
    const c = JSON.parse(raw) as Partial<DateCursor>;
    if (typeof c.from !== 'string' || typeof c.to !== 'string') return null;
    if (Number.isNaN(Date.parse(c.from)) || Number.isNaN(Date.parse(c.to))) return null;
    return { from: c.from, to: c.to, page: typeof c.page === 'string' ? c.page : null };
  } catch {
    return null;
  }
}

type WindowSpec = Pick<StreamSpec, 'defaultWindowMs' | 'retentionDays' | 'maxWindowMs' | 'settleMs'>;

/**
 * The window a date stream collects next, or null when it is caught up (nothing older than
 * now - settle is left). An open window (stored cursor) is resumed as it was; otherwise the
 * window starts at the watermark, or now - defaultWindow on a first run or after a reset.
 */
export function planWindow(
  spec: WindowSpec,
  state: { cursor: string | null; watermark_at: Date | null },
  now: Date,
): WindowPlan | null {
  const retentionLimit = new Date(now.getTime() - spec.retentionDays * DAY_MS);
  const open = parseDateCursor(state.cursor);
  // A window opened before a long stop may start before what the vendor still holds: then
  // it is abandoned like an old watermark.
  if (open && new Date(open.from) >= retentionLimit)
    return { from: new Date(open.from), to: new Date(open.to), page: open.page };
  const start = open ? new Date(open.from) : (state.watermark_at ?? new Date(now.getTime() - spec.defaultWindowMs));
  if (start < retentionLimit) {
    const plan = freshWindow(spec, retentionLimit, now);
    return plan && { ...plan, gap: { from: start, to: retentionLimit } };
  }
  return freshWindow(spec, start, now);
}

function freshWindow(spec: WindowSpec, from: Date, now: Date): WindowPlan | null {
  const settled = now.getTime() - spec.settleMs;
  const to = Math.min(settled, from.getTime() + spec.maxWindowMs);
  if (to <= from.getTime()) return null;
  return { from, to: new Date(to), page: null };
}

export const BACKOFF_BASE_MS = 30_000;
export const BACKOFF_MAX_MS = 3_600_000;

/**
 * How long a stream waits after its n-th failure in a row: the vendor's Retry-After when it
 * gave one (it knows best), else 30 s doubling up to an hour.
 */
export function backoffMs(consecutiveFailures: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined && retryAfterMs > 0) return Math.max(1_000, retryAfterMs);
  // Without jitter: one stream's schedule, shown to the administrator as it is.
  return backoffDelay({ attempt: consecutiveFailures, baseMs: BACKOFF_BASE_MS, maxMs: BACKOFF_MAX_MS, jitter: false });
}

/** The interval between a stream's cycles: the integration's setting, else the stream's, else the global default. */
export function intervalMs(
  config: Readonly<Record<string, unknown>>,
  spec: Pick<StreamSpec, 'intervalMs'>,
  defaultIntervalSeconds: number,
): number {
  const own = config.interval_seconds;
  if (typeof own === 'number' && Number.isFinite(own) && own > 0) return own * 1000;
  if (spec.intervalMs > 0) return spec.intervalMs;
  return defaultIntervalSeconds * 1000;
}

/** Removes secret values from a message (errors of non-vendor code could quote the config). */
export function redact(message: string, secrets: readonly string[]): string {
  return redactAndCut(createRedactor(secrets), message, 1001);
}
