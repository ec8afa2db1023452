// Routing + delivery throughput, in process: --batches pending normalized batches of 500
// events, one catch-all route, --destinations destinations of one sink type, then the pass's
// routing routes them (wireDelivery's routeLeftover, one batch after the other, as the jobs
// of migration 0025 do) and the dispatcher's lanes deliver them. Sinks:
//   null  accepts everything at once: the engine's own cost (database, codec, routing).
//   http  the real webhook sink (NDJSON, gzip off and on) against a receiver in a CHILD
//         process that reads and discards bodies, so its CPU is not counted here.
//   file  the real file sink into a temporary directory (fsync on, the default).
// Events: the Okta System Log fixtures through the built-in mapping (real OCSF output,
// ~2-3 KB each; --events small: a ~450-byte synthetic event). Each run measures, on a fresh
// database, routing alone (every batch routed before delivery starts) and delivery alone,
// then both together as the dispatcher runs them. Rates are events per second of wall time
// and per second of this process's CPU (process.cpuUsage: PGlite runs in it; PostgreSQL's
// own CPU is not counted). Medians of --runs.
// Embedded PGlite by default; DATABASE_URL=postgres://... for PostgreSQL.
//   npx tsx bench/delivery.ts [--sink null|http|file|all] [--gzip off|on|both] [--runs 3]
//     [--batches 100] [--destinations 1] [--max-events 2000] [--events okta|small] [--profile]
// Before the table: the routing and delivery steps that do not touch the database, timed
// alone on the same batches: wall and CPU (every thread: zlib runs on the pool) microseconds
// per event, the fastest of 3 passes; plus the zlib steps with 1 MiB chunks instead of the
// default 16 KiB, for comparison.
// --profile: CPU profiles (inspector) of the first run's routing and delivery phases, summarised
// by category (bench/profile-summary.ts), and on PGlite the time inside each SQL statement
// (wall time of PGlite's query(): the engine runs on this thread, so it is CPU time, plus
// waiting for a statement of a concurrent request in the delivery phase).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Type } from 'typebox';
import { newId } from '../src/core/ids.js';
import { systemClock } from '../src/core/clock.js';
import { wireDelivery } from '../src/modules/delivery/index.js';
import { deliverySettings } from '../src/pipeline/delivery/settings.js';
import type { DestinationRuntime } from '../src/pipeline/delivery/ports.js';
import { fileSink } from '../src/pipeline/sinks/file/index.js';
import { httpSink } from '../src/pipeline/sinks/http/index.js';
import type { SinkType } from '../src/pipeline/sinks/types.js';
import { migrate, openDatabase } from '../src/platform/db/index.js';
import { createLogger } from '../src/platform/logger.js';
import { createNetPolicy } from '../src/platform/net/ssrf.js';
import { disabledTelemetry } from '../src/platform/telemetry/index.js';
import {
  buildBatches,
  startReceiver,
  statements,
  statementTable,
  steps,
  timeStatements,
  type StatementTimes,
} from './delivery-parts.js';
import { formatSummary, summarise, type CpuProfile } from './profile-summary.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    sink: { type: 'string', default: 'null' },
    gzip: { type: 'string', default: 'both' },
    runs: { type: 'string', default: '3' },
    batches: { type: 'string' },
    destinations: { type: 'string' },
    'max-events': { type: 'string', default: '2000' },
    events: { type: 'string', default: 'okta' },
    profile: { type: 'boolean', default: false },
  },
});
// The first version took `[batches] [destinations]` as positionals: still understood.
const batches = Number(values.batches ?? positionals[0] ?? 100);
const fanout = Number(values.destinations ?? positionals[1] ?? 1);
const runs = Number(values.runs);
const maxEvents = Number(values['max-events']);
const perBatch = 500;
const total = batches * perBatch;
const cpuSeconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

