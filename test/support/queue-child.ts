// A consumer process that dies mid-job, for the stalled-job recovery contract test.
// Run: node --import tsx test/support/queue-child.ts '<ChildSpec JSON>'
// It builds the adapter, enqueues one job (a no-op when the job exists: a second child
// takes over the first one's job), consumes it with a handler that never finishes and
// prints `started <jobId> <attempt>`; the test then kills it with SIGKILL.
import { openDatabase, migrate, type Database } from '../../src/platform/db/index.js';
import { BullMqQueue } from '../../src/platform/queue/bullmq.js';
import { DatabaseQueue } from '../../src/platform/queue/database.js';
import type { QueuePort } from '../../src/platform/queue/port.js';

export interface ChildSpec {
  backend: 'database' | 'bullmq';
  /** database: a PGlite directory, or a PostgreSQL URL. */
  dataDir?: string;
  databaseUrl?: string;
  /** bullmq */
  redisUrl?: string;
  prefix?: string;
  queue: string;
  jobId: string;
  /** Attempts of the job; default 3. */
  attempts?: number;
  leaseMs: number;
}

const spec = JSON.parse(process.argv[2] ?? '') as ChildSpec;
let database: Database | undefined;
let queue: QueuePort;
if (spec.backend === 'database') {
  database = await openDatabase({ url: spec.databaseUrl, dataDir: spec.dataDir, poolMax: 2 });
  await migrate(database.db);
  queue = new DatabaseQueue({ db: database.db, leaseMs: spec.leaseMs, pollIntervalMs: 50 });
} else {
  queue = new BullMqQueue({ redisUrl: spec.redisUrl ?? '', prefix: spec.prefix ?? '', leaseMs: spec.leaseMs });
}

await queue.enqueue(
  spec.queue,
  'stall',
  { from: 'child' },
  { jobId: spec.jobId, attempts: spec.attempts ?? 3, backoffMs: 10 },
);
queue.consume(spec.queue, async (job) => {
  console.log(`started ${job.id} ${job.attempt}`);
  await new Promise(() => {});
});
// The handler's promise never settles; this keeps the process alive until it is killed.
setInterval(() => {}, 1000);
