// The worker side of normalization: the handler of ingest batches (NORMALIZE_QUEUE) and
// the housekeeping beat schedules (quarantine retention, raw-sample trimming).
import type { Tracer } from '@opentelemetry/api';
import type { Clock } from '../../core/clock.js';
import { extractTraceContext, inSpan } from '../../platform/telemetry/index.js';
import { NORMALIZE_JOB, NORMALIZE_QUEUE, type IngestBatch } from '../../pipeline/envelope.js';
import type { BeatTask, JobRegistration, NoPayload } from '../../platform/queue/jobs.js';
import { defineJobs, type JobQueue } from '../queues.js';
import type { NormalizationService } from './service.js';
import type { NormalizationStore } from './store.js';

export const NORMALIZATION_HOUSEKEEPING_QUEUE = 'normalization';
export const PURGE_QUARANTINE_JOB = 'normalization.purge_quarantine';
/** Normalized batches past their organization's retention (bounded storage until routing consumes them). */
export const PURGE_BATCHES_JOB = 'normalization.purge_batches';
export const TRIM_SAMPLES_JOB = 'normalization.trim_samples';

/** The ingest batches' queue (its name is the pipeline's: pipeline/envelope.ts). */
export interface NormalizeJobs {
  [NORMALIZE_QUEUE]: { [NORMALIZE_JOB]: IngestBatch };
}

export interface NormalizationJobs {
  [NORMALIZATION_HOUSEKEEPING_QUEUE]: {
    [PURGE_QUARANTINE_JOB]: NoPayload;
    [TRIM_SAMPLES_JOB]: NoPayload;
    [PURGE_BATCHES_JOB]: NoPayload;
  };
}

export const HOUSEKEEPING = {
  /** Quarantine retention when an organization has none (spec: 7 days). */
  defaultRetentionDays: 7,
  samplesPerStream: 50,
  sampleMaxAgeMs: 7 * 86_400_000,
  /** Rows per delete statement, and statements per run: a backlog drains over several runs. */
  deleteChunk: 10_000,
  maxChunksPerRun: 10,
} as const;

const HOUR = 3_600_000;

export function normalizeJobs(deps: {
  service: NormalizationService;
  tracer: Tracer;
  concurrency: number;
}): JobRegistration {
  const { service, tracer } = deps;
  return defineJobs({
    queue: NORMALIZE_QUEUE,
    role: 'worker',
    concurrency: deps.concurrency,
    handlers: {
      [NORMALIZE_JOB]: async (job) => {
        const batch = job.payload;
        // The span continues the trace of the request that accepted the batch.
        await inSpan(
          tracer,
          'normalize.batch',
          {
            attributes: {
              'weir.batch_id': batch.id,
              'weir.integration_id': batch.integration_id,
              'weir.stream': batch.stream,
              'weir.events': batch.events.length,
            },
          },
          async (span) => {
            const outcome = await service.normalize(batch);
            span.setAttributes({
              'weir.normalized': outcome.normalized,
              'weir.flagged': outcome.flagged,
              'weir.quarantined': outcome.quarantined,
              'weir.duplicate': outcome.duplicate,
            });
          },
          extractTraceContext(batch.trace),
        );
      },
    },
  });
}

/** Runs a bounded delete repeatedly until it comes back short or the run's budget is spent. */
async function drain(deleteChunk: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < HOUSEKEEPING.maxChunksPerRun; i++) {
    const n = await deleteChunk();
    total += n;
    if (n < HOUSEKEEPING.deleteChunk) break;
  }
  return total;
}

export function housekeeping(
  store: Pick<NormalizationStore, 'purgeQuarantine' | 'purgeBatches' | 'trimSamples'>,
  clock: Clock,
) {
  return {
    purgeQuarantine: () =>
      drain(() => store.purgeQuarantine(clock.now(), HOUSEKEEPING.defaultRetentionDays, HOUSEKEEPING.deleteChunk)),
    purgeBatches: () =>
      drain(() => store.purgeBatches(clock.now(), HOUSEKEEPING.defaultRetentionDays, HOUSEKEEPING.deleteChunk)),
    trimSamples: () =>
      drain(() =>
        store.trimSamples(
          HOUSEKEEPING.samplesPerStream,
          new Date(clock.now().getTime() - HOUSEKEEPING.sampleMaxAgeMs),
          HOUSEKEEPING.deleteChunk,
        ),
      ),
  };
}

export type Housekeeping = ReturnType<typeof housekeeping>;

export function housekeepingJobs(work: Housekeeping): JobRegistration {
  return defineJobs({
    queue: NORMALIZATION_HOUSEKEEPING_QUEUE,
    role: 'worker',
    concurrency: 1,
    handlers: {
      [PURGE_QUARANTINE_JOB]: async () => {
        await work.purgeQuarantine();
      },
      [TRIM_SAMPLES_JOB]: async () => {
        await work.trimSamples();
      },
      [PURGE_BATCHES_JOB]: async () => {
        await work.purgeBatches();
      },
    },
  });
}

/** One job per task per slot: a beat handover within the slot enqueues nothing new. */
export function housekeepingTasks(queue: JobQueue): BeatTask[] {
  const schedule = [
    { name: PURGE_QUARANTINE_JOB, everyMs: HOUR },
    { name: TRIM_SAMPLES_JOB, everyMs: HOUR / 4 },
    { name: PURGE_BATCHES_JOB, everyMs: HOUR },
  ] as const;
  return schedule.map(({ name, everyMs }) => ({
    name,
    everyMs,
    run: async (now: Date) => {
      const slot = Math.floor(now.getTime() / everyMs);
      await queue.enqueue(NORMALIZATION_HOUSEKEEPING_QUEUE, name, {}, { jobId: `${name}-${slot}`, attempts: 3 });
    },
  }));
}
