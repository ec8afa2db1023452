// GET /api/dashboard/summary's service over many organizations: how long one summary takes
// for a platform caller (every organization), for an organization's caller (its one
// organization among many), and for a platform caller narrowing to one organization.
// Seeds N organizations, each with 3 integrations (a collecting okta one with collector
// state, a push one, an inactive one), 2 destinations (state, hourly stats, outbox rows),
// stream counters and ledger rows for today and yesterday (2 streams), 5 quarantined events
// and 3 new drift fields; --days of ledger history (default 30, as retention keeps it) and
// --hours of hourly-ledger history (default 48, as retention keeps it: 5 terms per stream and
// hour); then times the summary, runs after a warm-up, and prints medians.
//   npx tsx bench/dashboard.ts [--mode embedded|postgres|both] [--orgs 1000] [--runs 15] [--days 30] [--hours 48]
// postgres: a fresh database created next to BENCH_DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/test) and dropped at the end.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { systemClock } from '../src/core/clock.js';
import { GLOBAL_SCOPE, type Scope } from '../src/core/scope.js';
import { createDashboardService } from '../src/modules/dashboard/service.js';
import { createDashboardStore } from '../src/modules/dashboard/store.js';
import { evaluate } from '../src/modules/licenses/service.js';
import { migrate, openDatabase, type Database, type DB } from '../src/platform/db/index.js';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'both' },
    orgs: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '15' },
    days: { type: 'string', default: '30' },
    hours: { type: 'string', default: '48' },
    'drop-day-indexes': { type: 'boolean', default: false },
  },
});
const ORGS = Number(values.orgs);
const RUNS = Number(values.runs);
/** UTC days of ledger and counter history kept (retention): the summary reads two of them. */
const DAYS = Number(values.days);
/** Hours of hourly-ledger history kept (retention): the summary reads the last 25. */
const HOURS = Number(values.hours);

