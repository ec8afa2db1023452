// A 1,000,000-row lookup table through the API, embedded (PGlite in process): the time to
// create it from CSV (parse, check, encode, gzip, store, in one request), to add a row
// patch (a whole new version), to load it for the pass (stored bytes to an index) and to
// enrich an event with it (dry-run), with the process's peak RSS.
//
//   npx tsx bench/enrich-table.ts [--rows 1000000]
import { parseArgs } from 'node:util';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { openDatabase } from '../src/platform/db/index.js';
import { createLogger } from '../src/platform/logger.js';
import type { TestApp } from '../test/support/app.js';
import { createOrganization, createPrincipal, TEST_SECRET_KEY } from '../test/support/identity.js';
import { loadTableData } from '../src/modules/enrichment/common.js';
import { buildTable } from '../src/pipeline/enrich/table.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' } } });
const rows = Number(values.rows);
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MiB`;
let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);

// The embedded deployment in this process (an in-memory PGlite), as a test app builds it.
const config = loadConfig({
  WEIR_SECRET_KEY: TEST_SECRET_KEY,
  WEIR_DATA_DIR: path.join(tmpdir(), 'weir-bench-unused'),
  LOG_LEVEL: 'silent',
  WEIR_TOKEN_RATE_LIMIT: '1000000',
});
const logger = createLogger({ level: 'silent', role: 'api' });
const database = await openDatabase({ dataDir: 'memory://', poolMax: 5 });
const container = await createContainer(config, { role: 'api', database, logger });
const app = await buildApp(container);
const t = {
  app,
  container,
  logs: [],
  close: async () => (await app.close(), await container.close(), await database.close()),
} as unknown as TestApp;
const org = await createOrganization(t, 'bench');
const admin = await createPrincipal(t, { role: 'admin', organizationId: org });
const lines = ['user,department,manager'];
for (let i = 0; i < rows; i++) lines.push(`user-${String(i).padStart(7, '0')},dept-${i % 40},manager-${i % 500}`);
const csv = `${lines.join('\n')}\n`;
console.log(`CSV: ${rows} rows, ${mib(Buffer.byteLength(csv))}`);

let started = performance.now();
const created = await t.app.inject({
  method: 'POST',
  url: '/api/collectors/enrichment/tables',
  headers: admin.headers,
  payload: { name: 'users', key_column: 'user', match: 'exact', csv },
});
if (created.statusCode !== 201) throw new Error(created.body);
console.log(`create (one request): ${((performance.now() - started) / 1000).toFixed(1)} s`);
const id = created.json<{ id: string }>().id;

started = performance.now();
const patched = await t.app.inject({
  method: 'POST',
  url: `/api/collectors/enrichment/tables/${id}/versions`,
  headers: admin.headers,
  payload: { mode: 'patch', upsert: [{ user: 'user-new', department: 'new', manager: 'm' }], delete: ['user-0000001'] },
});
if (patched.statusCode !== 201) throw new Error(patched.body);
console.log(`row patch (a whole new version): ${((performance.now() - started) / 1000).toFixed(1)} s`);

started = performance.now();
const stored = await t.container.database.db
  .selectFrom('enrichment_table_versions')
  .select('data')
  .where('table_id', '=', id)
  .where('version', '=', 2)
  .executeTakeFirstOrThrow();
const data = await loadTableData(stored.data);
const lookup = buildTable(data);
console.log(
  `load for the pass (stored bytes → index): ${((performance.now() - started) / 1000).toFixed(1)} s, stored ${mib(stored.data.length)} (base64 of gzip)`,
);
const last = rows - 1;
if (
  lookup.get(`user-${String(last).padStart(7, '0')}`)?.department !== `dept-${last % 40}` ||
  lookup.get('user-0000001') !== undefined
)
  throw new Error('wrong lookup');

const policy = {
  name: 'dept',
  key: 'user.name',
  lookup: { table_id: id },
  output: { enrichment: { name: 'department' } },
};
started = performance.now();
const dry = await t.app.inject({
  method: 'POST',
  url: '/api/collectors/enrichment/dry-run',
  headers: admin.headers,
  payload: {
    events: [{ class_uid: 3002, user: { name: `user-${String(Math.floor(rows / 2)).padStart(7, '0')}` } }],
    policies: [policy],
  },
});
console.log(
  `dry-run with it (loads it): ${((performance.now() - started) / 1000).toFixed(1)} s → ${JSON.stringify(dry.json<{ items: { policies: unknown }[] }>().items[0]?.policies)}`,
);
clearInterval(sampler);
console.log(`peak RSS: ${mib(peak)}`);
await t.close();
