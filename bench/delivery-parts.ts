// Parts of bench/delivery.ts: the events it stores, the webhook receiver it runs in a child
// process, the in-memory steps it times alone, and the timing of PGlite statements.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { gunzip, gzip as gzipCallback } from 'node:zlib';
import { newId } from '../src/core/ids.js';
import { ocsfCatalog } from '../src/ocsf/index.js';
import { decodeRecords, encodeRecords } from '../src/pipeline/batch-codec.js';
import { builtinMapping } from '../src/pipeline/normalize/builtin/index.js';
import { compileMapping } from '../src/pipeline/normalize/compile.js';
import { compileRoutes } from '../src/pipeline/route/compile.js';
import { gzip } from '../src/pipeline/sinks/http-common.js';
import { webhookBody } from '../src/pipeline/sinks/http/webhook.js';

const gzipAsync = promisify(gzipCallback);
const gunzipAsync = promisify(gunzip);
const cpuSeconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;

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

export interface ReceiverStats {
  requests: number;
  events: number;
  bytes: number;
  cpu: number;
}

export async function startReceiver(): Promise<{ url: string; proc: ChildProcess; stats(): Promise<ReceiverStats> }> {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', RECEIVER], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
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
function ocsfEvents(kind: string): (i: number) => Record<string, unknown> {
  if (kind === 'small') {
    return (i) => ({
      class_uid: 3002,
      activity_id: 1,
      time: Date.now(),
      user: { name: `user${i}`, uid: String(i) },
      src_endpoint: { ip: '192.0.2.10' },
      message: 'x'.repeat(300),
    });
  }
  const builtin = builtinMapping('okta', 'system_log');
  if (!builtin) throw new Error('the built-in okta/system_log mapping is missing');
  const mapping = compileMapping(builtin.document, ocsfCatalog());
  const fixtures = JSON.parse(
    readFileSync(new URL('../src/connectors/okta/fixtures/system_log.json', import.meta.url), 'utf8'),
  ) as Record<string, unknown>[];
  return (i) => {
    const raw = { ...fixtures[i % fixtures.length], uuid: randomUUID(), published: new Date().toISOString() };
    const r = mapping.map(raw, { receivedAtMs: Date.now() });
    if (!r.ok) throw new Error(`fixture ${i % fixtures.length}: ${r.kind}: ${r.detail}`);
    return r.event;
  };
}

/** Encoded batches (events column) built once, reused by every run; each run gives them new ids. */
export async function buildBatches(
  kind: string,
  batches: number,
  perBatch: number,
): Promise<{ events: string; lines: number; bytes: number }[]> {
  const event = ocsfEvents(kind);
  const out: { events: string; lines: number; bytes: number }[] = [];
  for (let b = 0; b < batches; b++) {
    const lines: string[] = [];
    for (let i = 0; i < perBatch; i++) {
      lines.push(
        JSON.stringify({
          id: newId(),
          organization_id: 0,
          integration_id: 0,
          stream: 'system_log',
          received_at: new Date().toISOString(),
          mapping_version_id: 'm',
          valid: true,
          ocsf: event(b * perBatch + i),
        }),
      );
    }
    const ndjson = lines.join('\n');
    out.push({ events: await encodeRecords(ndjson), lines: perBatch, bytes: Buffer.byteLength(ndjson) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The in-memory steps of routing and delivery, one at a time over every stored batch.
export async function steps(stored: { events: string }[], perBatch: number): Promise<void> {
  const compiled = compileRoutes([
    {
      id: 'r',
      organization_id: 0,
      name: 'all',
      position: 1,
      enabled: true,
      condition: null,
      transforms: [],
      destination_ids: ['d'],
      final: false,
      version: 1,
    },
  ]);
  const best = new Map<string, { wall: number; cpu: number }>();
  let timings = new Map<string, { wall: number; cpu: number }>();
  const time = async <T>(name: string, fn: () => T | Promise<T>): Promise<T> => {
    const t = performance.now();
    const c = process.cpuUsage();
    const out = await fn();
    const x = timings.get(name) ?? { wall: 0, cpu: 0 };
    x.wall += performance.now() - t;
    x.cpu += cpuSeconds(process.cpuUsage(c)) * 1000;
    timings.set(name, x);
    return out;
  };
  const bigChunks = { chunkSize: 1 << 20 };
  for (let pass = 0; pass < 3; pass++) {
    timings = new Map();
    for (const s of stored) {
      const ndjson = await time('routing: gunzip + base64 of the normalized batch (decodeRecords)', () =>
        decodeRecords(s.events),
      );
      const lines = await time('routing: split into lines', () => ndjson.split('\n'));
      const records = await time('routing: JSON.parse of each record', () => lines.map((l) => JSON.parse(l) as never));
      const plan = await time('routing: plan (catch-all route: ocsf text cut from the line)', () =>
        compiled.plan(records, lines),
      );
      const copies = plan.copies.get('d')!;
      const copy = await time('routing: NDJSON of the copy', () => copies.map((c) => c.line).join('\n'));
      const encoded = await time('routing: gzip + base64 of the copy (encodeRecords)', () => encodeRecords(copy));
      await time('  the same gzip with 1 MiB chunks', async () =>
        (await gzipAsync(copy, { level: 1, ...bigChunks })).toString('base64'),
      );
      const outLines = await time('delivery: gunzip + base64 + split of the outbox row', async () =>
        (await decodeRecords(encoded)).split('\n'),
      );
      await time('  the same gunzip with 1 MiB chunks', async () =>
        (await gunzipAsync(Buffer.from(encoded, 'base64'), bigChunks)).toString('utf8').split('\n'),
      );
      const body = await time('delivery, http: NDJSON body', () => webhookBody(outLines, 'ndjson'));
      await time('delivery, http gzip on: gzip of the body', () => gzip(body));
    }
    for (const [name, x] of timings) {
      const b = best.get(name);
      best.set(name, b ? { wall: Math.min(b.wall, x.wall), cpu: Math.min(b.cpu, x.cpu) } : x);
    }
  }
  const events = stored.length * perBatch;
  console.log('| step (no database) | wall µs per event | CPU µs per event |');
  console.log('|---|---|---|');
  for (const [name, x] of best)
    console.log(`| ${name} | ${((x.wall * 1000) / events).toFixed(1)} | ${((x.cpu * 1000) / events).toFixed(1)} |`);
  console.log('');
}

// ---------------------------------------------------------------------------------------
/** Time inside PGlite's query() by statement (first words), while `statementsOn`. */
export type StatementTimes = Map<string, { calls: number; ms: number }>;
/** `on` switches the timing; `times` is where the current phase's figures go. */
export const statements: { on: boolean; times: StatementTimes } = { on: false, times: new Map() };
export async function timeStatements(): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  type Query = (this: unknown, text: string, ...rest: unknown[]) => Promise<unknown>;
  let proto: { query?: Query } | null = PGlite.prototype as { query?: Query };
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'query'))
    proto = Object.getPrototypeOf(proto) as { query?: Query } | null;
  if (!proto?.query) throw new Error('PGlite has no query method to time');
  const original = proto.query;
  proto.query = async function (this: unknown, text: string, ...rest: unknown[]) {
    if (!statements.on) return original.call(this, text, ...rest);
    const t = performance.now();
    try {
      return await original.call(this, text, ...rest);
    } finally {
      const key = text.replace(/\s+/g, ' ').trim().slice(0, 90);
      const e = statements.times.get(key) ?? { calls: 0, ms: 0 };
      e.calls++;
      e.ms += performance.now() - t;
      statements.times.set(key, e);
    }
  };
}
export function statementTable(title: string, table: StatementTimes, events: number): string {
  const rows = [...table].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12);
  const lines = [`${title}`, '', '| statement (start) | calls | ms | µs per event |', '|---|---|---|---|'];
  for (const [k, v] of rows)
    lines.push(
      `| \`${k.replace(/\|/g, '\\|')}\` | ${v.calls} | ${Math.round(v.ms)} | ${((v.ms * 1000) / events).toFixed(1)} |`,
    );
  const all = [...table.values()].reduce((n, v) => n + v.ms, 0);
  lines.push(
    `| all statements | ${[...table.values()].reduce((n, v) => n + v.calls, 0)} | ${Math.round(all)} | ${((all * 1000) / events).toFixed(1)} |`,
  );
  return lines.join('\n');
}
