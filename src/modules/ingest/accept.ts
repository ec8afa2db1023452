// Durable acceptance of an ingest batch, the one way batches enter the normalize queue
// (pushes here, pulls and backfills through acceptPulled): the batch's row in
// accepted_batches, which the ledger counts as events in and pending until the
// normalization transaction that writes its results deletes it, and its queue job, in
// one transaction. On the database queue the job joins that transaction, so both commit
// or neither. On BullMQ the job is added while the transaction is open: a refused add
// rolls the row back; a commit that fails after the add leaves a job without a row, whose
// events are counted once normalized and never twice.
import { NORMALIZE_JOB, NORMALIZE_QUEUE, type AcceptBatch, type IngestBatch } from '../../pipeline/envelope.js';
import type { JobQueue } from '../queues.js';
import type { IngestStore } from './store.js';

/** Normalize jobs retry for about 8.5 minutes of backoff before they fail. */
export const NORMALIZE_JOB_OPTIONS = { attempts: 10, backoffMs: 1000 } as const;

export interface AcceptDeps {
  store: Pick<IngestStore, 'addAccepted'>;
  queue: Pick<JobQueue, 'enqueue' | 'backend'>;
  /** Runs fn in a transaction, or joins the caller's. */
  transaction: <T>(fn: () => Promise<T>) => Promise<T>;
}

export function createAcceptBatch(deps: AcceptDeps): AcceptBatch {
  // On BullMQ the job in Redis is the durable acceptance and the row only the ledger's view
  // of it: its commit need not wait for a disk flush. A row lost to a database crash
  // undercounts pending until its batch is normalized (then counted in as usual), never
  // counts twice. On the database queue the row commits with the job, durably.
  const asyncCommit = deps.queue.backend === 'bullmq';
  return (batch: IngestBatch) =>
    deps.transaction(async () => {
      const row = {
        id: batch.id,
        organization_id: batch.organization_id,
        integration_id: batch.integration_id,
        stream: batch.stream,
        event_count: batch.events.length,
        accepted_at: new Date(batch.received_at),
      };
      await deps.store.addAccepted(row, { asyncCommit });
      await deps.queue.enqueue(NORMALIZE_QUEUE, NORMALIZE_JOB, batch, { ...NORMALIZE_JOB_OPTIONS, jobId: batch.id });
    });
}
