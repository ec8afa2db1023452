// What the ledger's queued events cost the data path, per ingest batch: accepting a batch
// (its accepted_batches row and its normalize job in one transaction, modules/ingest/
// accept.ts) against enqueueing the job alone, and settling the row (the statement the
// normalization transaction adds): a transaction with it against one with a one-row update. On
// the database queue (PGlite in a directory, or PostgreSQL with DATABASE_URL); BullMQ's
// accept adds the same row with an asynchronous commit beside its Redis add.
//
//   npx tsx bench/accept.ts [--batches 60] [--runs 5] [--batch 500]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { newId } from '../src/core/ids.js';
import { createAcceptBatch } from '../src/modules/ingest/accept.js';
import { createIngestStore } from '../src/modules/ingest/store.js';
import { createNormalizationStore } from '../src/modules/normalization/store.js';
import { sql } from 'kysely';
import { NORMALIZE_JOB, NORMALIZE_QUEUE, type IngestBatch } from '../src/pipeline/envelope.js';
import { executor, inTransaction } from '../src/platform/db/ambient.js';
import { migrate, openDatabase } from '../src/platform/db/index.js';
import { DatabaseQueue } from '../src/platform/queue/database.js';

const { values } = parseArgs({
  options: {
    batches: { type: 'string', default: '60' },
    runs: { type: 'string', default: '5' },
    batch: { type: 'string', default: '500' },
  },
});
const batches = Number(values.batches);
const runs = Number(values.runs);
const batchSize = Number(values.batch);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const okta = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../src/connectors/okta/fixtures/system_log.json'), 'utf8'),
) as Record<string, unknown>[];
const events = Array.from({ length: batchSize }, (_, i) => okta[i % okta.length]!);
const batch = (): IngestBatch => ({
  id: newId(),
  organization_id: 1,
  integration_id: 1,
  platform: 'okta',
  stream: 'system_log',
  received_at: new Date().toISOString(),
  source: 'push',
  ids: events.map(() => newId()),
  events,
  bytes: 0,
});

const dir = process.env.DATABASE_URL ? undefined : mkdtempSync(path.join(tmpdir(), 'weir-bench-accept-'));
const database = await openDatabase({ url: process.env.DATABASE_URL, dataDir: dir, poolMax: 4 });
await migrate(database.db);
const db = database.db;
const queue = new DatabaseQueue({ db });
const accept = createAcceptBatch({ store: createIngestStore(db), queue, transaction: (fn) => inTransaction(db, fn) });
const normalization = createNormalizationStore(db);

async function perBatch(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < batches; i++) await fn();
  return (performance.now() - t0) / batches;
}

const enqueueMs: number[] = [];
const acceptMs: number[] = [];
const settleMs: number[] = [];
for (let run = 0; run < runs + 1; run++) {
  const accepted: IngestBatch[] = [];
  const enqueue = () =>
    perBatch(async () => {
      const b = batch();
      await queue.enqueue(NORMALIZE_QUEUE, NORMALIZE_JOB, b, { attempts: 10, jobId: b.id });
    });
  const acceptAll = () =>
    perBatch(async () => {
      const b = batch();
      accepted.push(b);
      await accept(b);
    });
  // Alternate the order, so drift on a shared machine does not favour one side.
  const [e, a] = run % 2 === 0 ? [await enqueue(), await acceptAll()] : [await acceptAll(), await enqueue()].reverse();
  let i = 0;
  const s = await perBatch(() => inTransaction(db, () => normalization.settleAccepted(accepted[i++]!)));
  // The normalization transaction writes anyway: the baseline writes one row too (its commit flushes the log as well).
  const base = await perBatch(() =>
    inTransaction(
      db,
      async () => void (await sql`update weir_migrations_lock set is_locked = is_locked`.execute(executor(db))),
    ),
  );
  // The first run warms up (JIT, caches, table files).
  if (run === 0) continue;
  enqueueMs.push(e!);
  acceptMs.push(a!);
  settleMs.push(s - base);
}
await queue.close();
await database.close();
if (dir) rmSync(dir, { recursive: true, force: true });

const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
const extra = median(acceptMs) - median(enqueueMs) + median(settleMs);
console.log(
  `node ${process.version}, ${database.kind}, ${batchSize} events/batch, median of ${runs} x ${batches} batches`,
);
console.log(
  `enqueue only ${fmt(median(enqueueMs))}  accept (row + job) ${fmt(median(acceptMs))}  settle (in a transaction) ${fmt(median(settleMs))}`,
);
console.log(`ledger cost per batch ${fmt(extra)} (${((extra * 1000) / batchSize).toFixed(2)} µs/event)`);
