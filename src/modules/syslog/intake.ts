// Durable acceptance for the syslog receiver: messages from every listener are gathered per
// (integration, stream) into ingest batches and handed to the same durable accept as push
// (modules/ingest/accept.ts). add() resolves once the message's batch is durably queued; that
// is when a RELP sender gets its `200 OK` and when a paused TCP connection reads again. A
// batch whose accept fails is retried (the connections that sent it stay paused), and none is
// offered while the normalize queue is over its limit, the disk is under its floor or a
// destination the integration feeds is over its backlog budget (the admission): backpressure
// reaches the sender instead of memory growing. UDP cannot be paused: its listener asks
// overloaded() first and counts what it drops.
import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { AcceptBatch, Admission, IngestBatch } from '../../pipeline/envelope.js';

export interface IntakeTarget {
  integrationId: number;
  organizationId: number;
  platform: string;
  stream: string;
}

export interface IntakeLimits {
  batchMaxEvents: number;
  batchMaxBytes: number;
  /** Waiting before a batch that is not full is accepted. */
  lingerMs: number;
  /** Events held (received, not yet accepted) beyond which overloaded() is true. */
  maxPendingEvents: number;
  maxPendingBatches: number;
}

export interface IntakeDeps {
  accept: AcceptBatch;
  clock: Clock;
  limits: IntakeLimits;
  /** Batches waiting in the normalize queue (read at most once a second by the caller's gauge). */
  queueDepth: () => Promise<number>;
  /** New events of an integration refused for now (disk floor, destination backlog budgets). */
  admission?: Admission | undefined;
  onError: (err: unknown, message: string) => void;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

interface Bucket {
  target: IntakeTarget;
  texts: string[];
  bytes: number;
  waiters: Waiter[];
  timer: NodeJS.Timeout | undefined;
}

const RETRY_MS = [100, 250, 500, 1000, 2000, 5000];

export class IntakeClosed extends Error {}

export function createIntake(deps: IntakeDeps) {
  const { limits } = deps;
  const buckets = new Map<string, Bucket>();
  const inflight = new Set<Promise<void>>();
  let pendingEvents = 0;
  let saturated = false;
  let closed = false;
  /** Set when stopping has waited long enough: accepts that keep failing give up. */
  let abandon = false;
  let depthCheck: Promise<void> | undefined;

  /** The integrations whose last accept waited for the admission, with its reason (logged once per spell). */
  const held = new Map<number, string>();

  async function admitted(integrationId: number): Promise<boolean> {
    const refused = await deps.admission?.check(integrationId).catch((err: unknown) => {
      deps.onError(err, 'could not read whether new events may come in');
      return undefined;
    });
    if (!refused) {
      held.delete(integrationId);
      return true;
    }
    if (held.get(integrationId) !== refused.code)
      deps.onError(refused, 'syslog events wait (connections are not read) until the pipeline takes them again');
    held.set(integrationId, refused.code);
    return false;
  }

  async function waitForRoom(integrationId: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (abandon) throw new IntakeClosed('the syslog receiver stopped before the pipeline took these events');
      depthCheck ??= deps
        .queueDepth()
        .then((d) => {
          saturated = d > limits.maxPendingBatches;
        })
        .catch((err: unknown) => deps.onError(err, 'could not read the normalize queue depth'))
        .finally(() => {
          depthCheck = undefined;
        });
      await depthCheck;
      if (!saturated && (await admitted(integrationId))) return;
      await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]).unref());
    }
  }

  async function acceptWithRetry(batch: IngestBatch): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      await waitForRoom(batch.integration_id);
      try {
        await deps.accept(batch);
        return;
      } catch (err) {
        deps.onError(err, 'could not accept a syslog batch; retrying');
        if (abandon) throw new IntakeClosed('the syslog receiver stopped before the pipeline took these events');
        await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]).unref());
      }
    }
  }

  function flush(key: string): void {
    const b = buckets.get(key);
    if (!b) return;
    buckets.delete(key);
    if (b.timer) clearTimeout(b.timer);
    const count = b.texts.length;
    const batch: IngestBatch = {
      id: newId(),
      organization_id: b.target.organizationId,
      integration_id: b.target.integrationId,
      platform: b.target.platform,
      stream: b.target.stream,
      received_at: deps.clock.now().toISOString(),
      source: 'push',
      ids: Array.from({ length: count }, newId),
      events: b.texts,
      bytes: b.bytes,
    };
    const done = acceptWithRetry(batch).then(
      () => {
        pendingEvents -= count;
        for (const w of b.waiters) w.resolve();
      },
      (err: unknown) => {
        pendingEvents -= count;
        for (const w of b.waiters) w.reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
    inflight.add(done);
    void done.finally(() => inflight.delete(done));
  }

  return {
    /** Queues events of one target; resolves once they are durably accepted. */
    add(target: IntakeTarget, texts: readonly string[], bytes: number): Promise<void> {
      if (closed) return Promise.reject(new IntakeClosed('the syslog receiver is stopping'));
      const key = `${target.integrationId}\u0000${target.stream}`;
      let b = buckets.get(key);
      if (!b) {
        b = { target, texts: [], bytes: 0, waiters: [], timer: undefined };
        buckets.set(key, b);
        b.timer = setTimeout(() => flush(key), limits.lingerMs);
      }
      for (const t of texts) b.texts.push(t);
      b.bytes += bytes;
      pendingEvents += texts.length;
      const p = new Promise<void>((resolve, reject) => b.waiters.push({ resolve, reject }));
      if (b.texts.length >= limits.batchMaxEvents || b.bytes >= limits.batchMaxBytes) flush(key);
      return p;
    },
    /** True when a message that cannot wait (UDP) should be dropped: too much held, the pipeline saturated, or the integration's events refused for now. */
    overloaded: (integrationId: number) =>
      pendingEvents >= limits.maxPendingEvents || saturated || deps.admission?.checkNow(integrationId) !== undefined,
    get pendingEvents() {
      return pendingEvents;
    },
    /**
     * Refuses new events, accepts what is gathered and waits for the accepts in flight; after
     * graceMs, accepts that keep failing give up (their senders were never acknowledged).
     */
    async close(graceMs: number): Promise<void> {
      closed = true;
      for (const key of [...buckets.keys()]) flush(key);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all([...inflight]), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
      abandon = true;
      await Promise.allSettled([...inflight]);
    },
  };
}

export type Intake = ReturnType<typeof createIntake>;
