// Routing + delivery throughput, in process: --batches pending normalized batches of 500
// events, one catch-all route, --destinations destinations of one sink type, then the
// dispatcher's engine (wireDelivery) routes and delivers them. Sinks:
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
// alone on the same batches: wall microseconds per event (zlib runs on the thread pool and is
// awaited), the fastest of 3 passes.
// --profile: CPU profiles (inspector) of the first run's routing and delivery phases, summarised
// by category (bench/profile-summary.ts), and on PGlite the time inside each SQL statement
// (wall time of PGlite's query(): the engine runs on this thread, so it is CPU time, plus
// waiting for a statement of a concurrent request in the delivery phase).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
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
import { ocsfCatalog } from '../src/ocsf/index.js';
import { decodeRecords, encodeRecords } from '../src/pipeline/batch-codec.js';
import { deliverySettings } from '../src/pipeline/delivery/settings.js';
import type { DestinationRuntime } from '../src/pipeline/delivery/ports.js';
import { compileRoutes } from '../src/pipeline/route/compile.js';
import { builtinMapping } from '../src/pipeline/normalize/builtin/index.js';
import { compileMapping } from '../src/pipeline/normalize/compile.js';
import { fileSink } from '../src/pipeline/sinks/file/index.js';
import { gzip } from '../src/pipeline/sinks/http-common.js';
import { httpSink } from '../src/pipeline/sinks/http/index.js';
import { webhookBody } from '../src/pipeline/sinks/http/webhook.js';
import type { SinkType } from '../src/pipeline/sinks/types.js';
import { migrate, openDatabase } from '../src/platform/db/index.js';
import { createLogger } from '../src/platform/logger.js';
import { createNetPolicy } from '../src/platform/net/ssrf.js';
import { disabledTelemetry } from '../src/platform/telemetry/index.js';
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
// The receiver of the http sink: a child process, so that its CPU is its own.
const RECEIVER = `
import http from 'node:http';
let requests = 0, events = 0, bytes = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET') { const u = process.cpuUsage(); res.end(JSON.stringify({ requests, events, bytes, cpu: (u.user + u.system) / 1e6 })); return; }
  let n = 0;
  req.on('data', (c) => { n += c.length; });
  req.on('end', () => { requests++; bytes += n; events += Number(req.headers['x-weir-event-count'] ?? 0); res.end(); });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
process.on('disconnect', () => process.exit(0));
`;

interface ReceiverStats {
  requests: number;
  events: number;
  bytes: number;
  cpu: number;
}

async function startReceiver(): Promise<{ url: string; proc: ChildProcess; stats(): Promise<ReceiverStats> }> {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      const m = /"port":(\d+)/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    proc.on('exit', (code) => reject(new Error(`receiver exited with ${String(code)}`)));
  });
  const url = `http://127.0.0.1:${port}/ingest`;
  return { url, proc, stats: async () => (await (await fetch(url)).json()) as ReceiverStats };
}

// ---------------------------------------------------------------------------------------
// Events: stored the way the normalization stage stores them (gzipped NDJSON of records).
function ocsfEvents(): (i: number) => Record<string, unknown> {
  if (values.events === 'small') {
    return (i) => ({ class_uid: 3002, activity_id: 1, time: Date.now(), user: { name: `user${i}`, uid: String(i) }, src_endpoint: { ip: '192.0.2.10' }, message: 'x'.repeat(300) });
  }
  const builtin = builtinMapping('okta', 'system_log');
  if (!builtin) throw new Error('the built-in okta/system_log mapping is missing');
  const mapping = compileMapping(builtin.document, ocsfCatalog());
  const fixtures = JSON.parse(readFileSync(new URL('../src/connectors/okta/fixtures/system_log.json', import.meta.url), 'utf8')) as Record<string, unknown>[];
  return (i) => {
    const raw = { ...fixtures[i % fixtures.length], uuid: randomUUID(), published: new Date().toISOString() };
    const r = mapping.map(raw, { receivedAtMs: Date.now() });
    if (!r.ok) throw new Error(`fixture ${i % fixtures.length}: ${r.kind}: ${r.detail}`);
    return r.event;
  };
}

