// Delivery housekeeping, scheduled by the beat and run by a worker (like normalization's):
// dead-lettered events past WEIR_DLQ_DAYS, lineage past WEIR_LINEAGE_DAYS, tap sessions
// and samples ten minutes after they expired, route and destination statistics past 30
// days, the hourly ledger (ledger_hours, the dashboard's hours) past 48 hours. Bounded
// deletes: a backlog drains over several runs.
import type { Clock } from '../../core/clock.js';
import type { BeatTask, JobRegistration, NoPayload } from '../../platform/queue/jobs.js';
import { defineJobs, type JobQueue } from '../queues.js';
import type { DeliveryStore } from './store.js';

export const DELIVERY_HOUSEKEEPING_QUEUE = 'delivery';
export const PURGE_DLQ_JOB = 'delivery.purge_dlq';
export const PURGE_LINEAGE_JOB = 'delivery.purge_lineage';
export const PURGE_TAPS_JOB = 'delivery.purge_taps';
export const PURGE_STATS_JOB = 'delivery.purge_stats';

/** The housekeeping jobs; the leftover batches' job (leftovers.ts) shares the queue and is enqueued by a migration only. */
export interface DeliveryJobs {
  [DELIVERY_HOUSEKEEPING_QUEUE]: {
    [PURGE_DLQ_JOB]: NoPayload;
    [PURGE_LINEAGE_JOB]: NoPayload;
    [PURGE_TAPS_JOB]: NoPayload;
    [PURGE_STATS_JOB]: NoPayload;
  };
}

export const DELIVERY_HOUSEKEEPING = {
  tapGraceMs: 10 * 60_000,
  statsDays: 30,
  /** Hours of the hourly ledger kept: the dashboard reads the last 25 (purged every 6 hours, so 48 to 54 are there). */
  ledgerHours: 48,
  deleteChunk: 10_000,
  maxChunksPerRun: 10,
} as const;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

async function drain(deleteChunk: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < DELIVERY_HOUSEKEEPING.maxChunksPerRun; i++) {
    const n = await deleteChunk();
    total += n;
    if (n < DELIVERY_HOUSEKEEPING.deleteChunk) break;
  }
  return total;
}

export function deliveryHousekeeping(
  store: Pick<DeliveryStore, 'purgeDlq' | 'purgeLineage' | 'purgeTaps' | 'purgeStats' | 'purgeLedgerHours'>,
  clock: Clock,
  retention: { dlqDays: number; lineageDays: number },
) {
  const ago = (ms: number) => new Date(clock.now().getTime() - ms);
  const chunk = DELIVERY_HOUSEKEEPING.deleteChunk;
  return {
    purgeDlq: () => drain(() => store.purgeDlq(ago(retention.dlqDays * DAY), chunk)),
    purgeLineage: () => drain(() => store.purgeLineage(ago(retention.lineageDays * DAY), chunk)),
    purgeTaps: () => drain(() => store.purgeTaps(ago(DELIVERY_HOUSEKEEPING.tapGraceMs), chunk)),
    purgeStats: async () =>
      (await drain(() => store.purgeStats(ago(DELIVERY_HOUSEKEEPING.statsDays * DAY), chunk))) +
      (await drain(() => store.purgeLedgerHours(ago(DELIVERY_HOUSEKEEPING.ledgerHours * HOUR), chunk))),
  };
}

export type DeliveryHousekeeping = ReturnType<typeof deliveryHousekeeping>;

export function deliveryHousekeepingJobs(work: DeliveryHousekeeping): JobRegistration {
  return defineJobs({
    queue: DELIVERY_HOUSEKEEPING_QUEUE,
    role: 'worker',
    concurrency: 1,
    handlers: {
      [PURGE_DLQ_JOB]: async () => void (await work.purgeDlq()),
      [PURGE_LINEAGE_JOB]: async () => void (await work.purgeLineage()),
      [PURGE_TAPS_JOB]: async () => void (await work.purgeTaps()),
      [PURGE_STATS_JOB]: async () => void (await work.purgeStats()),
    },
  });
}

/** One job per task per slot: a beat handover within the slot enqueues nothing new. */
export function deliveryHousekeepingTasks(queue: JobQueue): BeatTask[] {
  const schedule = [
    { name: PURGE_DLQ_JOB, everyMs: HOUR },
    { name: PURGE_LINEAGE_JOB, everyMs: HOUR },
    { name: PURGE_TAPS_JOB, everyMs: 5 * MINUTE },
    { name: PURGE_STATS_JOB, everyMs: 6 * HOUR },
  ] as const;
  return schedule.map(({ name, everyMs }) => ({
    name,
    everyMs,
    run: async (now: Date) => {
      const slot = Math.floor(now.getTime() / everyMs);
      await queue.enqueue(DELIVERY_HOUSEKEEPING_QUEUE, name, {}, { jobId: `${name}-${slot}`, attempts: 3 });
    },
  }));
}
