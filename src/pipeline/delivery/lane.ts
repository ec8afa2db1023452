// One destination's delivery lane in one dispatcher process (docs/delivery.md, Delivery
// lanes). A single pump claims the destination's due outbox rows with a lease (waiting up to
// max_wait_ms for a fuller batch) and hands each claim to a request; up to `concurrency`
// requests are in flight. Each outcome is applied in ONE transaction to the rows this lane
// still holds. Lanes share nothing but the database: a slow destination only slows itself.
import type { Tracer } from '@opentelemetry/api';
import type { Clock } from '../../core/clock.js';
import type { Redactor } from '../../core/redaction.js';
import type { Logger } from '../../platform/logger.js';
import { maskEvent } from '../mask.js';
import { DeliveryError, type Sink } from '../sinks/types.js';
import { Breaker, type Ticket } from './breaker.js';
import type {
  BreakerState,
  DeliveryKind,
  EngineMetrics,
  EngineStore,
  OutboxRow,
  TapSession,
  Transact,
} from './engine-port.js';
import {
  asDeliveryError,
  planRows,
  redactOutcome,
  settleRow,
  type RowSettlement,
  type SendOutcome,
} from './outcome.js';
import type { DestinationRuntime } from './ports.js';
import { buildSinkBatch, decodeRow, sliceLength, type Part } from './sink-batch.js';
import { Sleeper } from './sleeper.js';
import { endDeliverySpan, startDeliverySpan } from './trace.js';

export interface LaneDeps {
  destination: DestinationRuntime;
  sink: Sink;
  /** Lease owner id, unique to this lane instance. */
  owner: string;
  store: EngineStore;
  transact: Transact;
  clock: Clock;
  logger: Logger;
  metrics: EngineMetrics;
  pollMs: number;
  /**
   * The longest idle sleep: pollMs where other processes write the outbox; longer where this
   * process is the only writer (it wakes the lane), when the lane also sleeps only until its
   * next due row (a retry's backoff, an expired lease).
   */
  idleMs: number;
  leaseMs: number;
  lineage: boolean;
  /** The destination's redactor (sinks/secrets.ts): every text of an outcome goes through it before it is stored. */
  redact: Redactor;
  random?: () => number;
  /** The delivery spans' tracer (a no-op one records nothing). */
  tracer?: Tracer;
  onBreakerChange?: (destinationId: string, from: BreakerState, to: BreakerState) => void;
}

const HOUR = 3_600_000;
/** Shortest idle sleep when a row is due but another lane holds it, so an idle lane never spins. */
const MIN_IDLE_MS = 10;

export class Lane {
  readonly breaker: Breaker;
  private readonly sleeper = new Sleeper();
  private idle = false;
  /** A wake that came while the lane was deciding how long to sleep: the sleep is skipped. */
  private wakePending = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly hardStop = new AbortController();
  private taps: TapSession[] = [];
  private stopping = false;
  private abandoned = false;
  private pumping: Promise<void> = Promise.resolve();

  constructor(private readonly deps: LaneDeps) {
    const s = deps.destination.delivery;
    this.breaker = new Breaker(s.breaker_threshold, s.breaker_cooldown_ms, (from, to) => {
      deps.logger.info({ destination_id: this.id, from, to }, 'destination breaker changed state');
      deps.onBreakerChange?.(this.id, from, to);
    });
  }

  get id(): string {
    return this.deps.destination.id;
  }

  get version(): number {
    return this.deps.destination.version;
  }

  start(): void {
    this.pumping = this.pump();
  }

  /** Tap sessions open on this destination; samples already appended here are not forgotten. */
  setTaps(sessions: TapSession[]): void {
    const mine = new Map(this.taps.map((t) => [t.id, t.remaining]));
    this.taps = sessions
      .map((s) => ({ ...s, remaining: Math.min(s.remaining, mine.get(s.id) ?? s.remaining) }))
      .filter((s) => s.remaining > 0);
  }

