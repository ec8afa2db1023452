// The pull-collection path, in process: a container (createContainer, as a worker builds it)
// on a fresh database, one organization, one Okta integration with collect:true pointing at
// the Okta simulator in a CHILD process (test/support/vendors/okta-main.ts, so the vendor's
// CPU is not counted here) that holds --events system_log events. Per run:
//   collect      the engine's cycles (c.collection.engine.runCycle), one after the other until
//                the stream is caught up: vendor fetch + acceptance (ingest batches enqueued on
//                the normalize queue, durably). max_pages_per_cycle is raised so one cycle can
//                take the whole window.
//   normalize    the normalize queue's handlers (container.jobs) over the collected batches
//                (pulled: every event has its vendor key, looked up and remembered), then over
//                the same events pushed without keys to a second integration (source 'push'):
//                the ratio of the two is the cost of deduplication. The two alternate in order
//                from run to run (tables grow as a run goes on).
//   re-collect   the cursor reset (the collectors service), the same window collected again,
//                and its normalization: every event must be dropped as a duplicate.
// A short warm-up run comes first and is not counted.
// Rates are events per second of wall time and per CPU second of this process
// (process.cpuUsage: PGlite runs here; PostgreSQL's and Redis's own CPU is not counted, nor
// the simulator's, which is shown for reference). Medians of --runs; each run is checked:
// every event accepted, stream_counters events_in == events, duplicates == events after the
// re-collection.
// Embedded PGlite (on disk, in a temporary WEIR_DATA_DIR) by default; with DATABASE_URL
// (+ REDIS_URL: BullMQ) a fresh PostgreSQL database per run, dropped after.
//   npx tsx bench/collect.ts [--events 20000] [--runs 3]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { createContainer, type Container } from '../src/container.js';
import type { Actor } from '../src/core/actor.js';
import { newId } from '../src/core/ids.js';
import { GLOBAL_SCOPE } from '../src/core/scope.js';
import { NORMALIZE_JOB, NORMALIZE_QUEUE, type IngestBatch } from '../src/pipeline/envelope.js';
import { startConsumers } from '../src/roles/jobs.js';
import { deletePrefix } from '../test/support/redis.js';

const { values } = parseArgs({
  options: { events: { type: 'string', default: '20000' }, runs: { type: 'string', default: '3' } },
});
const total = Number(values.events);
const runs = Number(values.runs);
if (!Number.isInteger(total) || total < 1 || !Number.isInteger(runs) || runs < 1)
  throw new Error('--events and --runs must be positive integers');
const ROOT = path.resolve(import.meta.dirname, '..');
const STREAM = 'system_log';
const PUSH_BATCH = 1000; // the same size as a pulled page's batch (acceptPulled)
const cpuSeconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '-';

// ---------------------------------------------------------------------------------------
// The simulator child process and its CPU (Linux /proc; clock ticks of 1/100 s).
interface Simulator {
  url: string;
  config: Record<string, unknown>;
  proc: ChildProcess;
}

async function startSimulator(events: number): Promise<Simulator> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'test/support/vendors/okta-main.ts', String(events)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', resolve);
    proc.once('exit', (code) => reject(new Error(`okta-main exited with ${String(code)}`)));
  });
  const started = JSON.parse(line) as { url: string; config: Record<string, unknown>; ids: number };
  if (started.ids !== events) throw new Error(`the simulator holds ${started.ids} events, not ${events}`);
  return { url: started.url, config: started.config, proc };
}

