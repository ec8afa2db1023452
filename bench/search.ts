// The event store's queries over --events stored events of mixed classes (default 1,000,000),
// through the store's port (modules/search/event-store/port.ts) on both adapters: DuckDB (the
// embedded default, a file on disk; 2 threads, 256MB) and PostgreSQL (day partitions of
// `events`). Events are written as the one pass writes them: storedCopies() (routing-write.ts) builds a
// batch's copies and their searched columns (stored-columns.ts), then store.prepare(batchId, ...)
// and store.write(...) inside the batch's database transaction (PostgreSQL inserts there; DuckDB
// wrote in prepare and its write is a no-op, so no database is opened for it). Batches of 5,000.
// Events: Authentication 3002 (40%), Network Activity 4001 (30%), API Activity 6003 (20%),
// Process Activity 1007 (10%), written oldest first and spread evenly over --days days (default
// 7) ending now, in one organization, about 600 bytes of OCSF each with 2,000 distinct user names
// and 65,536 source addresses. Seeding is reported as events/s and CPU seconds per 1,000 events
// (process.cpuUsage(): this process, DuckDB's threads included; for PostgreSQL the server's
// processes too, read from /proc), and the store's size on disk. Timed, --runs times each after
// 2 warm-ups, p50 and p95, through the port's methods:
//   1 count by class_uid, all --days days (countBy)
//   2 src_endpoint.ip = "10.0.1.42" (a searched column), all days: count + first 100 rows newest first
//   3 top 10 src_endpoint.ip (65,536 values), all days
//   4 last 24 h, class_uid = 3002 and actor.user.name = "user42": count + first 100 rows
//   5 top 10 actor.user.name, last 24 h
//   6 metadata.uid = "<one event's>" (not a searched column: read from the whole event), all days: count + 100 rows
// With --mode both the two adapters' answers are compared.
//   npx tsx bench/search.ts [--mode embedded|postgres|both] [--events 1000000] [--days 7] [--runs 15] [--pg-events N]
// postgres: a fresh database next to BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), dropped at the end.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { newId } from '../src/core/ids.js';
import { storedCopies } from '../src/pipeline/delivery/routing-write.js';
import { createDuckDbEventStore } from '../src/modules/search/event-store/duckdb/store.js';
import type { EventStore, StoreScope } from '../src/modules/search/event-store/port.js';
import { createPostgresEventStore } from '../src/modules/search/event-store/postgres.js';
import { parseQueryText } from '../src/pipeline/conditions/text.js';
import { inTransaction } from '../src/platform/db/ambient.js';
import { migrate, openDatabase, type Database } from '../src/platform/db/index.js';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'both' },
    events: { type: 'string', default: '1000000' },
    /** PostgreSQL only: fewer events when its seeding is too slow on this machine. */
    'pg-events': { type: 'string' },
    days: { type: 'string', default: '7' },
    runs: { type: 'string', default: '15' },
  },
});
const EVENTS = Number(values.events);
const PG_EVENTS = values['pg-events'] ? Number(values['pg-events']) : EVENTS;
const DAYS = Number(values.days);
const RUNS = Number(values.runs);
const BATCH = 5_000;
const DAY = 86_400_000;
const NOW = Date.now();
const ORG = 1;
const STATEMENT_TIMEOUT_MS = 600_000;

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
/** The event whose metadata.uid query 6 looks for. */
const uidOf = (events: number) => md5(String(Math.floor(events / 2)));

/** Event i of n: oldest first, evenly over the days ending now. */
function event(i: number, n: number): Record<string, unknown> {
  const time = Math.round(NOW - DAYS * DAY * (1 - i / n));
  const c = i % 10 < 4 ? 3002 : i % 10 < 7 ? 4001 : i % 10 < 9 ? 6003 : 1007;
  const a = 1 + (i % 3);
  const k = i % 65_536;
  const user = `user${i % 2000}`;
  return {
    time,
    class_uid: c,
    category_uid: Math.floor(c / 1000),
    activity_id: a,
    severity_id: 1 + (i % 5),
    type_uid: c * 100 + a,
    status_id: i % 7 === 0 ? 2 : 1,
    message: `event ${i} of the benchmark, a line of text like vendors send`,
    metadata: {
      version: '1.8.0',
      product: { name: 'Bench', vendor_name: 'Weir' },
      uid: md5(String(i)),
      log_name: 'bench',
      original_time: new Date(time).toISOString(),
    },
    actor: { user: { name: user, uid: `u-${i % 2000}`, type_id: 1 } },
    src_endpoint: { ip: `10.0.${k >> 8}.${k & 255}`, port: 1024 + (i % 50_000) },
    dst_endpoint: { hostname: `host${i % 300}.example.com`, port: 443 },
    observables: [{ name: 'actor.user.name', type_id: 4, value: user }],
  };
}