  /** New rows were written in this process: an idle lane claims now instead of at its next poll. */
  wake(): void {
    if (!this.idle) return;
    this.wakePending = true;
    this.sleeper.wake();
  }

  /** Stops claiming, lets requests in flight finish (up to boundMs), then gives back every lease this lane holds. */
  async stop(boundMs: number): Promise<void> {
    this.stopping = true;
    this.sleeper.wake();
    await this.pumping;
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), boundMs)));
      const late = await Promise.race([Promise.all(this.inFlight).then(() => 'done' as const), bound]);
      clearTimeout(timer);
      if (late === 'late') {
        // Their rows are released below and delivered again by whoever claims them: at-least-once.
        this.abandoned = true;
        this.hardStop.abort(new DeliveryError('timeout', 'the dispatcher is stopping'));
        this.deps.logger.warn(
          { destination_id: this.id, requests: this.inFlight.size },
          'delivery lane stopped with requests in flight',
        );
      }
    }
    await this.deps.store
      .releaseDeliveries(this.id, this.deps.owner)
      .catch((err: unknown) =>
        this.deps.logger.warn({ err, destination_id: this.id }, 'releasing delivery leases failed'),
      );
    await this.deps.sink
      .close()
      .catch((err: unknown) => this.deps.logger.warn({ err, destination_id: this.id }, 'closing a sink failed'));
  }

  private get settings() {
    return this.deps.destination.delivery;
  }

  private leaseMs(): number {
    const s = this.settings;
    return Math.max(this.deps.leaseMs, s.max_wait_ms + s.timeout_ms + 5_000);
  }

  private async slot(): Promise<void> {
    await Promise.race([...this.inFlight, this.sleeper.sleep(this.deps.pollMs)]);
  }

  private async pump(): Promise<void> {
    const { store, logger } = this.deps;
    while (!this.stopping) {
      try {
        const before = this.breaker.state;
        const gate = this.breaker.gate(this.deps.clock.now().getTime());
        if (before === 'open' && this.breaker.state === 'half_open') await this.writeBreaker();
        if (gate.kind === 'wait') {
          if (Number.isFinite(gate.ms)) await this.sleeper.sleep(gate.ms);
          else await this.slot();
          continue;
        }
        const probe = gate.kind === 'probe';
        if (this.inFlight.size >= (probe ? 1 : this.settings.concurrency)) {
          await this.slot();
          continue;
        }
        const rows = await this.claim();
        if (rows.length === 0) {
          this.idle = true;
          this.wakePending = false;
          const ms = await this.idleFor();
          if (!this.wakePending) await this.sleeper.sleep(ms);
          this.idle = false;
          continue;
        }
        if (this.stopping || (!probe && this.breaker.state !== 'closed')) {
          // Stopping, or the breaker opened while this claim waited for more rows.
          await store.releaseDeliveries(
            this.id,
            this.deps.owner,
            rows.map((r) => r.id),
          );
          continue;
        }
        const ticket = this.breaker.begin(probe);
        // A finished request rewrote or removed its rows: an idle lane looks again (a retry's next attempt).
        const request: Promise<void> = this.request(rows, ticket).finally(() => {
          this.inFlight.delete(request);
          this.wake();
        });
        this.inFlight.add(request);
      } catch (err) {
        logger.warn({ err, destination_id: this.id }, 'delivery lane: claiming failed');
        await this.sleeper.sleep(this.deps.pollMs);
      }
    }
  }

  /** How long an idle lane sleeps: pollMs, or (a longer idleMs) until its next row is due. */
  private async idleFor(): Promise<number> {
    const { idleMs, pollMs } = this.deps;
    if (idleMs <= pollMs) return pollMs;
    const dueIn = await this.deps.store.nextDeliveryDue(this.id);
    return dueIn === null ? idleMs : Math.min(idleMs, Math.max(MIN_IDLE_MS, dueIn));
  }

  /** Due rows up to max_events / max_bytes; a partial batch younger than max_wait_ms waits for more. */
  private async claim(): Promise<OutboxRow[]> {
    const s = this.settings;
    const { store, owner } = this.deps;
    const rows = await store.claimDeliveries(
      this.id,
      owner,
      { events: s.max_events, bytes: s.max_bytes, firstAlways: true },
      this.leaseMs(),
    );
    if (rows.length === 0 || s.max_wait_ms === 0) return rows;
    const events = rows.reduce((n, r) => n + r.event_count, 0);
    const bytes = rows.reduce((n, r) => n + r.bytes, 0);
    const wait = s.max_wait_ms - Math.max(...rows.map((r) => r.age_ms));
    if (events >= s.max_events || bytes >= s.max_bytes || wait <= 0) return rows;
    await this.sleeper.sleep(wait);
    if (this.stopping) return rows;
    const more = await store.claimDeliveries(
      this.id,
      owner,
      { events: s.max_events - events, bytes: s.max_bytes - bytes, firstAlways: false },
      this.leaseMs(),
    );
    return [...rows, ...more];
  }

  private async request(rows: OutboxRow[], ticket: Ticket): Promise<void> {
    const { logger, metrics } = this.deps;
    const s = this.settings;
    const span = startDeliverySpan(this.deps.tracer, this.deps.destination, rows);
    let events = 0;
    let sent: SendOutcome | undefined;
    try {
      const parts: Part[] = [];
      for (const row of rows) {
        const { lines, ids } = await decodeRow(row);
        // Only the first row can exceed the budget (the claim stops before any other would).
        const take = parts.length === 0 ? sliceLength(lines, s.max_events, s.max_bytes) : lines.length;
        parts.push({ row, lines, ids, take });
      }
      const batch = buildSinkBatch(parts);
      events = batch.ids.length;
      const started = performance.now();
      try {
        sent = { ok: true, result: await this.send(batch) };
      } catch (err) {
        sent = { ok: false, error: asDeliveryError(err) };
      }
      sent = redactOutcome(sent, this.deps.redact);
      const durationMs = performance.now() - started;
      endDeliverySpan(span, events, sent);
      if (this.abandoned) return;
      const now = this.deps.clock.now().getTime();
      if (sent.ok) this.breaker.success(ticket);
      else {
        this.breaker.failure(ticket, now);
        metrics.failure(this.id, sent.error.kind);
      }
      const tapWanted = sent.ok && this.taps.length > 0;
      const plans = planRows(parts, sent, s, this.deps.random);
      const settlements = await Promise.all(plans.map((p) => settleRow(p, durationMs, tapWanted)));
      await this.settle(settlements, sent, durationMs);
    } catch (err) {
      if (!sent) endDeliverySpan(span, events, undefined);
      // The rows stay leased and come back after the lease: at-least-once.
      logger.error({ err, destination_id: this.id }, 'delivery request could not be settled');
    }
  }

  /**
   * sink.send under timeout_ms; a sink that ignores the signal is not waited for. The timer
   * is cleared as soon as the request ends (AbortSignal.timeout's would live on for
   * timeout_ms after every request).
   */
  private send(batch: ReturnType<typeof buildSinkBatch>) {
    const ms = this.settings.timeout_ms;
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new DeliveryError('timeout', `no answer within ${ms} ms`)), ms);
    timer.unref();
    const signal = AbortSignal.any([timeout.signal, this.hardStop.signal]);
    return new Promise<Awaited<ReturnType<Sink['send']>>>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(
          signal.reason instanceof DeliveryError
            ? signal.reason
            : new DeliveryError('timeout', `no answer within ${ms} ms`),
        );
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.deps.sink
        .send(batch, signal)
        .then(resolve, reject)
        .finally(() => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
        });
    });
  }

  private async settle(settlements: RowSettlement[], sent: SendOutcome, durationMs: number): Promise<void> {
    const { store, clock, logger, metrics } = this.deps;
    const at = clock.now();
    const hour = new Date(Math.floor(at.getTime() / HOUR) * HOUR);
    const mine = await this.deps.transact(async () => {
      const owned = await store.lockOwned(
        settlements.map((x) => x.rowId),
        this.deps.owner,
      );
      const kept = settlements.filter((x) => owned.has(x.rowId));
      await store.deleteDeliveries(
        kept.filter((x) => x.remove).map((x) => x.rowId),
        this.deps.owner,
      );
      await store.rewriteDeliveries(
        kept.flatMap((x) => (x.rewrite ? [x.rewrite] : [])),
        this.deps.owner,
      );
      await store.insertDlq(kept.flatMap((x) => x.dlq));
      await store.addLedger(
        kept.flatMap((x) => x.ledger),
        at,
      );
      const shadow = (x: RowSettlement) => x.kind === 'shadow';
      await store.addDestinationStats(
        {
          destination_id: this.id,
          delivered: kept.reduce((n, x) => n + (shadow(x) ? 0 : x.delivered), 0),
          shadow_delivered: kept.reduce((n, x) => n + (shadow(x) ? x.delivered : 0), 0),
          bytes: kept.reduce((n, x) => n + x.deliveredBytes, 0),
          dead_lettered: kept.reduce((n, x) => n + x.deadLettered, 0),
          requests: 1,
          failed_requests: sent.ok ? 0 : 1,
          latency_ms: Math.round(durationMs),
        },
        hour,
      );
      await store.writeDestinationState(this.id, this.breaker.snapshot(), {
        at,
        ok: sent.ok,
        error: sent.ok ? null : sent.error.message.slice(0, 1000),
      });
      if (this.deps.lineage) await store.insertAttempts(kept.map((x) => x.attempt));
      return kept;
    });
    if (mine.length < settlements.length) {
      logger.warn(
        { destination_id: this.id, rows: settlements.length - mine.length },
        'delivery lease lost before the outcome was recorded: the outcome is discarded and those events may be delivered twice',
      );
    }
    const sentByKind = new Map<DeliveryKind, number>();
    const dlqByKind = new Map<string, number>();
    for (const x of mine) {
      if (x.delivered > 0) sentByKind.set(x.kind, (sentByKind.get(x.kind) ?? 0) + x.delivered);
      for (const [kind, n] of x.dlqKinds) dlqByKind.set(kind, (dlqByKind.get(kind) ?? 0) + n);
    }
    for (const [kind, n] of sentByKind) metrics.sent(this.id, kind, n);
    for (const [kind, n] of dlqByKind) metrics.deadLettered(this.id, kind, n);
    if (this.taps.length > 0) await this.sample(mine.flatMap((x) => x.deliveredLines));
  }

  /** Masked copies of what was just delivered, for the open tap sessions (never the credential: only events). */
  private async sample(lines: string[]): Promise<void> {
    const rows: { session_id: string; destination_id: string; event: string }[] = [];
    for (const tap of this.taps) {
      const n = Math.min(tap.remaining, lines.length);
      for (let i = 0; i < n; i++) {
        rows.push({
          session_id: tap.id,
          destination_id: this.id,
          event: JSON.stringify(maskEvent(JSON.parse(lines[i]!) as Record<string, unknown>)),
        });
      }
      tap.remaining -= n;
    }
    this.taps = this.taps.filter((t) => t.remaining > 0);
    if (rows.length === 0) return;
    await this.deps.store
      .insertTapSamples(rows)
      .catch((err: unknown) => this.deps.logger.warn({ err, destination_id: this.id }, 'writing tap samples failed'));
  }

  private async writeBreaker(): Promise<void> {
    await this.deps.store
      .writeDestinationState(this.id, this.breaker.snapshot(), null)
      .catch((err: unknown) =>
        this.deps.logger.warn({ err, destination_id: this.id }, 'writing the breaker state failed'),
      );
  }
}