function childCpu(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

const simRequests = async (sim: Simulator) =>
  ((await (await fetch(`${sim.url}/__sim/stats`)).json()) as { requests: number }).requests;

/** Every event the simulator holds, as Okta serves them (for the push comparison; not timed). */
async function vendorEvents(sim: Simulator): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  const since = new Date(Date.now() - 3_600_000).toISOString();
  let next: string | undefined = `${sim.url}/api/v1/logs?since=${since}&until=${new Date().toISOString()}&limit=1000`;
  while (next) {
    const res = await fetch(next, { headers: { authorization: `SSWS ${String(sim.config.api_token)}` } });
    if (!res.ok) throw new Error(`simulator answered ${res.status}`);
    out.push(...((await res.json()) as Record<string, unknown>[]));
    next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// A container on a fresh database.
async function admin(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  await client.query(text).finally(() => client.end());
}

interface Deployment {
  c: Container;
  close(): Promise<void>;
}

async function deploy(): Promise<Deployment> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-bench-collect-'));
  const benchDb = `weir_bench_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const prefix = `weir-bench-${randomUUID()}`;
  let url: string | undefined;
  if (process.env.DATABASE_URL) {
    await admin(`create database ${benchDb}`);
    const u = new URL(process.env.DATABASE_URL);
    u.pathname = `/${benchDb}`;
    url = u.toString();
  }
  const config = loadConfig({
    WEIR_DATA_DIR: dataDir,
    DATABASE_URL: url,
    REDIS_URL: process.env.REDIS_URL,
    WEIR_REDIS_PREFIX: prefix,
    WEIR_SECRET_KEY: randomBytes(32).toString('hex'),
    WEIR_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
    LOG_LEVEL: 'silent',
  });
  const c = await createContainer(config, { role: 'worker' });
  return {
    c,
    async close() {
      await c.close();
      rmSync(dataDir, { recursive: true, force: true });
      if (url) await admin(`drop database if exists ${benchDb} with (force)`);
      if (process.env.REDIS_URL) await deletePrefix(prefix);
    },
  };
}

const BENCH_ACTOR: Actor = {
  kind: 'user',
  id: 0,
  name: 'bench',
  global: true,
  organizationIds: [],
  permissions: new Set(),
  via: 'token',
};

interface Counters {
  events_in: number;
  duplicates: number;
  normalized: number;
  quarantined: number;
}

async function counters(c: Container, integrationId: number): Promise<Counters> {
  const row = await c.database.db
    .selectFrom('stream_counters')
    .select([
      sql<string>`coalesce(sum(events_in), 0)`.as('events_in'),
      sql<string>`coalesce(sum(duplicates), 0)`.as('duplicates'),
      sql<string>`coalesce(sum(normalized), 0)`.as('normalized'),
      sql<string>`coalesce(sum(quarantined), 0)`.as('quarantined'),
    ])
    .where('integration_id', '=', integrationId)
    .where('stream', '=', STREAM)
    .executeTakeFirstOrThrow();
  return {
    events_in: Number(row.events_in),
    duplicates: Number(row.duplicates),
    normalized: Number(row.normalized),
    quarantined: Number(row.quarantined),
  };
}

// ---------------------------------------------------------------------------------------
// The measured phases.
interface Phase {
  events: number;
  seconds: number;
  cpu: number;
  requests?: number;
  vendorCpu?: number;
}

async function timed(fn: () => Promise<number>): Promise<Phase> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const events = await fn();
  return { events, seconds: (performance.now() - t0) / 1000, cpu: cpuSeconds(process.cpuUsage(cpu0)) };
}

/** Cycles until the stream is caught up (a cycle that was not capped). */
async function collect(c: Container, sim: Simulator, integrationId: number): Promise<Phase> {
  const requests0 = await simRequests(sim);
  const vendor0 = childCpu(sim.proc.pid);
  const phase = await timed(async () => {
    let events = 0;
    for (let cycles = 1; ; cycles++) {
      const outcome = await c.collection.engine.runCycle(integrationId, STREAM);
      if (outcome.status !== 'succeeded')
        throw new Error(`cycle ${cycles}: ${outcome.status}: ${String(outcome.error)}`);
      events += outcome.events;
      if (!outcome.capped) return events;
      if (cycles > 1000) throw new Error('the stream never caught up');
    }
  });
  return { ...phase, requests: (await simRequests(sim)) - requests0, vendorCpu: childCpu(sim.proc.pid) - vendor0 };
}

/** Runs the normalize queue's consumers until `done` holds for the integration's counters. */
async function normalize(
  c: Container,
  integrationId: number,
  expected: number,
  done: (k: Counters) => boolean,
): Promise<Phase> {
  const registrations = c.jobs.filter((j) => j.queue === NORMALIZE_QUEUE);
  return timed(async () => {
    const consumers = startConsumers(c.queue, registrations, c.logger);
    try {
      const deadline = Date.now() + 600_000;
      for (;;) {
        const k = await counters(c, integrationId);
        if (done(k)) return expected;
        if (Date.now() > deadline)
          throw new Error(
            `normalization did not finish: ${JSON.stringify(k)}, queue ${JSON.stringify(await c.queue.counts(NORMALIZE_QUEUE))}`,
          );
        await new Promise((r) => setTimeout(r, 25));
      }
    } finally {
      await Promise.all(consumers.map((x) => x.close()));
    }
  });
}

/** The same events as a push would enqueue them: no keys. Not timed. */
async function enqueuePushed(
  c: Container,
  organizationId: number,
  integrationId: number,
  events: Record<string, unknown>[],
): Promise<void> {
  const receivedAt = new Date().toISOString();
  for (let start = 0; start < events.length; start += PUSH_BATCH) {
    const chunk = events.slice(start, start + PUSH_BATCH);
    const batch: IngestBatch = {
      id: newId(),
      organization_id: organizationId,
      integration_id: integrationId,
      platform: 'okta',
      stream: STREAM,
      received_at: receivedAt,
      source: 'push',
      ids: chunk.map(() => newId()),
      events: chunk,
      bytes: chunk.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)), 0),
    };
    await c.queue.enqueue(NORMALIZE_QUEUE, NORMALIZE_JOB, batch, { attempts: 10, backoffMs: 1000, jobId: batch.id });
  }
}

interface RunResult {
  collect: Phase;
  pulled: Phase;
  pushed: Phase;
  recollect: Phase;
  duplicates: Phase;
  usageRequests: number;
  normalized: number;
  quarantined: number;
}

function check(what: string, got: number, want: number): void {
  if (got !== want) throw new Error(`check failed: ${what} is ${got}, expected ${want}`);
}

async function runOnce(r: number, n: number): Promise<RunResult> {
  const sim = await startSimulator(n);
  const d = await deploy();
  try {
    const { c } = d;
    const db = c.database.db;
    // Before the first read of the settings (cached 5 s): one cycle may take the whole window.
    await db
      .insertInto('collector_settings')
      .values({
        id: 1,
        settings: JSON.stringify({ max_pages_per_cycle: 10_000, max_cycle_seconds: 3_600 }),
        updated_by: null,
        updated_at: new Date(),
      })
      .onConflict((oc) => oc.column('id').doUpdateSet({ settings: (eb) => eb.ref('excluded.settings') }))
      .execute();
    const org = (
      await db
        .insertInto('organizations')
        .values({ name: `bench-${r}`, partner_tenant_ids: sql`'[]'::jsonb` as never })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    const svc = c.integrations.service;
    const pull = (
      await svc.create(BENCH_ACTOR, { name: 'okta-pull', platform: 'okta', organization_id: org, config: sim.config })
    ).id;
    const push = (
      await svc.create(BENCH_ACTOR, {
        name: 'okta-push',
        platform: 'okta',
        organization_id: org,
        config: { ...sim.config, collect: false },
      })
    ).id;
    const raw = await vendorEvents(sim);
    check('events the simulator serves', raw.length, n);

    const pushPhase = async () => {
      await enqueuePushed(c, org, push, raw);
      return normalize(c, push, n, (k) => k.events_in >= n);
    };
    // Alternate the order of the keyed and unkeyed normalization from run to run.
    const pushFirst = r % 2 === 1;
    const pushedFirst = pushFirst ? await pushPhase() : undefined;
    const collected = await collect(c, sim, pull);
    check('events accepted by collection', collected.events, n);
    const pulled = await normalize(c, pull, n, (k) => k.events_in + k.duplicates >= n);
    const pushed = pushedFirst ?? (await pushPhase());
    const afterFirst = await counters(c, pull);
    check('stream_counters events_in (pulled)', afterFirst.events_in, n);
    check('stream_counters duplicates (pulled)', afterFirst.duplicates, 0);
    check('stream_counters events_in (pushed)', (await counters(c, push)).events_in, n);

    await c.collection.service.resetCursor(GLOBAL_SCOPE, pull, STREAM);
    const recollect = await collect(c, sim, pull);
    check('events accepted by the re-collection', recollect.events, n);
    const duplicates = await normalize(c, pull, n, (k) => k.duplicates >= n);
    const after = await counters(c, pull);
    check('stream_counters duplicates after the re-collection', after.duplicates, n);
    check('stream_counters events_in after the re-collection', after.events_in, n);
    const usage = await db
      .selectFrom('collector_usage')
      .select(sql<string>`coalesce(sum(requests), 0)`.as('requests'))
      .where('integration_id', '=', pull)
      .executeTakeFirstOrThrow();
    const usageRequests = Number(usage.requests);
    check(
      'collector_usage requests (both collections)',
      usageRequests,
      (collected.requests ?? 0) + (recollect.requests ?? 0),
    );
    return {
      collect: collected,
      pulled,
      pushed,
      recollect,
      duplicates,
      usageRequests,
      normalized: afterFirst.normalized,
      quarantined: afterFirst.quarantined,
    };
  } finally {
    await d.close();
    sim.proc.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  const mode = process.env.DATABASE_URL
    ? `PostgreSQL${process.env.REDIS_URL ? ' + Redis (BullMQ)' : ' (database queue)'}`
    : 'embedded PGlite (database queue)';
  console.log(`node ${process.version}, ${mode}: ${fmt(total)} Okta system_log events, median of ${runs} run(s)`);
  // Compiled code and warm caches for every phase before the first measured one, whichever comes first in a run.
  await runOnce(0, Math.min(total, 2000));
  console.log('warm-up run done (not counted)');
  const results: RunResult[] = [];
  for (let r = 0; r < runs; r++) {
    const res = await runOnce(r, total);
    results.push(res);
    console.log(
      `run ${r + 1}: collect ${fmt(res.collect.events / res.collect.seconds)} ev/s (${fmt(res.collect.events / res.collect.cpu)} ev/CPU s, ${res.collect.requests} requests), ` +
        `normalize pulled ${fmt(res.pulled.events / res.pulled.cpu)} / pushed ${fmt(res.pushed.events / res.pushed.cpu)} ev/CPU s, ` +
        `duplicates ${fmt(res.duplicates.events / res.duplicates.cpu)} ev/CPU s; normalized ${res.normalized}, quarantined ${res.quarantined}; checks passed`,
    );
  }
  const m = (pick: (x: RunResult) => number) => median(results.map(pick));
  const row = (name: string, pick: (x: RunResult) => Phase, note: string) => {
    const wall = m((x) => pick(x).events / pick(x).seconds);
    const cpu = m((x) => pick(x).events / pick(x).cpu);
    console.log(
      `| ${name} | ${fmt(total)} | ${fmt(
        m((x) => pick(x).seconds),
        2,
      )} | ${fmt(wall)} | ${fmt(
        m((x) => pick(x).cpu),
        2,
      )} | ${fmt(cpu)} | ${note} |`,
    );
  };
  console.log('\n| phase | events | wall s | events/s | CPU s | events/CPU s | notes |');
  console.log('|---|---|---|---|---|---|---|');
  row(
    'collect (fetch + enqueue)',
    (x) => x.collect,
    `${fmt(m((x) => x.collect.requests ?? 0))} vendor requests; simulator CPU ${fmt(
      m((x) => x.collect.vendorCpu ?? NaN),
      2,
    )} s (not counted)`,
  );
  row(
    'normalize pulled (keyed)',
    (x) => x.pulled,
    `dedup lookup + remember; ${fmt(m((x) => x.normalized))} normalized, ${fmt(m((x) => x.quarantined))} quarantined`,
  );
  row('normalize pushed (no keys)', (x) => x.pushed, 'same events, source push');
  row(
    're-collect after cursor reset',
    (x) => x.recollect,
    `${fmt(m((x) => x.recollect.requests ?? 0))} vendor requests`,
  );
  row('normalize re-collected', (x) => x.duplicates, `${fmt(total)} dropped as duplicates`);
  const ratio = m((x) => x.pulled.cpu / x.pushed.cpu);
  const dupRatio = m((x) => x.duplicates.cpu / x.pushed.cpu);
  console.log(`\nCPU per event, keyed / unkeyed normalization: ${ratio.toFixed(2)} (median of per-run ratios)`);
  console.log(`CPU per event, dropping a duplicate / normalizing an unkeyed event: ${dupRatio.toFixed(2)}`);
}

await main();
