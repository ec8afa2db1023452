// The worker side of a backfill job. Under the job's lock (one worker at a time), for each
// stream: chunks of the stream's maxWindowMs over [from, to), page by page. A page's
// events are handed to acceptPulled (the normalize queue is the durable acceptance) and
// only then is the progress (chunk, vendor cursor, counts) written, so a worker killed at
// any point resumes from the first page not durably accepted: at most that page is fetched
// twice, and its vendor keys make the normalization stage drop the repeats. Cancel is
// checked before every page: the page in hand is finished, the next is not fetched. A run
// works for a slice of time, then queues the job again, so a stopping worker waits for at
// most one slice and long jobs take turns with other work.
import { createRedactor, redactAndCut } from '../../core/redaction.js';
import type { Clock } from '../../core/clock.js';
import { GLOBAL_SCOPE } from '../../core/scope.js';
import { compileCollectionFilters, type CompiledCollectionFilters } from '../../connectors/filters.js';
import type { ConnectorRuntime, OpenConnector } from '../../connectors/runtime.js';
import { streamOf, VendorError, type Connector, type StreamSpec } from '../../connectors/sdk.js';
import type { AcceptBatch } from '../../pipeline/envelope.js';
import { acceptPulled } from '../../pipeline/sources/pull.js';
import type { LockPort, Lease } from '../../platform/lock/port.js';
import type { Logger } from '../../platform/logger.js';
import type { VendorUsage } from '../../connectors/http.js';
import type { IntegrationRow } from '../integrations/store.js';
import { clampWarning, retentionLimit } from './service.js';
import type { BackfillJobRow, BackfillStore, Progress, StreamProgress } from './store.js';

export interface BackfillRunnerDeps {
  store: BackfillStore;
  clock: Clock;
  /** Durable acceptance of a page's batches (ingest's AcceptBatch). */
  accept: AcceptBatch;
  lock: LockPort;
  integrations: {
    find(scope: typeof GLOBAL_SCOPE, id: number): Promise<IntegrationRow | undefined>;
    collectTarget(
      row: IntegrationRow,
    ): Promise<{ config: Record<string, unknown>; secrets: string[]; tenantId: string | null }>;
  };
  connectorFor(platform: string): Connector | undefined;
  connectorRuntime: ConnectorRuntime;
  /** Queues backfill.run again after delayMs (rate limit, lock held elsewhere). */
  enqueueRun(jobId: string, delayMs: number): Promise<void>;
  lockTtlMs: number;
  /** How long one run works before handing the job back to the queue; default 30 s. */
  sliceMs?: number;
  logger?: Logger;
}

export interface Attempt {
  attempt: number;
  maxAttempts: number;
}

/** The worker stopped (shutdown, lost lease): the queue delivers the job again and it resumes from its progress. */
export class BackfillInterrupted extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackfillInterrupted';
  }
}

const DEFAULT_SLICE_MS = 30_000;
/** Used when a vendor says rate_limited without saying for how long. */
const DEFAULT_RATE_LIMIT_WAIT_MS = 60_000;

type Outcome = 'completed' | 'cancelled' | 'yield';
type StreamOutcome = 'done' | 'cancelled' | 'yield';

/** What one run of a job works with (built once the lock is held). */
interface RunContext {
  job: BackfillJobRow;
  integration: IntegrationRow;
  connector: Connector;
  progress: Progress;
  open: OpenConnector;
  filters: CompiledCollectionFilters;
  lease: Lease;
  signal: AbortSignal;
  /** performance.now() after which the run hands the job back to the queue (after at least one page). */
  sliceEndsAt: number;
  pagesThisRun: number;
}

