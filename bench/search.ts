// The event store's queries over --events stored events of mixed classes (default 1,000,000),
// on PGlite (on disk, as `weir all` keeps it) and on PostgreSQL, through the store's own code
// (modules/search/store-query.ts: the SQL a search runs). Events: Authentication 3002 (40%),
// Network Activity 4001 (30%), API Activity 6003 (20%), Process Activity 1007 (10%), spread
// evenly over --days days (default 7) ending now, in --orgs organizations (default 1: every
// event in the one searched), about 600 bytes of OCSF each with 2,000 distinct user names and
// 65,536 source addresses. Timed, --runs times each after 2 warm-ups, p50 and p95:
//   filter   time in the last 24 h, class_uid = 3002 (two indexed fields: the range and the
//            class) and actor.user.name = "user42" (a jsonb field): the search's two
//            statements, count and the first 100 rows newest first
//   count by class_uid, last 24 h;   count by class_uid, all --days days
//   top 10   actor.user.name (jsonb), last 24 h
// --indexes: also times the filter without the (organization_id, class_uid, time) index and
// with a GIN jsonb_path_ops index on the event, to show why the schema keeps the indexes it does.
//   npx tsx bench/search.ts [--mode embedded|postgres|both] [--events 1000000] [--days 7] [--orgs 1] [--runs 15] [--indexes]
// postgres: a fresh database next to BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), dropped at the end.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { createEventsStore, dayOf } from '../src/modules/search/events-store.js';
import { parseQueryText } from '../src/modules/search/query/text.js';
import { createStoreQueries, type StoreScope } from '../src/modules/search/store-query.js';
import { migrate, openDatabase, type Database, type DB } from '../src/platform/db/index.js';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'both' },
    events: { type: 'string', default: '1000000' },
    days: { type: 'string', default: '7' },
    orgs: { type: 'string', default: '1' },
    runs: { type: 'string', default: '15' },
    indexes: { type: 'boolean', default: false },
  },
});
const EVENTS = Number(values.events);
const DAYS = Number(values.days);
const ORGS = Number(values.orgs);
const RUNS = Number(values.runs);
const DAY = 86_400_000;
const NOW = Date.now();

async function seed(db: Kysely<DB>): Promise<void> {
  await sql`insert into organizations (name) select 'org ' || g from generate_series(1, ${ORGS}) g`.execute(db);
  const store = createEventsStore(db);
  for (let d = dayOf(NOW - DAYS * DAY); d <= dayOf(NOW); d += DAY) await store.ensureDay(d);
  const chunk = 50_000;
  for (let from = 0; from < EVENTS; from += chunk) {
    const to = Math.min(EVENTS, from + chunk) - 1;
    // The event, built in SQL: time spread evenly over the days, class by i % 10.
    await sql`
      insert into events (time, organization_id, integration_id, stream, class_uid, category_uid, activity_id, severity_id, event_id, event)
      select t, o, 1, 's', c, c / 1000, a, sv, gen_random_uuid(),
        jsonb_build_object(
          'time', (extract(epoch from t) * 1000)::bigint, 'class_uid', c, 'category_uid', c / 1000, 'activity_id', a, 'severity_id', sv,
          'type_uid', c * 100 + a, 'status_id', case when i % 7 = 0 then 2 else 1 end,
          'message', 'event ' || i || ' of the benchmark, a line of text like vendors send',
          'metadata', jsonb_build_object('version', '1.8.0', 'product', jsonb_build_object('name', 'Bench', 'vendor_name', 'Weir'), 'uid', md5(i::text)),
          'actor', jsonb_build_object('user', jsonb_build_object('name', 'user' || (i % 2000), 'uid', 'u-' || (i % 2000))),
          'src_endpoint', jsonb_build_object('ip', '10.' || ((i / 65536) % 256) || '.' || ((i / 256) % 256) || '.' || (i % 256)),
          'dst_endpoint', jsonb_build_object('hostname', 'host' || (i % 300) || '.example.com', 'port', 443),
          'observables', jsonb_build_array(jsonb_build_object('name', 'actor.user.name', 'type_id', 4, 'value', 'user' || (i % 2000))))
      from (
        select i, ${NOW}::float8 - ${DAYS * DAY}::float8 * (i::float8 / ${EVENTS}) as ms,
          case when i % 10 < 4 then 3002 when i % 10 < 7 then 4001 when i % 10 < 9 then 6003 else 1007 end as c,
          1 + i % 3 as a, 1 + i % 5 as sv, 1 + i % ${ORGS} as o
        from generate_series(${from}::int, ${to}::int) i
      ) s, lateral (select to_timestamp(s.ms / 1000) as t) tt`.execute(db);
  }
  await sql`analyze events`.execute(db);
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

async function time(name: string, fn: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 2; i++) await fn();
  const times: number[] = [];
  let answer: unknown;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    answer = await fn();
    times.push(performance.now() - t0);
  }
  const shown = JSON.stringify(answer).slice(0, 70);
  console.log(`  ${name.padEnd(58)} p50 ${pct(times, 0.5).toFixed(1).padStart(8)} ms   p95 ${pct(times, 0.95).toFixed(1).padStart(8)} ms   ${shown}`);
}

