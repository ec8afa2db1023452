// Syslog over TCP against the JSON push, per core: how many events one process durably
// accepts per second of its own CPU. Distributed deployment (PostgreSQL + Redis, BullMQ), no
// worker running, so each process measured does only ingestion: `weir syslog` receiving
// LF-ended RFC 5424 lines (the firewall events of bench/fixtures/firewall.ts as key=value
// behind a syslog header, ~750 bytes) on --connections TCP connections, and `weir api`
// receiving the same events as JSON in NDJSON pushes of --batch events on as many lanes.
// A run ends when every event is durably accepted (accepted_batches, in PostgreSQL). Reports
// wall-clock events/s and events per CPU second of the measured process (user + system,
// /proc/<pid>/stat); the two alternate, medians of --runs.
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 \
//     npx tsx bench/syslog.ts [--events 100000] [--runs 3] [--connections 4] [--batch 1000]
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { freshPostgresDatabase } from '../test/support/db.js';
import { http, setUpIngestion } from '../test/support/ingest.js';
import { deletePrefix, uniquePrefix } from '../test/support/redis.js';
import { freePort } from '../test/support/rsyslog.js';
import { firewallEvent } from './fixtures/firewall.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '3' },
    connections: { type: 'string', default: '4' },
    batch: { type: 'string', default: '1000' },
  },
});
const total = Number(values.events);
const runs = Number(values.runs);
const connections = Number(values.connections);
const batchSize = Number(values.batch);
const ROOT = path.resolve(import.meta.dirname, '..');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const TICK = 100; // clock ticks per second of /proc/<pid>/stat

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICK;
}

function start(role: string, env: Record<string, string>): Promise<{ proc: ChildProcess; address: string }> {
  const proc = spawn(process.execPath, ['dist/src/main.js', role], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      for (const line of buf.split('\n')) {
        if (line.includes('"weir started"'))
          resolve({ proc, address: String((JSON.parse(line) as { address?: string }).address ?? '') });
      }
      buf = buf.slice(buf.lastIndexOf('\n') + 1);
    });
    proc.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
  });
}

