// Overload, per mode (issue 28; docs/delivery.md, Backlog budgets): a destination answering in
// 5 s and one that is down, pushers at full speed for a fixed time against a real `weir all`.
// Each destination's backlog stays within its budget (plus what was accepted before the gate
// saw it full, bounded by the normalize-queue limit), senders get 503 with Retry-After naming
// the reason, RSS and data stay bounded, and once the destinations recover every acknowledged
// event is delivered and the ledger, read through the API, balances.
// Embedded: `weir all` on PGlite. Distributed (DATABASE_URL and REDIS_URL set): `weir all` on
// PostgreSQL and Redis. bench/overload.ts runs the same scenario longer for the figures.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../support/db.js';
import { directoryBytes, runOverload, type OverloadFigures } from '../support/overload.js';
import { createFleet } from '../support/process.js';
import { deletePrefix, uniquePrefix } from '../support/redis.js';

const distributed = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const BUDGET = 4_000;
const PENDING_BATCHES = 8;
const BATCH_EVENTS = 500;
const EVENTS_PER_PUSH = 250;
const PUSHERS = 2;

const fleet = createFleet({
  WEIR_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
  WEIR_INGEST_MAX_PENDING_BATCHES: String(PENDING_BATCHES),
  WEIR_INGEST_BATCH_MAX_EVENTS: String(BATCH_EVENTS),
});
afterAll(() => fleet.cleanup());

function expectBounded(f: OverloadFigures): void {
  console.log(
    `overload figures: ${JSON.stringify({ ...f, ledger: { events_in: f.ledger.events_in, delivered: f.ledger.delivered, pending: f.ledger.pending, unaccounted: f.ledger.unaccounted } })}`,
  );
  expect(f.acknowledged).toBeGreaterThan(BUDGET);
  // Refused with Retry-After, because a destination was over its budget.
  expect(f.refusals['delivery.backlog_full'] ?? 0).toBeGreaterThan(0);
  expect(f.refusalsWithoutRetryAfter).toBe(0);
  expect(f.otherFailures).toBe(0);
  // The gate reads the outbox; what was accepted before it saw the budget full still arrives:
  // at most the normalize queue's limit, and one push per pusher in flight.
  const bound = BUDGET + PENDING_BATCHES * BATCH_EVENTS + 2 * PUSHERS * EVENTS_PER_PUSH;
  expect(f.backlogPeak.slow).toBeGreaterThan(0);
  expect(f.backlogPeak.down).toBeGreaterThanOrEqual(BUDGET);
  expect(Math.max(f.backlogPeak.slow!, f.backlogPeak.down!)).toBeLessThanOrEqual(bound);
  expect(f.rssPeakMiB).toBeLessThan(1_500);
  // What the run wrote stays in proportion to what was accepted (measured: ~50-95 MiB for ~12,000 events).
  expect(f.dataPeakMiB - f.dataStartMiB).toBeLessThan(400);
  // Nothing acknowledged is lost, and the ledger balances through the API.
  expect(f.missing).toEqual([]);
  expect(f.delivered).toBe(f.acknowledged);
  expect(f.ledger).toMatchObject({ pending: 0, unaccounted: 0, dropped: 0 });
}

describe('overload: a slow destination and a down one, pushers at full speed', () => {
  it.skipIf(distributed)(
    'embedded: backlogs stay within budget, senders are told to retry, and every acknowledged event is delivered after recovery',
    async () => {
      const dataDir = fleet.keepDir(mkdtempSync(path.join(tmpdir(), 'weir-overload-')));
      const { p, url } = await fleet.startApi('all', { WEIR_DATA_DIR: dataDir });
      const figures = await runOverload({
        url,
        pid: p.proc.pid!,
        dataSize: async () => directoryBytes(dataDir),
        pushMs: 15_000,
        pushers: PUSHERS,
        eventsPerPush: EVENTS_PER_PUSH,
        budgetEvents: BUDGET,
        drainTimeoutMs: 120_000,
      });
      expectBounded(figures);
    },
    240_000,
  );

  it.runIf(distributed)(
    'distributed (PostgreSQL + Redis): the same',
    async () => {
      const db = await freshPostgresDatabase();
      const prefix = uniquePrefix();
      const client = new pg.Client({ connectionString: db.url });
      try {
        const { p, url } = await fleet.startApi('all', {
          DATABASE_URL: db.url,
          REDIS_URL: process.env.REDIS_URL,
          WEIR_REDIS_PREFIX: prefix,
          WEIR_SECRET_KEY: 'ab'.repeat(32),
        });
        await client.connect();
        const dataSize = async () =>
          Number(
            (await client.query<{ n: string }>('select pg_database_size(current_database())::text as n')).rows[0]!.n,
          );
        const figures = await runOverload({
          url,
          pid: p.proc.pid!,
          dataSize,
          pushMs: 15_000,
          pushers: PUSHERS,
          eventsPerPush: EVENTS_PER_PUSH,
          budgetEvents: BUDGET,
          drainTimeoutMs: 120_000,
        });
        expectBounded(figures);
      } finally {
        await client.end().catch(() => undefined);
        await fleet.cleanup();
        await deletePrefix(prefix);
        await db.drop();
      }
    },
    240_000,
  );
});
