// The circuit breaker of one lane (docs/delivery.md, Circuit breaker). A small state
// machine rather than cockatiel's CircuitBreakerPolicy: the lane must know BEFORE it claims
// rows whether it may send (an open breaker claims nothing, so it never costs an attempt),
// and cockatiel only moves from open to half-open inside execute(), keeps the opening time
// private and queues concurrent callers behind the half-open probe instead of refusing
// them. Here gate() answers that question and the half-open state admits one probe.
import type { BreakerSnapshot, BreakerState } from './engine-port.js';

export type Gate = { kind: 'go' } | { kind: 'probe' } | { kind: 'wait'; ms: number };

/** What a request ran under: a probe's outcome alone decides the half-open state. */
export interface Ticket {
  probe: boolean;
  /** Breaker generation when the request started: outcomes of requests begun before the breaker opened are ignored. */
  generation: number;
}

export class Breaker {
  private current: BreakerState = 'closed';
  private failures = 0;
  private openedAt: number | null = null;
  private probing = false;
  private generation = 0;

  constructor(
    private readonly threshold: number,
    private readonly cooldownMs: number,
    private readonly onChange: (from: BreakerState, to: BreakerState) => void = () => {},
  ) {}

  get state(): BreakerState {
    return this.current;
  }

  snapshot(): BreakerSnapshot {
    return {
      state: this.current,
      consecutive_failures: this.failures,
      opened_at: this.openedAt === null ? null : new Date(this.openedAt),
    };
  }

  /** May the lane claim and send now? Moves open → half_open once the cooldown is over. */
  gate(nowMs: number): Gate {
    if (this.current === 'closed') return { kind: 'go' };
    if (this.current === 'open') {
      const left = (this.openedAt ?? nowMs) + this.cooldownMs - nowMs;
      if (left > 0) return { kind: 'wait', ms: left };
      this.move('half_open');
    }
    return this.probing ? { kind: 'wait', ms: Number.POSITIVE_INFINITY } : { kind: 'probe' };
  }

  /** Call right before sending; `probe` when gate() answered probe. */
  begin(probe: boolean): Ticket {
    if (probe) this.probing = true;
    return { probe, generation: this.generation };
  }

  success(ticket: Ticket): void {
    if (ticket.probe) {
      this.probing = false;
      this.failures = 0;
      this.openedAt = null;
      this.move('closed');
      return;
    }
    if (this.current === 'closed' && ticket.generation === this.generation) this.failures = 0;
  }

  failure(ticket: Ticket, nowMs: number): void {
    if (ticket.probe) {
      this.probing = false;
      this.failures += 1;
      this.open(nowMs);
      return;
    }
    // A request begun before the breaker opened says nothing new about the destination.
    if (this.current !== 'closed' || ticket.generation !== this.generation) return;
    this.failures += 1;
    if (this.failures >= this.threshold) this.open(nowMs);
  }

  private open(nowMs: number): void {
    this.openedAt = nowMs;
    this.generation += 1;
    this.move('open');
  }

  private move(to: BreakerState): void {
    const from = this.current;
    if (from === to) return;
    this.current = to;
    this.onChange(from, to);
  }
}
