// The batches of a bus consumer: messages are held (unacknowledged) until their events are
// accepted together, once the batch is full or has waited long enough; one batch is accepted
// at a time, in arrival order, so a consumer acknowledges in order. settle() then says which
// messages were accepted (a prefix: the accept path stops at its first failure) and which
// go back to the broker. After a failure the next batch waits (250 ms doubling to 10 s), and
// while it waits the broker's window (prefetch, max messages) bounds what is held.
import type { ProtocolEvent, ProtocolOutcome } from '../ingest/service.js';

export interface BatcherDeps<M> {
  accept(events: ProtocolEvent[]): Promise<ProtocolOutcome>;
  /** messages[0, accepted) were durably accepted; the rest were not (error: why). */
  settle(messages: M[], accepted: number, error: unknown): void;
  maxEvents: number;
  maxBytes: number;
  waitMs: number;
  /** Messages held at most (the broker's window). */
  window: number;
}

interface Held<M> {
  message: M;
  events: ProtocolEvent[];
}

const MIN_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 10_000;

/** How many messages, from the first, had every one of their events accepted. */
function acceptedMessages<M>(batch: Held<M>[], outcome: ProtocolOutcome): number {
  let i = 0;
  let n = 0;
  for (const h of batch) {
    for (let k = 0; k < h.events.length; k++) if (!outcome.accepted[i + k]) return n;
    i += h.events.length;
    n++;
  }
  return n;
}

export function createBatcher<M>(deps: BatcherDeps<M>) {
  let pending: Held<M>[] = [];
  let events = 0;
  let bytes = 0;
  let held = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let backoffMs = 0;
  let closing = false;
  let waiters: (() => void)[] = [];

  function schedule(): void {
    if (running || pending.length === 0) return;
    if (closing || events >= deps.maxEvents || bytes >= deps.maxBytes || held >= deps.window) {
      clearTimeout(timer);
      timer = undefined;
      running = run();
    } else if (!timer) {
      timer = setTimeout(() => {
        timer = undefined;
        if (!running && pending.length > 0) running = run();
      }, deps.waitMs);
    }
  }

  async function run(): Promise<void> {
    if (backoffMs > 0 && !closing) await new Promise((r) => setTimeout(r, backoffMs));
    const batch = pending;
    pending = [];
    events = 0;
    bytes = 0;
    let accepted = 0;
    let error: unknown;
    try {
      accepted = acceptedMessages(batch, await deps.accept(batch.flatMap((h) => h.events)));
    } catch (err) {
      error = err;
    }
    try {
      deps.settle(
        batch.map((h) => h.message),
        accepted,
        error ?? (accepted < batch.length ? new Error('not accepted: pipeline unavailable') : undefined),
      );
    } finally {
      held -= batch.length;
      backoffMs = accepted === batch.length ? 0 : Math.min(Math.max(backoffMs * 2, MIN_BACKOFF_MS), MAX_BACKOFF_MS);
      const wake = waiters;
      waiters = [];
      for (const w of wake) w();
      running = undefined;
      schedule();
    }
  }

  return {
    /** Holds a message with its events until they are accepted. */
    add(message: M, messageEvents: ProtocolEvent[]): void {
      pending.push({ message, events: messageEvents });
      held++;
      events += messageEvents.length;
      for (const e of messageEvents) bytes += e.bytes;
      schedule();
    },
    /** Resolves once fewer messages than the window are held. */
    room(): Promise<void> {
      if (held < deps.window) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    held: () => held,
    /** Accepts (or gives back) everything held, then resolves. */
    async close(): Promise<void> {
      closing = true;
      schedule();
      while (running) {
        await running;
        schedule();
      }
      for (const w of waiters.splice(0)) w();
    },
  };
}

export type Batcher<M> = ReturnType<typeof createBatcher<M>>;
