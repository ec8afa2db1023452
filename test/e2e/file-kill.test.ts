// End-to-end: a file destination's writer killed with SIGKILL in the middle of delivery.
// After the restart every event the ingest endpoint acknowledged is in a finished `*.ndjson`
// file (at least once: duplicates are counted and reported), no `.ndjson.current` is left
// once the stream has drained and gone quiet, every line of every file is whole JSON, and
// the ledger balances. Embedded (`weir all` on PGlite) and distributed (PostgreSQL + Redis,
// the dispatcher a separate process replaced after the kill).
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../support/db.js';
import { createDestination, createRoute, ledgerTotals, seqOf, waitFor } from '../support/delivery-api.js';
import { setUpIngestion, storedEvents, type IngestSetup } from '../support/ingest.js';
import { createFleet, weirStarted, type WeirProcess } from '../support/process.js';
import { deletePrefix, uniquePrefix } from '../support/redis.js';

const distributed = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const BATCHES = 16;
const BATCH_SIZE = 500;
// Short periods so that the test waits seconds, not minutes: a writer's file is finished
// after 1 s without a batch, a dead writer's file 2 s after its last write.
const COMMON = {
  WEIR_DISPATCH_LEASE_MS: '3000',
  WEIR_QUEUE_LEASE_MS: '3000',
  WEIR_DISPATCH_POLL_MS: '100',
  WEIR_FILE_SINK_STALE_SECONDS: '2',
};

const fleet = createFleet(COMMON);
afterAll(() => fleet.cleanup());
const { start, startApi } = fleet;

const oktaFixtures = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../src/connectors/okta/fixtures/system_log.json'), 'utf8'),
) as Record<string, unknown>[];

async function configure(url: string, setup: IngestSetup): Promise<void> {
  const headers = { cookie: setup.cookie };
  const destination = await createDestination(url, headers, {
    name: 'files',
    type: 'file',
    organization_id: setup.organizationId,
    // fsync on (the default): an acknowledged batch is on the disk. Files rotate every
    // 256 KiB, so some are finished by size before the kill.
    config: { path: 'siem/okta', prefix: 'okta', rotate_bytes: 262_144, idle_seconds: 1 },
    delivery: { max_events: 100, max_wait_ms: 20, concurrency: 2 },
  });
  await createRoute(url, headers, {
    name: 'all to files',
    organization_id: setup.organizationId,
    destination_ids: [destination],
  });
  // A route takes effect at the next dispatch cycle (a poll interval): let it.
  await new Promise((r) => setTimeout(r, 500));
}

interface OnDisk {
  finished: string[];
  leftovers: string[];
  /** Seq → how many times it is in finished files. */
  seqs: Map<string, number>;
  lines: number;
}

/** What the destination's directory holds; every line of a finished file must be whole JSON. */
function onDisk(dir: string): OnDisk {
  const names = (() => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  })();
  const finished = names.filter((n) => n.endsWith('.ndjson'));
  const seqs = new Map<string, number>();
  let lines = 0;
  for (const n of finished) {
    const text = readFileSync(path.join(dir, n), 'utf8');
    expect(text.endsWith('\n'), `${n} ends with a whole line`).toBe(true);
    for (const line of text.slice(0, -1).split('\n')) {
      const seq = seqOf(JSON.parse(line));
      seqs.set(seq, (seqs.get(seq) ?? 0) + 1);
      lines++;
    }
  }
  return { finished, leftovers: names.filter((n) => n.includes('.ndjson.current')), seqs, lines };
}

function currentFiles(dir: string): string[] {
  try {
    return readdirSync(dir).filter((n) => n.endsWith('.ndjson.current'));
  } catch {
    return [];
  }
}

/** Lines written so far, finished or not (to time the kill). */
function linesWritten(dir: string): number {
  let n = 0;
  try {
    for (const name of readdirSync(dir)) for (const c of readFileSync(path.join(dir, name))) if (c === 0x0a) n++;
  } catch {
    // not created yet
  }
  return n;
}

/**
 * Pushes every batch while watching the disk, and kills the dispatcher once some events are
 * written but far from all. Returns the acknowledged seqs and the current files at the kill.
 */
async function pushAndKill(
  url: string,
  setup: IngestSetup,
  dir: string,
  victim: WeirProcess,
): Promise<{ acknowledged: Set<string>; leftAtKill: string[]; linesAtKill: number }> {
  const acknowledged = new Set<string>();
  const token = setup.integrations[0]!.token;
  const pushing = (async () => {
    for (let b = 0; b < BATCHES; b++) {
      const lines: string[] = [];
      for (let i = 0; i < BATCH_SIZE; i++)
        lines.push(JSON.stringify({ ...oktaFixtures[i % oktaFixtures.length], weir_test_seq: `${b}-${i}` }));
      try {
        const res = await fetch(`${url}/api/ingest/system_log`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: lines.join('\n'),
        });
        if (res.status === 200) for (let i = 0; i < BATCH_SIZE; i++) acknowledged.add(`${b}-${i}`);
      } catch {
        // The process is gone (embedded: the API died with the dispatcher): not acknowledged.
      }
    }
  })();
  // Kill while a file is open: the case the recovery is for.
  const linesAtKill = await waitFor(
    'some events on the disk and a file open',
    async () => {
      const n = linesWritten(dir);
      return n >= 2 * BATCH_SIZE && currentFiles(dir).length > 0 ? n : undefined;
    },
    120_000,
    10,
  );
  victim.kill('SIGKILL');
  await victim.exited;
  const leftAtKill = currentFiles(dir);
  await pushing;
  return { acknowledged, leftAtKill, linesAtKill };
}