async function seed(db: Kysely<DB>): Promise<void> {
  const days = Array.from({ length: Math.max(2, DAYS) }, (_, i) =>
    new Date(Date.now() - i * 86_400_000).toISOString().slice(0, 10),
  );
  await sql`insert into organizations (name) select 'org ' || g from generate_series(1, ${ORGS}) g`.execute(db);
  await sql`
    insert into integrations (organization_id, name, platform, is_active, config)
    select o.id, k.name, k.platform, k.active, k.config::jsonb
    from organizations o cross join (values ('okta', 'okta', true, '{"collect": true}'), ('push', 'custom', true, '{}'), ('old', 'custom', false, '{}')) k(name, platform, active, config)`.execute(
    db,
  );
  await sql`
    insert into collector_state (integration_id, stream, organization_id, last_success_at, consecutive_failures)
    select i.id, 'system_log', i.organization_id, now(), case when i.organization_id % 10 = 0 then 2 else 0 end
    from integrations i where i.platform = 'okta'`.execute(db);
  await sql`
    insert into destinations (id, organization_id, name, type, config)
    select o.id || '-' || k, o.id, 'dest ' || k, 'http', '{}'::jsonb from organizations o cross join generate_series(1, 2) k`.execute(
    db,
  );
  await sql`insert into destination_state (destination_id, last_success_at) select id, now() from destinations`.execute(
    db,
  );
  await sql`insert into destination_stats (destination_id, hour, delivered) select id, date_trunc('hour', now()), 500 from destinations`.execute(
    db,
  );
  await sql`
    insert into stream_counters (organization_id, integration_id, stream, day, events_in, quarantined)
    select i.organization_id, i.id, s, d, 1000, 5 from integrations i cross join (values ('a'), ('b')) s(s) cross join unnest(${days}::text[]) d(d)`.execute(
    db,
  );
  await sql`
    insert into ledger (organization_id, integration_id, stream, day, outcome, destination_id, reason, count)
    select i.organization_id, i.id, s, d, o.outcome, case when o.outcome in ('delivered', 'copies', 'dead_lettered') then i.organization_id || '-1' else '' end,
      case when o.outcome = 'filtered' then 'no_route' when o.outcome = 'dead_lettered' then 'http_4xx' else '' end, o.n
    from integrations i cross join (values ('a'), ('b')) s(s) cross join unnest(${days}::text[]) d(d)
      cross join (values ('routed', 900), ('copies', 900), ('delivered', 890), ('dead_lettered', 10), ('filtered', 95)) o(outcome, n)`.execute(
    db,
  );
  await sql`
    insert into ledger_hours (organization_id, integration_id, stream, hour, term, count)
    select i.organization_id, i.id, s, date_trunc('hour', now()) - make_interval(hours => h), t.term, t.n
    from integrations i cross join (values ('a'), ('b')) s(s) cross join generate_series(0, ${Math.max(1, HOURS) - 1}) h
      cross join (values ('events_in', 42), ('quarantined', 1), ('filtered', 4), ('delivered', 37), ('dead_lettered', 1)) t(term, n)`.execute(
    db,
  );
  await sql`
    insert into quarantine_events (id, organization_id, integration_id, stream, received_at, raw, error_kind, error_detail)
    select gen_random_uuid()::text, i.organization_id, i.id, 'a', now(), '{}'::jsonb, 'no_mapping', 'none'
    from integrations i cross join generate_series(1, 5) where i.name = 'push'`.execute(db);
  await sql`
    insert into drift_fields (id, organization_id, integration_id, stream, path, value_type, first_seen_at, last_seen_at)
    select gen_random_uuid()::text, i.organization_id, i.id, 'system_log', 'field_' || k, 'string', now(), now() from integrations i cross join generate_series(1, 3) k where i.name = 'okta'`.execute(
    db,
  );
  // Compare with the schema before migration 0013 (its day indexes).
  if (values['drop-day-indexes']) {
    await sql`drop index if exists ledger_day`.execute(db);
    await sql`drop index if exists stream_counters_day`.execute(db);
  }
  await sql`analyze`.execute(db);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(label: string, database: Database): Promise<void> {
  const started = performance.now();
  await migrate(database.db);
  await seed(database.db);
  const seeded = performance.now() - started;
  const service = createDashboardService({
    store: createDashboardStore(database.db),
    clock: systemClock,
    editions: { current: async () => evaluate(null, new Date()) },
    isPull: (p) => p === 'okta',
  });
  const orgs = (await database.db.selectFrom('organizations').select('id').orderBy('id').execute()).map((r) => r.id);
  const one = orgs[Math.floor(orgs.length / 2)]!;
  const cases: [string, () => Promise<unknown>][] = [
    ['platform caller, every organization', () => service.summary(GLOBAL_SCOPE)],
    ['organization caller (1 of N)', () => service.summary({ global: false, organizationIds: [one] } satisfies Scope)],
    ['platform caller, organization_id=one', () => service.summary(GLOBAL_SCOPE, one)],
  ];
  const check = (await service.summary(GLOBAL_SCOPE)) as {
    organizations: number;
    traffic: { today: { events_in: number }; last_24_hours: { events_in: number } };
  };
  console.log(
    `\n${label}: ${ORGS} organizations seeded in ${(seeded / 1000).toFixed(1)} s; summary counts ${check.organizations} orgs, ${check.traffic.today.events_in} events in today, ${check.traffic.last_24_hours.events_in} in the last 24 hours`,
  );
  for (const [name, fn] of cases) {
    for (let i = 0; i < 3; i++) await fn();
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      await fn();
      times.push(performance.now() - t0);
    }
    console.log(
      `  ${name.padEnd(40)} median ${median(times).toFixed(1)} ms  (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)}, ${RUNS} runs)`,
    );
  }
}

if (values.mode === 'embedded' || values.mode === 'both') {
  const database = await openDatabase({ dataDir: 'memory://' });
  try {
    await measure('embedded (PGlite in memory)', database);
  } finally {
    await database.close();
  }
}
if (values.mode === 'postgres' || values.mode === 'both') {
  const base = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `weir_bench_dash_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString(), poolMax: 8 });
  try {
    await measure('postgres (127.0.0.1:5432)', database);
  } finally {
    await database.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