function day(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function redact(text: string, secrets: readonly string[]): string {
  return redactAndCut(createRedactor(secrets), text, 2001);
}

export function createBackfillRunner(deps: BackfillRunnerDeps) {
  const { store, clock } = deps;
  const sliceMs = deps.sliceMs ?? DEFAULT_SLICE_MS;

  async function runStream(rc: RunContext, spec: StreamSpec): Promise<StreamOutcome> {
    const { job, open, signal } = rc;
    const p: StreamProgress = rc.progress[spec.name]!;
    const to = job.to_ts;
    const seen: VendorUsage = { ...open.usage };
    const usage = async (pages: number, events: number, filtered: number) => {
      const u = open.usage;
      await store.recordUsage({
        organizationId: job.organization_id,
        integrationId: job.integration_id,
        stream: spec.name,
        day: day(clock.now()),
        requests: u.requests - seen.requests,
        rateLimited: u.rateLimited - seen.rateLimited,
        errors: u.errors - seen.errors,
        bytes: u.bytes - seen.bytes,
        pages,
        events,
        filtered,
      });
      Object.assign(seen, u);
    };

    while (!p.done) {
      if (signal.aborted) throw new BackfillInterrupted('the worker is stopping');
      if (await store.cancelRequested(job.id)) return 'cancelled';
      if (rc.pagesThisRun > 0 && performance.now() > rc.sliceEndsAt) return 'yield';
      const now = clock.now();
      // The vendor's retention moves on while a job waits (rate limits): re-clamp between pages that have no token.
      const limit = retentionLimit(now, spec.retentionDays);
      if (p.cursor === null && new Date(p.chunk_from) < limit) {
        await store.addWarning(job.id, clampWarning(spec.name, spec.retentionDays, new Date(p.chunk_from), limit), now);
        p.chunk_from = limit.toISOString();
        p.chunk_to = null;
        p.clamped_from = p.chunk_from;
      }
      const from = new Date(p.chunk_from);
      if (from >= to) {
        p.done = true;
        await store.saveProgress(job.id, rc.progress, { events: 0, pages: 0 }, now);
        break;
      }
      const chunkTo = p.chunk_to
        ? new Date(p.chunk_to)
        : new Date(Math.min(from.getTime() + spec.maxWindowMs, to.getTime()));
      p.chunk_to = chunkTo.toISOString();

      let page;
      try {
        page = await rc.connector.fetchPage(open.ctx, {
          stream: spec.name,
          cursor: p.cursor,
          from,
          to: chunkTo,
          pageSize: spec.pageSize,
        });
      } catch (err) {
        if (signal.aborted) throw new BackfillInterrupted('the worker is stopping');
        await usage(0, 0, 0).catch(() => undefined);
        throw err;
      }
      if (page.keys.length !== page.events.length)
        throw new VendorError(
          'invalid_response',
          `${spec.name}: the connector returned ${page.events.length} events and ${page.keys.length} keys`,
        );
      if (page.next !== null && page.next === p.cursor)
        throw new VendorError('invalid_response', `${spec.name}: the vendor returned the same page token twice`);

      const events: Record<string, unknown>[] = [];
      const keys: string[] = [];
      for (let i = 0; i < page.events.length; i++) {
        if (rc.filters.drops(page.events[i]!)) continue;
        events.push(page.events[i]!);
        keys.push(page.keys[i]!);
      }
      const filtered = page.events.length - events.length;
      if (events.length > 0) {
        await acceptPulled(deps.accept, clock, {
          organizationId: job.organization_id,
          integrationId: job.integration_id,
          platform: rc.integration.platform,
          stream: spec.name,
          events,
          keys,
        });
      }
      // Accepted: now the resume point may move past this page.
      p.events += events.length;
      p.filtered += filtered;
      p.pages += 1;
      rc.pagesThisRun += 1;
      if (page.next !== null) {
        p.cursor = page.next;
      } else {
        p.chunk_from = chunkTo.toISOString();
        p.chunk_to = null;
        p.cursor = null;
        if (chunkTo >= to) p.done = true;
      }
      await store.saveProgress(job.id, rc.progress, { events: events.length, pages: 1 }, clock.now());
      await usage(1, events.length, filtered);
      if (!(await rc.lease.renew(deps.lockTtlMs))) throw new BackfillInterrupted('the job lock was lost');
    }
    return 'done';
  }

  async function runLocked(
    job: BackfillJobRow,
    signal: AbortSignal,
    lease: Lease,
    secrets: string[],
  ): Promise<Outcome> {
    const integration = await deps.integrations.find(GLOBAL_SCOPE, job.integration_id);
    if (!integration) throw new VendorError('config', 'the integration no longer exists');
    if (!integration.is_active) throw new VendorError('config', 'the integration is not active');
    const connector = deps.connectorFor(integration.platform);
    if (!connector) throw new VendorError('config', `platform "${integration.platform}" has no connector`);
    let filters: CompiledCollectionFilters;
    try {
      filters = compileCollectionFilters(integration.collection_filters);
    } catch (err) {
      throw new VendorError('config', `the integration's collection filters are not valid: ${(err as Error).message}`);
    }
    const target = await deps.integrations.collectTarget(integration);
    secrets.push(...target.secrets);
    const open = deps.connectorRuntime.open(
      { key: integration.id, config: target.config, secrets: target.secrets, tenantId: target.tenantId },
      signal,
    );
    const rc: RunContext = {
      job,
      integration,
      connector,
      progress: (job.progress ?? {}) as Progress,
      open,
      filters,
      lease,
      signal,
      sliceEndsAt: performance.now() + sliceMs,
      pagesThisRun: 0,
    };
    try {
      for (const name of job.streams as string[]) {
        const p = rc.progress[name];
        if (!p || p.done) continue;
        const spec = streamOf(connector, name);
        if (!spec) {
          p.done = true;
          await store.addWarning(job.id, `${name}: the connector no longer has this stream; skipped`, clock.now());
          await store.saveProgress(job.id, rc.progress, { events: 0, pages: 0 }, clock.now());
          continue;
        }
        const outcome = await runStream(rc, spec);
        if (outcome !== 'done') return outcome;
      }
      return 'completed';
    } finally {
      await open.close();
    }
  }

  return {
    /** Runs (or resumes) a job; throws only what the queue should retry (interruption, infrastructure). */
    async run(jobId: string, signal: AbortSignal, attempt: Attempt): Promise<void> {
      const row = await store.getById(jobId);
      if (!row || row.status === 'completed' || row.status === 'failed' || row.status === 'cancelled') return;
      if (row.cancel_requested) {
        await store.finish(jobId, 'cancelled', null, clock.now());
        return;
      }
      const lease = await deps.lock.acquire(`backfill:${jobId}`, deps.lockTtlMs);
      if (!lease) {
        // Another worker runs it, or one that died still holds the lock until its TTL: look again then.
        await deps.enqueueRun(jobId, deps.lockTtlMs);
        return;
      }
      const secrets: string[] = [];
      const lastAttempt = attempt.attempt >= attempt.maxAttempts;
      try {
        const job = await store.start(jobId, clock.now());
        if (!job) return;
        const outcome = await runLocked(job, signal, lease, secrets);
        if (outcome === 'yield') {
          // A slice is over: the job goes back to the queue (behind other work) and a stopping worker is not held up by it.
          await deps.enqueueRun(jobId, 0);
          return;
        }
        await store.finish(jobId, outcome, null, clock.now());
        deps.logger?.info({ backfillJobId: jobId, outcome }, 'backfill job finished');
      } catch (err) {
        const message = redact(err instanceof Error ? err.message : String(err), secrets);
        if (err instanceof VendorError && err.kind === 'rate_limited' && !signal.aborted) {
          const waitMs = err.details.retryAfterMs ?? DEFAULT_RATE_LIMIT_WAIT_MS;
          const now = clock.now();
          const resumeAt = new Date(now.getTime() + waitMs);
          if (await store.requeue(jobId, resumeAt, now)) {
            await store.addWarning(jobId, `rate limited by the vendor; resuming at ${resumeAt.toISOString()}`, now);
            await deps.enqueueRun(jobId, waitMs);
          }
          return;
        }
        if (err instanceof VendorError && err.kind !== 'unavailable' && !signal.aborted) {
          // The vendor refused (credentials, request, answer): retrying the same call will not help.
          await store.finish(jobId, 'failed', message, clock.now());
          deps.logger?.warn({ backfillJobId: jobId, kind: err.kind, error: message }, 'backfill job failed');
          return;
        }
        // Interrupted, vendor unavailable or our own infrastructure: the queue delivers it again
        // (with backoff) and it resumes from its progress; after the last attempt it is failed.
        if (!lastAttempt) throw err;
        await store
          .finish(jobId, 'failed', `stopped after ${attempt.maxAttempts} attempts: ${message}`, clock.now())
          .catch(() => undefined);
        throw err;
      } finally {
        await lease.release().catch(() => undefined);
      }
    },
  };
}

export type BackfillRunner = ReturnType<typeof createBackfillRunner>;