interface Seeded {
  seconds: number;
  bytes: number;
  cpu: { generate: number; store: number; server: number | null };
}

/** CPU seconds of the PostgreSQL server's processes on this machine (live ones, plus the children the postmaster reaped). */
function postgresServerCpu(): number | null {
  try {
    const tick = 100; // USER_HZ on Linux
    let total = 0;
    let found = false;
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        continue;
      }
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (name !== 'postgres') continue;
      found = true;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields 14-17 (utime, stime, cutime, cstime) sit at 11-14 after the name
      total += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    }
    return found ? total / tick : null;
  } catch {
    return null;
  }
}

const cpuSeconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;

async function seed(
  store: EventStore,
  n: number,
  writeInTransaction: (fn: () => Promise<void>) => Promise<void>,
): Promise<Seeded> {
  const t0 = performance.now();
  const server0 = store.kind === 'postgres' ? postgresServerCpu() : null;
  let generate = 0;
  let storing = 0;
  let bytes = 0;
  for (let from = 0; from < n; from += BATCH) {
    const c0 = process.cpuUsage();
    const to = Math.min(n, from + BATCH);
    const made: { id: string; received: number; ocsf: Record<string, unknown> }[] = [];
    for (let i = from; i < to; i++) {
      const ocsf = event(i, n);
      // Received a few seconds after it happened (never later than now).
      made.push({ id: newId(), received: Math.min(NOW, (ocsf.time as number) + 3_000), ocsf });
    }
    const copies = storedCopies(
      'bench-store',
      { organization_id: ORG, integration_id: 1, stream: 'bench' },
      made.map((m) => JSON.stringify(m.ocsf)),
      (i) => made[i]!,
    );
    bytes += copies.bytes;
    const c1 = process.cpuUsage();
    generate += cpuSeconds(process.cpuUsage(c0));
    const batchId = newId();
    await store.prepare(batchId, [copies]);
    await writeInTransaction(() => store.write([copies]));
    storing += cpuSeconds(process.cpuUsage(c1));
  }
  const server1 = store.kind === 'postgres' ? postgresServerCpu() : null;
  return {
    seconds: (performance.now() - t0) / 1000,
    bytes,
    cpu: { generate, store: storing, server: server0 !== null && server1 !== null ? server1 - server0 : null },
  };
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

interface Timed {
  name: string;
  p50: number;
  p95: number;
  answer: unknown;
}

async function time(name: string, fn: () => Promise<unknown>): Promise<Timed> {
  for (let i = 0; i < 2; i++) await fn();
  const times: number[] = [];
  let answer: unknown;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    answer = await fn();
    times.push(performance.now() - t0);
  }
  const out = { name, p50: pct(times, 0.5), p95: pct(times, 0.95), answer };
  console.log(
    `  ${name.padEnd(62)} p50 ${out.p50.toFixed(1).padStart(8)} ms   p95 ${out.p95.toFixed(1).padStart(8)} ms   ${JSON.stringify(answer).slice(0, 90)}`,
  );
  return out;
}

async function queries(store: EventStore, n: number): Promise<Timed[]> {
  const all = { organizationIds: [ORG], from: new Date(NOW - (DAYS + 1) * DAY), to: new Date(NOW + 1000) };
  const last24 = { organizationIds: [ORG], from: new Date(NOW - DAY), to: new Date(NOW + 1000) };
  const where = (scope: typeof all, text: string): StoreScope => ({
    ...scope,
    condition: parseQueryText(text).condition,
  });
  const search = async (scope: StoreScope) => {
    const matched = await store.count(scope);
    const rows = await store.rows(scope, { fields: null, sort: [{ field: 'time', order: 'desc' }], limit: 100 });
    return { matched, rows: rows.length, newest: rows[0]?.time ?? null, oldest: rows.at(-1)?.time ?? null };
  };
  const out: Timed[] = [];
  out.push(
    await time(`1 count by class_uid, all ${DAYS} days`, () =>
      store.countBy({ ...all, condition: null }, ['class_uid'], 10),
    ),
  );
  out.push(
    await time('2 src_endpoint.ip = "10.0.1.42": count + 100 rows', () =>
      search(where(all, 'src_endpoint.ip = "10.0.1.42"')),
    ),
  );
  out.push(
    await time(`3 top 10 src_endpoint.ip, all ${DAYS} days`, () =>
      store.top({ ...all, condition: null }, 'src_endpoint.ip', 10),
    ),
  );
  out.push(
    await time('4 24 h, class_uid 3002, actor.user.name "user42": count + 100', () =>
      search(where(last24, 'class_uid = 3002 and actor.user.name = "user42"')),
    ),
  );
  out.push(
    await time('5 top 10 actor.user.name, last 24 h', () =>
      store.top({ ...last24, condition: null }, 'actor.user.name', 10),
    ),
  );
  out.push(
    await time(`6 metadata.uid = "${uidOf(n).slice(0, 8)}…" (not searched): count + 100`, () =>
      search(where(all, `metadata.uid = "${uidOf(n)}"`)),
    ),
  );
  return out;
}

