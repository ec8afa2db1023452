// The two brakes of push ingestion, so a saturated pipeline answers "retry later" instead
// of buffering without bound:
//   - an in-process budget of body bytes being read, parsed and enqueued at once (429);
//   - the depth of the normalize queue, read at most once per interval (503).
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { Admission } from '../../pipeline/envelope.js';

export interface Lease {
  /** Adds bytes to the lease; throws 429 when the process is over its budget. */
  grow(bytes: number): void;
  /** Returns the lease's bytes; idempotent. */
  release(): void;
}

export const BUSY_RETRY_AFTER_S = 1;
export const SATURATED_RETRY_AFTER_S = 5;

const busy = () =>
  new AppError('rate_limit.exceeded', {
    detail: `Ingestion in this process is at its in-flight byte budget; retry in ${BUSY_RETRY_AFTER_S} s`,
    details: { reason: 'inflight_bytes', retry_after_seconds: BUSY_RETRY_AFTER_S },
    headers: { 'retry-after': String(BUSY_RETRY_AFTER_S), connection: 'close' },
  });

/**
 * Bytes held by requests in flight. A request is refused when others already hold the
 * whole budget; a request alone is always let through, so a body larger than the budget
 * (but within the body limits) cannot be refused forever.
 */
export class InflightBudget {
  #used = 0;
  constructor(readonly limit: number) {}

  get used(): number {
    return this.#used;
  }

  /** A lease for one request; throws 429 at once when the budget is spent. */
  open(): Lease {
    if (this.#used >= this.limit) throw busy();
    let held = 0;
    let open = true;
    return {
      grow: (bytes) => {
        if (!open) return;
        held += bytes;
        this.#used += bytes;
        if (this.#used > this.limit && this.#used > held) throw busy();
      },
      release: () => {
        if (!open) return;
        open = false;
        this.#used -= held;
      },
    };
  }
}

export interface PendingGauge {
  /** Batches pending (waiting + delayed), read from the queue at most once per interval. */
  current(): Promise<number>;
  /** The last value without waiting (a read starts when one is due): for what cannot wait. */
  peek(): number;
  /** Counts batches this process enqueued since the last read (the read lags behind). */
  add(batches: number): void;
}

export function pendingGauge(
  read: () => Promise<number>,
  clock: Clock,
  intervalMs = 1000,
  onError?: (err: unknown) => void,
): PendingGauge {
  let value = 0;
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;
  function due(): void {
    const now = clock.now().getTime();
    if (!reading && now - readAt >= intervalMs) {
      readAt = now;
      // A failed read keeps the last value: the enqueue itself reports a queue that is down.
      reading = read()
        .then(
          (v) => {
            value = v;
          },
          onError ?? (() => undefined),
        )
        .finally(() => {
          reading = undefined;
        });
    }
  }
  return {
    async current() {
      due();
      if (reading) await reading;
      return value;
    },
    peek() {
      due();
      return value;
    },
    add(batches) {
      value += batches;
    },
  };
}

/** 503 while more events wait for normalization than the pipeline may hold (WEIR_INGEST_MAX_PENDING_EVENTS). */
export function queuedEventsOver(events: number, max: number): AppError {
  return new AppError('ingest.saturated', {
    detail: `The pipeline has ${events} events accepted and not yet normalized (limit ${max}, WEIR_INGEST_MAX_PENDING_EVENTS): what was accepted is kept; resend in ${SATURATED_RETRY_AFTER_S} s`,
    details: { pending_events: events, limit: max, retry_after_seconds: SATURATED_RETRY_AFTER_S },
    headers: { 'retry-after': String(SATURATED_RETRY_AFTER_S) },
  });
}

export function saturated(pending: number, max: number): AppError {
  return new AppError('ingest.saturated', {
    detail: `The pipeline has ${pending} batches waiting (limit ${max}); retry in ${SATURATED_RETRY_AFTER_S} s`,
    details: { pending_batches: pending, limit: max, retry_after_seconds: SATURATED_RETRY_AFTER_S },
    headers: { 'retry-after': String(SATURATED_RETRY_AFTER_S) },
  });
}

/**
 * Whether new events of an integration may come in (pipeline/envelope.ts Admission), in this
 * order: the disk guard, the events waiting for normalization (WEIR_INGEST_MAX_PENDING_EVENTS),
 * the destinations' backlog budgets (modules/delivery/backlog.ts).
 */
export function createAdmission(parts: {
  disk: { refusal(): AppError | undefined };
  queued: PendingGauge;
  maxPendingEvents: number;
  backlog: {
    refusal(integrationId: number): Promise<AppError | undefined>;
    refusalNow(integrationId: number): AppError | undefined;
  };
}): Admission {
  const queueFull = (events: number) =>
    events > parts.maxPendingEvents ? queuedEventsOver(events, parts.maxPendingEvents) : undefined;
  return {
    async check(integrationId) {
      const pending = await parts.queued.current();
      return parts.disk.refusal() ?? queueFull(pending) ?? (await parts.backlog.refusal(integrationId));
    },
    checkNow: (integrationId) =>
      parts.disk.refusal() ?? queueFull(parts.queued.peek()) ?? parts.backlog.refusalNow(integrationId),
  };
}
