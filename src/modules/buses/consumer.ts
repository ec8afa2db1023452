// What the bus consumers (rabbitmq.ts, nats.ts) share: their counters, what a running one
// offers the runner, and what they need from the process.
import type { NetPolicy } from '../../platform/net/policy.js';
import type { ProtocolEvent, ProtocolOutcome } from '../ingest/service.js';
import type { PushTarget } from '../ingest/tokens.js';
import { createBatcher } from './batcher.js';

export interface ConsumerCounters {
  /** Messages delivered by the broker (redeliveries included). */
  received: number;
  /** Messages whose events were durably accepted (and then acknowledged). */
  accepted: number;
  /** Messages that cannot be events: rejected without requeue (RabbitMQ) or terminated (NATS). */
  rejected: number;
  /** Messages given back to the broker to be delivered again (their events were not accepted). */
  released: number;
  /** Why the last message was rejected (never its content). */
  last_rejection: string | null;
  /** When the last message was received (epoch ms), 0 before the first. */
  last_message_ms: number;
}

export function newCounters(): ConsumerCounters {
  return { received: 0, accepted: 0, rejected: 0, released: 0, last_rejection: null, last_message_ms: 0 };
}

export interface RunningConsumer {
  counters: ConsumerCounters;
  /** Why the consumer stopped on its own (connection lost, consumer deleted); undefined while it runs. */
  failure(): string | undefined;
  /** Stops taking messages, accepts (and acknowledges) those held, disconnects. */
  close(): Promise<void>;
}

export interface ConsumerDeps {
  acceptFor(target: PushTarget, events: readonly ProtocolEvent[]): Promise<ProtocolOutcome>;
  /** The ingest batch limits (events, bytes) and the API's JSON depth limit. */
  maxEvents: number;
  maxBytes: number;
  maxDepth: number;
  /** Every broker connection goes through it (SSRF guard, WEIR_OUTBOUND_ALLOW_CIDRS). */
  net: NetPolicy;
  onRejected(reason: string): void;
}

/** A broker error as a short line for the state (no credentials: URLs are never in it). */
export function brokerError(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown };
  const text = typeof e?.message === 'string' && e.message !== '' ? e.message : String(err);
  return text.replace(/[a-z]+:\/\/[^\s@]*@/gi, '').slice(0, 300);
}

/** A consumer's batcher: accepts into `target` under the ingest limits and the spec's window and
 * wait, counts the messages accepted and released, and lets `settle` answer the broker. */
export function consumerBatcher<M>(
  deps: ConsumerDeps,
  target: PushTarget,
  spec: { window: number; batchWaitMs: number },
  counters: ConsumerCounters,
  settle: (messages: M[], accepted: number) => void,
) {
  return createBatcher<M>({
    accept: (events) => deps.acceptFor(target, events),
    settle(messages, accepted) {
      settle(messages, accepted);
      counters.accepted += accepted;
      counters.released += messages.length - accepted;
    },
    maxEvents: deps.maxEvents,
    maxBytes: deps.maxBytes,
    waitMs: spec.batchWaitMs,
    window: spec.window,
  });
}