/** Encoded batches (events column) built once, reused by every run; each run gives them new ids. */
async function buildBatches(): Promise<{ events: string; lines: number; bytes: number }[]> {
  const event = ocsfEvents();
  const out: { events: string; lines: number; bytes: number }[] = [];
  for (let b = 0; b < batches; b++) {
    const lines: string[] = [];
    for (let i = 0; i < perBatch; i++) {
      lines.push(JSON.stringify({ id: newId(), organization_id: 0, integration_id: 0, stream: 'system_log', received_at: new Date().toISOString(), mapping_version_id: 'm', valid: true, ocsf: event(b * perBatch + i) }));
    }
    const ndjson = lines.join('\n');
    out.push({ events: await encodeRecords(ndjson), lines: perBatch, bytes: Buffer.byteLength(ndjson) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The in-memory steps of routing and delivery, one at a time over every stored batch.
async function steps(stored: { events: string }[]): Promise<void> {
  const compiled = compileRoutes([{ id: 'r', organization_id: 0, name: 'all', position: 1, enabled: true, condition: null, transforms: [], destination_ids: ['d'], final: false, version: 1 }]);
  const best = new Map<string, number>();
  let timings = new Map<string, number>();
  const time = async <T>(name: string, fn: () => T | Promise<T>): Promise<T> => {
    const t = performance.now();
    const out = await fn();
    timings.set(name, (timings.get(name) ?? 0) + performance.now() - t);
    return out;
  };
  for (let pass = 0; pass < 3; pass++) {
    timings = new Map();
    for (const s of stored) {
      const ndjson = await time('routing: gunzip + base64 of the normalized batch (decodeRecords)', () => decodeRecords(s.events));
      const lines = await time('routing: split into lines', () => ndjson.split('\n'));
      const records = await time('routing: JSON.parse of each record', () => lines.map((l) => JSON.parse(l) as never));
      const plan = await time('routing: plan (catch-all route: ocsf text cut from the line)', () => compiled.plan(records, lines));
      const copies = plan.copies.get('d')!;
      const copy = await time('routing: NDJSON of the copy', () => copies.map((c) => c.line).join('\n'));
      const encoded = await time('routing: gzip + base64 of the copy (encodeRecords)', () => encodeRecords(copy));
      const outLines = await time('delivery: gunzip + base64 + split of the outbox row', async () => (await decodeRecords(encoded)).split('\n'));
      const body = await time('delivery, http: NDJSON body', () => webhookBody(outLines, 'ndjson'));
      await time('delivery, http gzip on: gzip of the body', () => gzip(body));
    }
    for (const [name, ms] of timings) best.set(name, Math.min(best.get(name) ?? Infinity, ms));
  }
  const events = stored.length * perBatch;
  console.log('| step (no database) | µs per event |');
  console.log('|---|---|');
  for (const [name, ms] of best) console.log(`| ${name} | ${((ms * 1000) / events).toFixed(1)} |`);
  console.log('');
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

/** Time inside PGlite's query() by statement (first words), while `statementsOn`. */
let statements = new Map<string, { calls: number; ms: number }>();
let statementsOn = false;
async function timeStatements(): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  type Query = (this: unknown, text: string, ...rest: unknown[]) => Promise<unknown>;
  let proto: { query?: Query } | null = PGlite.prototype as { query?: Query };
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'query')) proto = Object.getPrototypeOf(proto) as { query?: Query } | null;
  if (!proto?.query) throw new Error('PGlite has no query method to time');
  const original = proto.query;
  proto.query = async function (this: unknown, text: string, ...rest: unknown[]) {
    if (!statementsOn) return original.call(this, text, ...rest);
    const t = performance.now();
    try {
      return await original.call(this, text, ...rest);
    } finally {
      const key = text.replace(/\s+/g, ' ').trim().slice(0, 90);
      const e = statements.get(key) ?? { calls: 0, ms: 0 };
      e.calls++;
      e.ms += performance.now() - t;
      statements.set(key, e);
    }
  };
}
function statementTable(title: string, table: Map<string, { calls: number; ms: number }>, events: number): string {
  const rows = [...table].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12);
  const lines = [`${title}`, '', '| statement (start) | calls | ms | µs per event |', '|---|---|---|---|'];
  for (const [k, v] of rows) lines.push(`| \`${k.replace(/\|/g, '\\|')}\` | ${v.calls} | ${Math.round(v.ms)} | ${((v.ms * 1000) / events).toFixed(1)} |`);
  const all = [...table.values()].reduce((n, v) => n + v.ms, 0);
  lines.push(`| all statements | ${[...table.values()].reduce((n, v) => n + v.calls, 0)} | ${Math.round(all)} | ${((all * 1000) / events).toFixed(1)} |`);
  return lines.join('\n');
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
): Promise<{ routing?: Phase; delivery?: Phase; total: Phase; profiles?: CpuProfile[]; statements?: Map<string, { calls: number; ms: number }>[] }> {
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
    const org = (await db.insertInto('organizations').values({ name: `bench-${newId()}` } as never).returning('id').executeTakeFirstOrThrow()).id;
    const integration = (await db.insertInto('integrations').values({ organization_id: org, name: `i-${newId()}`, platform: 'okta', config: '{}' }).returning('id').executeTakeFirstOrThrow()).id;

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
      .values({ id: newId(), organization_id: org, name: 'all', position: 1, condition: null, transforms: '[]', destination_ids: JSON.stringify(destinations.map((d) => d.id)) })
      .execute();
    // The stored texts carry organization 0: the routing stage takes origin from the row, and the lines' envelope only for ids.
    for (const s of stored) {
      await db
        .insertInto('normalized_batches')
        .values({ id: newId(), organization_id: org, integration_id: integration, stream: 'system_log', source: 'push', event_count: perBatch, bytes: s.bytes, events: s.events, created_at: new Date(), leased_until: null })
        .execute();
    }

    const config = { pollMs: 20, leaseMs: 30_000, routeConcurrency: 2, lineageEnabled: false, lineageDays: 7, dlqDays: 30, outboundAllowCidrs: ['127.0.0.0/8'], fileRoot };
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
    const timed: Map<string, { calls: number; ms: number }>[] = [];
    if (profiled) {
      await profileStart();
      statements = new Map();
      statementsOn = true;
    }
    if (phased) {
      while (await delivery.engine.routeOnce());
      routing = { seconds: (performance.now() - t0) / 1000, cpu: cpuSeconds(process.cpuUsage(cpu0)) };
      if (profiled) {
        profiles.push((await profileStop())!);
        timed.push(statements);
        statements = new Map();
        await profileStart();
      }
    }
    const t1 = performance.now();
    const cpu1 = process.cpuUsage();
    const run = delivery.loops[0]!.start();
    while (delivered < copies) await new Promise((r) => setTimeout(r, 5));
    const end = performance.now();
    const deliveryCpu = cpuSeconds(process.cpuUsage(cpu1));
    const totalCpu = cpuSeconds(process.cpuUsage(cpu0));
    if (profiled) {
      profiles.push((await profileStop())!);
      timed.push(statements);
      statementsOn = false;
    }
    await run.stop();
    const [balance] = await delivery.ledgerBalance({ organization_id: org });
    if (Number(balance?.pending ?? 0) !== 0) throw new Error(`ledger pending ${balance?.pending} after delivery`);
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
          create: () => ({ send: async () => ({}), test: async () => ({ ok: true, detail: '', latency_ms: 0 }), close: async () => {} }),
        },
        config: {},
      });
    } else if (w === 'http') {
      receiver ??= await startReceiver();
      for (const gzip of gzips) cases.push({ name: `http, ndjson, gzip ${gzip ? 'on' : 'off'}`, type: httpSink, config: { url: receiver.url, format: 'ndjson', gzip } });
    } else if (w === 'file') {
      cases.push({ name: 'file, fsync on', type: fileSink, config: { path: 'bench' } });
    } else throw new Error(`unknown sink ${w}: null, http, file or all`);
  }
  try {
    if (values.profile && !process.env.DATABASE_URL) await timeStatements();
    const stored = await buildBatches();
    const bytes = stored.reduce((n, s) => n + s.bytes, 0) / total;
    console.log(
      `node ${process.version}, ${process.env.DATABASE_URL ? 'postgresql' : 'pglite'}: ${batches} batches x ${perBatch} events (${values.events}, ~${fmt(bytes)} B/event as stored) x ${fanout} destination(s), ` +
        `max_events ${maxEvents}, median of ${runs} run(s)`,
    );
    await steps(stored);
    console.log('| sink | routing events/s | routing events/CPU s | delivery events/s | delivery events/CPU s | together events/s | together events/CPU s |');
    console.log('|---|---|---|---|---|---|---|');
    for (const c of cases) {
      const results: RunResult[] = [];
      const before = receiver ? await receiver.stats() : undefined;
      const profiles: CpuProfile[] = [];
      const timed: Map<string, { calls: number; ms: number }>[] = [];
      for (let r = 0; r < runs; r++) {
        const phased = await measure(c, stored, true, values.profile && r === 0);
        profiles.push(...(phased.profiles ?? []));
        timed.push(...(phased.statements ?? []));
        const together = await measure(c, stored, false);
        results.push({ routing: phased.routing!, delivery: phased.delivery!, together: together.total });
      }
      const rate = (pick: (x: RunResult) => Phase, per: 'seconds' | 'cpu') => fmt(median(results.map((x) => total / pick(x)[per])));
      console.log(
        `| ${c.name} | ${rate((x) => x.routing, 'seconds')} | ${rate((x) => x.routing, 'cpu')} | ${rate((x) => x.delivery, 'seconds')} | ${rate((x) => x.delivery, 'cpu')} | ` +
          `${rate((x) => x.together, 'seconds')} | ${rate((x) => x.together, 'cpu')} |`,
      );
      if (receiver && before && c.type === httpSink) {
        const after = await receiver.stats();
        const events = after.events - before.events;
        if (events !== 2 * runs * total * fanout) throw new Error(`receiver counted ${events} events for ${2 * runs * total * fanout} delivered`);
        console.log(
          `|   (receiver: ${fmt((after.requests - before.requests) / (2 * runs))} requests a run, ${fmt((after.bytes - before.bytes) / events)} B/event on the wire, ` +
            `its own CPU ${((after.cpu - before.cpu) / (2 * runs)).toFixed(2)} s a run, not counted) | | | | | | |`,
        );
      }
      for (const [i, p] of profiles.entries()) {
        const phase = i === 0 ? 'routing' : 'delivery';
        console.log(`\n${formatSummary(summarise([p], [], 15), `profile of ${c.name}, ${phase} alone (first run)`)}\n`);
        if (!process.env.DATABASE_URL && timed[i]) console.log(`${statementTable(`time inside PGlite statements, ${phase} alone (first run)`, timed[i], total * fanout)}\n`);
      }
    }
  } finally {
    receiver?.proc.kill('SIGTERM');
    session?.disconnect();
  }
}

await main();