async function measure(label: string, database: Database): Promise<void> {
  const db = database.db;
  const t0 = performance.now();
  await migrate(db);
  await seed(db);
  const size = (await sql<{ s: string }>`select pg_size_pretty(sum(pg_total_relation_size(c.oid))) as s from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'events'::regclass`.execute(db)).rows[0]?.s;
  console.log(`\n${label}: ${EVENTS.toLocaleString('en')} events in ${ORGS} organization(s) over ${DAYS} days seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s; table and indexes ${size}`);
  const q = createStoreQueries(db, 600_000);
  const last24 = { organizationIds: [1], from: new Date(NOW - DAY), to: new Date(NOW + 1000) };
  const all = { organizationIds: [1], from: new Date(NOW - (DAYS + 1) * DAY), to: new Date(NOW + 1000) };
  const filter: StoreScope = { ...last24, condition: parseQueryText('class_uid = 3002 and actor.user.name = "user42"').condition };
  const search = async (scope: StoreScope) => {
    const matched = await q.count(scope);
    const rows = await q.rows(scope, { fields: null, sort: [{ field: 'time', order: 'desc' }], limit: 100 });
    return { matched, rows: rows.length };
  };
  await time('filter (24 h, class_uid, jsonb user): count + 100 rows', () => search(filter));
  await time('count by class_uid, last 24 h', () => q.countBy({ ...last24, condition: null }, ['class_uid'], 10));
  await time(`count by class_uid, all ${DAYS} days`, () => q.countBy({ ...all, condition: null }, ['class_uid'], 10));
  await time('top 10 actor.user.name, last 24 h', () => q.top({ ...last24, condition: null }, 'actor.user.name', 10));
  if (values.indexes) {
    await sql`drop index events_org_class_time`.execute(db);
    await time('filter without (organization_id, class_uid, time)', () => search(filter));
    await sql`create index events_org_class_time on events (organization_id, class_uid, time)`.execute(db);
    const t1 = performance.now();
    await sql`create index events_gin on events using gin (event jsonb_path_ops)`.execute(db);
    console.log(`  (GIN jsonb_path_ops index built in ${((performance.now() - t1) / 1000).toFixed(1)} s)`);
    await sql`analyze events`.execute(db);
    await time('filter with a GIN jsonb_path_ops index too', () => search(filter));
    await time('the same with containment (event @> ...) for GIN', () =>
      sql`select count(*) from events where organization_id = 1 and time >= ${last24.from} and time < ${last24.to} and class_uid = 3002 and event @> '{"actor":{"user":{"name":"user42"}}}'`.execute(db),
    );
  }
}

if (values.mode === 'embedded' || values.mode === 'both') {
  const dir = mkdtempSync(path.join(tmpdir(), 'weir-bench-search-'));
  const database = await openDatabase({ dataDir: path.join(dir, 'pglite') });
  try {
    await measure('embedded (PGlite on disk)', database);
  } finally {
    await database.close();
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
  const database = await openDatabase({ url: url.toString(), poolMax: 8 });
  try {
    await measure('PostgreSQL 15 (127.0.0.1:5432)', database);
  } finally {
    await database.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
