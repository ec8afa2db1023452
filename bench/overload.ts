// Overload (issue 28, decision 0062): a destination answering in 5 s and one that is down,
// pushers at full speed for a fixed time against `weir all` (dist/), then both recover. The
// scenario is test/support/overload.ts (the overload e2e test runs it shorter). Printed per
// run: events acknowledged, refusals by code, delivered, the backlog peak per destination
// (health API), RSS and data-size peaks, and how long the drain took after recovery; with
// the backlog budget (block, the default policy) and, for comparison, with a budget so large
// it never applies (what Weir did before backlog budgets).
//   npm run build && npx tsx bench/overload.ts [--seconds 60] [--budget 100000] [--pushers 4] [--distributed] [--root <another checkout, built>] [--no-compare]
// --no-compare: only the run with the budget. --budget 0: no budget setting at all (for a build
// from before backlog budgets, which refuses it).
// --distributed: PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres;
// a fresh database is created and dropped) and Redis (REDIS_URL, default redis://127.0.0.1:6379/0).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { directoryBytes, runOverload, type OverloadFigures } from '../test/support/overload.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    budget: { type: 'string', default: '100000' },
    pushers: { type: 'string', default: '4' },
    distributed: { type: 'boolean', default: false },
    root: { type: 'string' },
    'no-compare': { type: 'boolean', default: false },
  },
});
/** The checkout whose dist/ runs (--root: another build, for an A/B). */
const root = path.resolve(values.root ?? path.join(import.meta.dirname, '..'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function admin(url: string, text: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

async function run(budget: number): Promise<OverloadFigures> {
  const port = 18100 + Math.floor(Math.random() * 800);
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    WEIR_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
  };
  let dataSize: () => Promise<number>;
  let cleanup: () => Promise<void>;
  if (values.distributed) {
    const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    const name = `weir_overload_${randomBytes(4).toString('hex')}`;
    await admin(base, `create database ${name}`);
    const url = new URL(base);
    url.pathname = `/${name}`;
    Object.assign(env, {
      DATABASE_URL: url.toString(),
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0',
      WEIR_REDIS_PREFIX: `overload-${name}`,
      WEIR_SECRET_KEY: 'ab'.repeat(32),
    });
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    dataSize = async () => {
      return Number(
        (await client.query<{ n: string }>('select pg_database_size(current_database())::text as n')).rows[0]!.n,
      );
    };
    cleanup = async () => {
      await client.end().catch(() => undefined);
      await admin(base, `drop database if exists ${name} with (force)`);
    };
  } else {
    const dir = mkdtempSync(path.join(tmpdir(), 'weir-overload-'));
    env.WEIR_DATA_DIR = dir;
    dataSize = async () => directoryBytes(dir);
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  }
  const proc = spawn(process.execPath, ['dist/src/main.js', 'all'], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      const ready = await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (i > 240) throw new Error('weir did not become ready');
      await sleep(500);
    }
    return await runOverload({
      url,
      pid: proc.pid!,
      dataSize,
      pushMs: Number(values.seconds) * 1000,
      pushers: Number(values.pushers),
      eventsPerPush: 500,
      budgetEvents: budget,
      drainTimeoutMs: 1_800_000,
    });
  } finally {
    proc.kill('SIGTERM');
    await new Promise((resolve) => proc.once('exit', resolve));
    await cleanup();
  }
}

const mode = values.distributed ? 'PostgreSQL + Redis' : 'embedded';
console.log(
  `overload, ${mode}: ${values.seconds} s of pushers (${values.pushers} per integration, 500 Okta events per push); a 5 s destination and a down one (node ${process.version})`,
);
const runs: [string, number][] = [
  [
    Number(values.budget) > 0
      ? `budget ${Number(values.budget).toLocaleString('en')} events, block`
      : 'no budget setting',
    Number(values.budget),
  ],
];
if (!values['no-compare']) runs.push(['no budget (1,000,000,000 events)', 1_000_000_000]);
console.log(`build: ${root}`);
for (const [label, budget] of runs) {
  const f = await run(budget);
  console.log(`\n${label}`);
  console.log(
    `  acknowledged ${f.acknowledged.toLocaleString('en')}; refused ${JSON.stringify(f.refusals)} (without Retry-After: ${f.refusalsWithoutRetryAfter}); other failures ${f.otherFailures}`,
  );
  console.log(
    `  backlog peak: slow ${f.backlogPeak.slow?.toLocaleString('en')}, down ${f.backlogPeak.down?.toLocaleString('en')} events`,
  );
  console.log(
    `  RSS ${f.rssStartMiB.toFixed(0)} -> peak ${f.rssPeakMiB.toFixed(0)} MiB; data ${f.dataStartMiB.toFixed(0)} -> peak ${f.dataPeakMiB.toFixed(0)} MiB`,
  );
  console.log(
    `  after recovery: delivered ${f.delivered.toLocaleString('en')} of ${f.acknowledged.toLocaleString('en')} in ${f.drainSeconds.toFixed(1)} s; ledger pending ${f.ledger.pending}, unaccounted ${f.ledger.unaccounted}; missing ${f.missing.length}`,
  );
}