const db = await freshPostgresDatabase();
const prefix = uniquePrefix();
const client = new pg.Client({ connectionString: db.url });
const procs: ChildProcess[] = [];
try {
  const tcpPort = await freePort('tcp');
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    WEIR_REDIS_PREFIX: prefix,
    WEIR_SECRET_KEY: 'cd'.repeat(32),
    WEIR_SYSLOG_PORTS: '1024-65535',
    WEIR_SYSLOG_REFRESH_MS: '200',
    WEIR_INGEST_MAX_PENDING_BATCHES: '10000000',
    WEIR_TOKEN_RATE_LIMIT: '1000000',
    WEIR_INGEST_BATCH_MAX_EVENTS: String(batchSize),
  };
  const api = await start('api', { ...env, PORT: '0' });
  procs.push(api.proc);
  const setup = await setUpIngestion(api.address, ['custom']);
  const headers = { cookie: setup.cookie };
  const created = await http(
    api.address,
    'POST',
    '/api/integrations/',
    {
      name: 'bench syslog',
      platform: 'syslog',
      organization_id: setup.organizationId,
      config: { listeners: [{ protocol: 'tcp', port: tcpPort }] },
    },
    headers,
  );
  if (created.status !== 201) throw new Error(JSON.stringify(created.json));
  const syslogId = Number(created.json.id);
  const jsonId = setup.integrations[0]!.id;
  const syslog = await start('syslog', env);
  procs.push(syslog.proc);
  await client.connect();
  const accepted = async (integrationId: number) =>
    Number(
      (
        await client.query<{ n: string }>(
          'select coalesce(sum(event_count), 0) as n from accepted_batches where integration_id = $1',
          [integrationId],
        )
      ).rows[0]!.n,
    );
  for (let i = 0; ; i++) {
    const s = await http(api.address, 'GET', `/api/ingest/integrations/${syslogId}`, undefined, headers);
    if ((s.json.syslog as { listeners: { state: string }[] }).listeners.some((l) => l.state === 'listening')) break;
    if (i > 200) throw new Error('the syslog listener did not start');
    await new Promise((r) => setTimeout(r, 100));
  }

  const events = Array.from({ length: 1000 }, (_, i) => firewallEvent(i));
  const kv = (e: Record<string, unknown>) =>
    Object.entries(e)
      .map(([k, v]) => `${k}="${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)
      .join(' ');
  const lines = events.map((e) => `<189>1 ${String(e.time)} ${String(e.device_name)} fw 4242 traffic - ${kv(e)}`);
  const ndjson = events.map((e) => JSON.stringify(e)).join('\n');
  const textBytes = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) / lines.length;
  const jsonBytes = Buffer.byteLength(ndjson) / events.length;

  async function runSyslog(): Promise<{ rate: number; perCpu: number }> {
    const before = await accepted(syslogId);
    const cpu0 = cpuSeconds(syslog.proc.pid!);
    const t0 = performance.now();
    const per = Math.ceil(total / connections);
    await Promise.all(
      Array.from(
        { length: connections },
        () =>
          new Promise<void>((resolve, reject) => {
            const s = net.connect(tcpPort, '127.0.0.1');
            s.on('error', reject);
            let sent = 0;
            const pump = () => {
              while (sent < per) {
                const n = Math.min(1000, per - sent);
                const chunk = `${Array.from({ length: n }, (_, k) => lines[(sent + k) % lines.length]).join('\n')}\n`;
                sent += n;
                if (!s.write(chunk)) return void s.once('drain', pump);
              }
              s.end(resolve);
            };
            s.on('connect', pump);
          }),
      ),
    );
    while ((await accepted(syslogId)) - before < per * connections) await new Promise((r) => setTimeout(r, 20));
    const seconds = (performance.now() - t0) / 1000;
    return { rate: (per * connections) / seconds, perCpu: (per * connections) / (cpuSeconds(syslog.proc.pid!) - cpu0) };
  }

  async function runJson(): Promise<{ rate: number; perCpu: number }> {
    const cpu0 = cpuSeconds(api.proc.pid!);
    const t0 = performance.now();
    const pushes = Math.ceil(total / events.length);
    let next = 0;
    const token = setup.integrations[0]!.token;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < pushes) {
          next++;
          const res = await fetch(`${api.address}/api/ingest/firewall`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
            body: ndjson,
          });
          if (res.status !== 200) throw new Error(`push: ${res.status} ${await res.text()}`);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    return {
      rate: (pushes * events.length) / seconds,
      perCpu: (pushes * events.length) / (cpuSeconds(api.proc.pid!) - cpu0),
    };
  }

  // A warm-up of each, then the measured runs, alternating.
  await runSyslog();
  await runJson();
  const s: { rate: number; perCpu: number }[] = [];
  const j: { rate: number; perCpu: number }[] = [];
  for (let r = 0; r < runs; r++) {
    s.push(await runSyslog());
    j.push(await runJson());
  }
  void jsonId;
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log(
    `Node ${process.version}, ${total} events a run, ${connections} connections, median of ${runs} runs (PostgreSQL + Redis/BullMQ, no worker)\n`,
  );
  console.log('| path | bytes/event | events/s (wall) | events per CPU second of the process |');
  console.log('|---|---|---|---|');
  console.log(
    `| syslog TCP (LF frames), weir syslog | ${Math.round(textBytes)} | ${fmt(median(s.map((x) => x.rate)))} | ${fmt(median(s.map((x) => x.perCpu)))} |`,
  );
  console.log(
    `| JSON push (NDJSON, ${events.length} a request), weir api | ${Math.round(jsonBytes)} | ${fmt(median(j.map((x) => x.rate)))} | ${fmt(median(j.map((x) => x.perCpu)))} |`,
  );
} finally {
  for (const p of procs) p.kill('SIGTERM');
  await Promise.all(procs.map((p) => new Promise((r) => (p.exitCode !== null ? r(null) : p.once('exit', r)))));
  await client.end().catch(() => undefined);
  await deletePrefix(prefix);
  await db.drop();
}