function report(label: string, n: number, s: Seeded, size: string): void {
  const per1000 = (x: number) => ((x / n) * 1000).toFixed(3);
  const server = s.cpu.server === null ? '' : `, PostgreSQL server ${per1000(s.cpu.server)}`;
  console.log(
    `\n${label}: ${n.toLocaleString('en')} events (${Math.round(s.bytes / n)} bytes each) over ${DAYS} days seeded in ${s.seconds.toFixed(1)} s, ${Math.round(n / s.seconds).toLocaleString('en')} events/s`,
  );
  console.log(
    `  CPU s per 1,000 events: this process ${per1000(s.cpu.generate + s.cpu.store)} (generating the events and their copies ${per1000(s.cpu.generate)}, the store's prepare/write ${per1000(s.cpu.store)})${server}`,
  );
  console.log(`  on disk: ${size}`);
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;

const results: Record<string, Timed[]> = {};

if (values.mode === 'embedded' || values.mode === 'both') {
  const dir = mkdtempSync(path.join(tmpdir(), 'weir-bench-search-'));
  const file = path.join(dir, 'events.duckdb');
  let store: EventStore | undefined;
  try {
    store = await createDuckDbEventStore({
      path: file,
      statementTimeoutMs: STATEMENT_TIMEOUT_MS,
      memoryLimit: '256MB',
      threads: 2,
    });
    // DuckDB writes in prepare(); its write() joins no database, so it runs without a transaction.
    const seeded = await seed(store, EVENTS, (fn) => fn());
    const wal = existsSync(`${file}.wal`) ? statSync(`${file}.wal`).size : 0;
    report(
      'embedded (DuckDB on disk, 2 threads, 256MB)',
      EVENTS,
      seeded,
      `${mb(statSync(file).size)} file${wal ? ` + ${mb(wal)} WAL` : ''}`,
    );
    results.embedded = await queries(store, EVENTS);
  } finally {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
if (values.mode === 'postgres' || values.mode === 'both') {
  const base = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `weir_bench_search_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  let database: Database | undefined;
  try {
    database = await openDatabase({ url: url.toString(), poolMax: 8 });
    const db = database.db;
    await migrate(db);
    const store = createPostgresEventStore(db, { statementTimeoutMs: STATEMENT_TIMEOUT_MS });
    const seeded = await seed(store, PG_EVENTS, (fn) => inTransaction(db, fn));
    // What autovacuum would do to the partitions in a while, and to the parent never: statistics.
    await sql`analyze events`.execute(db);
    const size = (
      await sql<{
        s: string;
      }>`select sum(pg_total_relation_size(c.oid))::bigint as s from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'events'::regclass`.execute(
        db,
      )
    ).rows[0]?.s;
    report('PostgreSQL 15 (127.0.0.1:5432)', PG_EVENTS, seeded, `${mb(Number(size))} partitions with their indexes`);
    results.postgres = await queries(store, PG_EVENTS);
  } finally {
    await database?.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

if (results.embedded && results.postgres) {
  if (PG_EVENTS !== EVENTS) console.log('\nanswers not compared: the adapters stored different numbers of events');
  else {
    const differ = results.embedded.filter(
      (e, i) => JSON.stringify(e.answer) !== JSON.stringify(results.postgres![i]!.answer),
    );
    console.log(
      differ.length === 0 ? '\nboth adapters gave the same answers' : `\nanswers differ between the adapters:`,
    );
    for (const e of differ) {
      const p = results.postgres.find((x) => x.name === e.name)!;
      console.log(`  ${e.name}\n    duckdb   ${JSON.stringify(e.answer)}\n    postgres ${JSON.stringify(p.answer)}`);
    }
  }
}