/** After the restart: drained, quiet, every acknowledged event in a finished file, nothing left open. */
async function expectEverythingFinished(
  url: string,
  setup: IngestSetup,
  dir: string,
  acknowledged: Set<string>,
  leftAtKill: string[],
  restarted: WeirProcess,
): Promise<void> {
  const totals = await waitFor(
    'the ledger to settle',
    async () => {
      const t = await ledgerTotals(url, { cookie: setup.cookie });
      return t.events_in >= acknowledged.size && t.pending === 0 ? t : undefined;
    },
    120_000,
    300,
  );
  expect(totals).toMatchObject({ dead_lettered: 0, filtered: 0, quarantined: 0, pending: 0, unaccounted: 0 });
  // Each event twice: to the files and to the organization's event store, which holds each exactly once.
  expect(totals.delivered).toBe(2 * totals.events_in);
  expect(await storedEvents(url, setup.cookie, setup.organizationId)).toEqual({
    events: totals.events_in,
    repeated: 0,
  });
  // Idle finish (1 s) and recovery of the killed writer's file (stale after 2 s).
  const disk = await waitFor(
    'every file finished',
    async () => {
      const d = onDisk(dir);
      return d.leftovers.length === 0 && [...acknowledged].every((s) => d.seqs.has(s)) ? d : undefined;
    },
    60_000,
    250,
  );
  // The killed writer's open files were finished (or removed, when the kill left no whole line) by the recovery.
  const recovered = restarted.lines
    .filter((l) => /a file left by a stopped writer/.test(String(l.msg)))
    .map((l) => path.basename(String(l.file)));
  expect(recovered).toEqual(expect.arrayContaining(leftAtKill));
  const duplicates = [...disk.seqs.values()].reduce((sum, n) => sum + n - 1, 0);
  expect(disk.lines).toBe(disk.seqs.size + duplicates);
  console.log(
    JSON.stringify({
      acknowledged: acknowledged.size,
      delivered: totals.delivered,
      lines: disk.lines,
      duplicates,
      files: disk.finished.length,
    }),
  );
}

describe('SIGKILL of a file destination writer in the middle of delivery', () => {
  // Embedded processes do not depend on the pass's adapters: the embedded pass runs this.
  it.skipIf(distributed)(
    'embedded: after a restart every acknowledged event is in a finished *.ndjson file, no torn line, nothing left open',
    async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-fkill-'));
      fleet.keepDir(dataDir);
      const env = { WEIR_DATA_DIR: dataDir, WEIR_FILE_SINK_ROOT: path.join(dataDir, 'files') };
      const first = await startApi('all', env);
      const setup = await setUpIngestion(first.url, ['okta']);
      const dir = path.join(dataDir, 'files', `org-${setup.organizationId}`, 'siem', 'okta');
      await configure(first.url, setup);
      const { acknowledged, leftAtKill, linesAtKill } = await pushAndKill(first.url, setup, dir, first.p);
      expect(leftAtKill.length).toBeGreaterThan(0);
      expect(acknowledged.size).toBeGreaterThan(linesAtKill);

      const second = await startApi('all', env);
      await expectEverythingFinished(second.url, setup, dir, acknowledged, leftAtKill, second.p);
      second.p.kill('SIGTERM');
      expect(await second.p.exited).toBe(0);
    },
    300_000,
  );

  it.runIf(distributed)(
    "distributed: a replaced dispatcher finishes the killed one's file; every acknowledged event is in a finished file",
    async () => {
      const db = await freshPostgresDatabase();
      const prefix = uniquePrefix();
      const root = mkdtempSync(path.join(tmpdir(), 'weir-fkill-'));
      fleet.keepDir(root);
      try {
        const env = {
          DATABASE_URL: db.url,
          REDIS_URL: process.env.REDIS_URL,
          WEIR_REDIS_PREFIX: prefix,
          WEIR_SECRET_KEY: 'ef'.repeat(32),
          WEIR_FILE_SINK_ROOT: root,
        };
        const api = await startApi('api', env);
        const worker = start('worker', env);
        const dispatcher = start('dispatcher', env);
        await Promise.all([worker.waitFor(weirStarted, 90_000), dispatcher.waitFor(weirStarted, 90_000)]);
        const setup = await setUpIngestion(api.url, ['okta']);
        const dir = path.join(root, `org-${setup.organizationId}`, 'siem', 'okta');
        await configure(api.url, setup);
        const { acknowledged, leftAtKill, linesAtKill } = await pushAndKill(api.url, setup, dir, dispatcher);
        expect(leftAtKill.length).toBeGreaterThan(0);
        expect(acknowledged.size).toBe(BATCHES * BATCH_SIZE);
        expect(linesAtKill).toBeLessThan(acknowledged.size);

        const replacement = start('dispatcher', env);
        await replacement.waitFor(weirStarted, 90_000);
        await expectEverythingFinished(api.url, setup, dir, acknowledged, leftAtKill, replacement);
        for (const p of [api.p, worker, replacement]) p.kill('SIGTERM');
        await Promise.all([api.p.exited, worker.exited, replacement.exited]);
      } finally {
        await deletePrefix(prefix);
        await db.drop();
      }
    },
    300_000,
  );
});