interface SinkCase {
  name: string;
  type: SinkType;
  config: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------
// On PostgreSQL, a database of its own per run (created here, dropped after), never the one named in DATABASE_URL.
async function admin(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  await client.query(text).finally(() => client.end());
}

/** The inspector's CPU profiler around a measured section (only with --profile). */
const session = values.profile ? new Session() : undefined;
session?.connect();
async function profileStart(): Promise<void> {
  if (!session) return;
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
async function profileStop(): Promise<CpuProfile | undefined> {
  if (!session) return undefined;
  const { profile } = await session.post('Profiler.stop');
  return profile as unknown as CpuProfile;
}

interface Phase {
  seconds: number;
  cpu: number;
}
interface RunResult {
  routing: Phase;
  delivery: Phase;
  together: Phase;
}

/** One measurement on a fresh database: `phased` routes everything, then delivers; otherwise both at once. */
async function measure(
  sinkCase: SinkCase,
  stored: { events: string; bytes: number }[],
  phased: boolean,
  profiled = false,
): Promise<{
  routing?: Phase;
  delivery?: Phase;
  total: Phase;
  profiles?: CpuProfile[];
  statements?: StatementTimes[];
}> {
  let url: string | undefined;
  const benchDb = `weir_bench_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`;
  if (process.env.DATABASE_URL) {
    await admin(`create database ${benchDb}`);
    const u = new URL(process.env.DATABASE_URL);
    u.pathname = `/${benchDb}`;
    url = u.toString();
  }
  const database = await openDatabase({ url, dataDir: 'memory://' });
  const fileRoot = mkdtempSync(path.join(tmpdir(), 'weir-bench-files-'));
  try {
    await migrate(database.db);
    const db = database.db;
    const org = (
      await db
        .insertInto('organizations')
        .values({ name: `bench-${newId()}` } as never)
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    const integration = (
      await db
        .insertInto('integrations')
        .values({ organization_id: org, name: `i-${newId()}`, platform: 'okta', config: '{}' })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;

    let delivered = 0;
    // Counts what the sink acknowledged; the real sink does the work.
    const counted: SinkType = {
      ...sinkCase.type,
      create: (ctx) => {
        const real = sinkCase.type.create(ctx);
        return {
          send: async (batch, signal) => {
            const result = await real.send(batch, signal);
            delivered += batch.lines.length;
            return result;
          },
          test: (signal) => real.test(signal),
          close: () => real.close(),
        };
      },
    };
    const destinations: DestinationRuntime[] = Array.from({ length: fanout }, () => ({
      id: newId(),
      organization_id: org,
      name: newId(),
      type: sinkCase.type.type,
      config: sinkCase.config,
      delivery: deliverySettings({ max_wait_ms: 0, max_events: maxEvents }),
      enabled: true,
      disabled_reason: null,
      has_credential: false,
      shadow_destination_id: null,
      version: 1,
      updated_at: new Date(),
    }));
    await db
      .insertInto('routes')
      .values({
        id: newId(),
        organization_id: org,
        name: 'all',
        position: 1,
        condition: null,
        transforms: '[]',
        destination_ids: JSON.stringify(destinations.map((d) => d.id)),
      })
      .execute();
    // The stored texts carry organization 0: routing takes origin from the row, and the lines' envelope only for ids.
    const batchIds: string[] = [];
    for (const s of stored) {
      const id = newId();
      batchIds.push(id);
      await db
        .insertInto('normalized_batches')
        .values({
          id,
          organization_id: org,
          integration_id: integration,
          stream: 'system_log',
          source: 'push',
          event_count: perBatch,
          bytes: s.bytes,
          events: s.events,
          route_state: 'pending',
          created_at: new Date(),
        })
        .execute();
    }

    const config = {
      pollMs: 20,
      leaseMs: 30_000,
      lineageEnabled: false,
      lineageDays: 7,
      dlqDays: 30,
      outboundAllowCidrs: ['127.0.0.0/8'],
      fileRoot,
      fileStaleMs: 60_000,
    };
    const delivery = wireDelivery({
      db,
      clock: systemClock,
      logger: createLogger({ level: 'warn', role: 'bench' }),
      telemetry: disabledTelemetry(),
      queue: undefined as never,
      dataDeletion: { addStep: () => {} },
      config,
      directory: { list: async () => destinations, credential: async () => null },
      net: createNetPolicy({ allowCidrs: config.outboundAllowCidrs }),
      sinkTypes: [counted],
    });
    const copies = total * fanout;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let routing: Phase | undefined;
    const profiles: CpuProfile[] = [];
    const timed: StatementTimes[] = [];
    if (profiled) {
      await profileStart();
      statements.times = new Map();
      statements.on = true;
    }
    const routeAll = async () => {
      for (const id of batchIds) await delivery.routeLeftover(id);
    };
    if (phased) {
      await routeAll();
      routing = { seconds: (performance.now() - t0) / 1000, cpu: cpuSeconds(process.cpuUsage(cpu0)) };
      if (profiled) {
        profiles.push((await profileStop())!);
        timed.push(statements.times);
        statements.times = new Map();
        await profileStart();
      }
    }
    const t1 = performance.now();
    const cpu1 = process.cpuUsage();
    const run = delivery.loops[0]!.start();
    if (!phased) await routeAll();
    while (delivered < copies) await new Promise((r) => setTimeout(r, 5));
    const end = performance.now();
    const deliveryCpu = cpuSeconds(process.cpuUsage(cpu1));
    const totalCpu = cpuSeconds(process.cpuUsage(cpu0));
    if (profiled) {
      profiles.push((await profileStop())!);
      timed.push(statements.times);
      statements.on = false;
    }
    await run.stop();
    // Everything delivered: the outbox is empty (the ledger's pending, measured).
    const left = await db
      .selectFrom('delivery_batches')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('event_count'), eb.lit(0)).as('events'))
      .executeTakeFirstOrThrow();
    if (Number(left.events) !== 0) throw new Error(`${left.events} events still in the outbox after delivery`);
    if (sinkCase.type.type === 'file') {
      // Every event is a line in the destination's files (the open file is renamed at close).
      let lines = 0;
      const dir = path.join(fileRoot, 'bench');
      for (const f of readdirSync(dir)) for (const c of readFileSync(path.join(dir, f))) if (c === 10) lines++;
      if (lines !== copies) throw new Error(`file sink: ${lines} lines for ${copies} events`);
    }
    return {
      routing,
      delivery: phased ? { seconds: (end - t1) / 1000, cpu: deliveryCpu } : undefined,
      total: { seconds: (end - t0) / 1000, cpu: totalCpu },
      profiles,
      statements: timed,
    };
  } finally {
    await database.close();
    rmSync(fileRoot, { recursive: true, force: true });
    if (url) await admin(`drop database if exists ${benchDb} with (force)`);
  }
}

async function main(): Promise<void> {
  const wanted = values.sink === 'all' ? ['null', 'http', 'file'] : String(values.sink).split(',');
  const gzips = values.gzip === 'both' ? [false, true] : [values.gzip === 'on'];
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  const cases: SinkCase[] = [];
  for (const w of wanted) {
    if (w === 'null') {
      cases.push({
        name: 'null (accepts at once)',
        type: {
          type: 'bench',
          title: 'bench',
          description: 'accepts everything',
          configSchema: Type.Object({}),
          credentialSchema: null,
          credentialRequired: false,
          create: () => ({
            send: async () => ({}),
            test: async () => ({ ok: true, detail: '', latency_ms: 0 }),
            close: async () => {},
          }),
        },
        config: {},
      });
    } else if (w === 'http') {
      receiver ??= await startReceiver();
      for (const gzip of gzips)
        cases.push({
          name: `http, ndjson, gzip ${gzip ? 'on' : 'off'}`,
          type: httpSink,
          config: { url: receiver.url, format: 'ndjson', gzip },
        });
    } else if (w === 'file') {
      cases.push({ name: 'file, fsync on', type: fileSink, config: { path: 'bench' } });
    } else throw new Error(`unknown sink ${w}: null, http, file or all`);
  }
  try {
    if (values.profile && !process.env.DATABASE_URL) await timeStatements();
    const stored = await buildBatches(String(values.events), batches, perBatch);
    const bytes = stored.reduce((n, s) => n + s.bytes, 0) / total;
    console.log(
      `node ${process.version}, ${process.env.DATABASE_URL ? 'postgresql' : 'pglite'}: ${batches} batches x ${perBatch} events (${values.events}, ~${fmt(bytes)} B/event as stored) x ${fanout} destination(s), ` +
        `max_events ${maxEvents}, median of ${runs} run(s)`,
    );
    await steps(stored, perBatch);
    console.log(
      '| sink | routing events/s | routing events/CPU s | delivery events/s | delivery events/CPU s | together events/s | together events/CPU s |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const c of cases) {
      const results: RunResult[] = [];
      const before = receiver ? await receiver.stats() : undefined;
      const profiles: CpuProfile[] = [];
      const timed: StatementTimes[] = [];
      for (let r = 0; r < runs; r++) {
        const phased = await measure(c, stored, true, values.profile && r === 0);
        profiles.push(...(phased.profiles ?? []));
        timed.push(...(phased.statements ?? []));
        const together = await measure(c, stored, false);
        results.push({ routing: phased.routing!, delivery: phased.delivery!, together: together.total });
      }
      const rate = (pick: (x: RunResult) => Phase, per: 'seconds' | 'cpu') =>
        fmt(median(results.map((x) => total / pick(x)[per])));
      console.log(
        `| ${c.name} | ${rate((x) => x.routing, 'seconds')} | ${rate((x) => x.routing, 'cpu')} | ${rate((x) => x.delivery, 'seconds')} | ${rate((x) => x.delivery, 'cpu')} | ` +
          `${rate((x) => x.together, 'seconds')} | ${rate((x) => x.together, 'cpu')} |`,
      );
      if (receiver && before && c.type === httpSink) {
        const after = await receiver.stats();
        const events = after.events - before.events;
        if (events !== 2 * runs * total * fanout)
          throw new Error(`receiver counted ${events} events for ${2 * runs * total * fanout} delivered`);
        console.log(
          `|   (receiver: ${fmt((after.requests - before.requests) / (2 * runs))} requests a run, ${fmt((after.bytes - before.bytes) / events)} B/event on the wire, ` +
            `its own CPU ${((after.cpu - before.cpu) / (2 * runs)).toFixed(2)} s a run, not counted) | | | | | | |`,
        );
      }
      for (const [i, p] of profiles.entries()) {
        const phase = i === 0 ? 'routing' : 'delivery';
        console.log(`\n${formatSummary(summarise([p], [], 15), `profile of ${c.name}, ${phase} alone (first run)`)}\n`);
        if (!process.env.DATABASE_URL && timed[i])
          console.log(
            `${statementTable(`time inside PGlite statements, ${phase} alone (first run)`, timed[i], total * fanout)}\n`,
          );
      }
    }
  } finally {
    receiver?.proc.kill('SIGTERM');
    session?.disconnect();
  }
}

await main();
