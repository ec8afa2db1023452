// Protocol inputs against the plain HTTP push, on the same events in the same run: events
// per CPU second of the Weir process (user + system, every thread, from the first send until
// the last event is processed), and wall-clock events/s. Each input is a file under
// bench/inputs/ exporting an InputBench (bench/inputs/types.ts); the push baseline is here.
// Weir runs as `weir all` (embedded: PGlite, in-process queue) from the built dist/.
//
//   npm run build && npx tsx bench/inputs.ts [--runs 3] [--events 20000] [--batch 500]
//     [--only push,hec,...]
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { http, processedEvents, setUpIngestion } from '../test/support/ingest.js';
import { cpuOf } from './proc.js';
import { eachBatch } from './inputs/post.js';
import type { InputBench, InputBenchContext, InputSender } from './inputs/types.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    events: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '500' },
    only: { type: 'string' },
  },
});
const ROOT = path.resolve(import.meta.dirname, '..');
const runs = Number(values.runs);
const eventCount = Number(values.events);
const batch = Number(values.batch);
const only = values.only?.split(',').map((s) => s.trim());

/** The plain push: NDJSON bodies of `batch` events to /api/ingest/{stream}. */
const push: InputBench = {
  name: 'push',
  async setup(ctx) {
    return {
      integrationId: ctx.integration.id,
      send: (events, size) =>
        eachBatch(events, size, async (slice) => {
          const body = slice.map((e) => JSON.stringify(e)).join('\n');
          const res = await fetch(`${ctx.baseUrl}/api/ingest/system_log`, {
            method: 'POST',
            headers: { authorization: `Bearer ${ctx.integration.token}`, 'content-type': 'application/x-ndjson' },
            body,
          });
          if (res.status !== 200) throw new Error(`push: ${res.status} ${await res.text()}`);
        }),
      close: async () => undefined,
    };
  },
};

async function inputBenches(): Promise<InputBench[]> {
  const dir = path.join(ROOT, 'bench/inputs');
  const found: InputBench[] = [push];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.ts') || file === 'types.ts') continue;
    const mod = (await import(path.join(dir, file))) as Record<string, unknown>;
    for (const value of Object.values(mod)) {
      const bench = value as InputBench;
      // A module may export its bench twice (named and default): each input runs once.
      if (bench && typeof bench === 'object' && 'setup' in bench && !found.some((b) => b.name === bench.name))
        found.push(bench);
    }
  }
  return only ? found.filter((b) => only.includes(b.name)) : found;
}

/** `count` Okta System Log events (~1 KB each, real samples with fresh ids). */
function events(count: number): Record<string, unknown>[] {
  const fixtures = JSON.parse(
    readFileSync(path.join(ROOT, 'src/connectors/okta/fixtures/system_log.json'), 'utf8'),
  ) as Record<string, unknown>[];
  return Array.from({ length: count }, (_, i) => ({
    ...fixtures[i % fixtures.length],
    uuid: randomUUID(),
    published: new Date().toISOString(),
  }));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

async function startWeir(dataDir: string): Promise<{ url: string; pid: number; stop: () => void }> {
  const proc = spawn(process.execPath, ['dist/src/main.js', 'all'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      LOG_LEVEL: 'info',
      WEIR_DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      // Object collection (bench/inputs/s3.ts) picks new objects up at the next scheduler pass.
      WEIR_COLLECT_SCHEDULE_MS: '500',
      WEIR_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const onData = (c: Buffer) => {
      buf += c.toString();
      const m = /"address":"(http:[^"]+)"/.exec(buf);
      if (!m?.[1]) return;
      // Drained from here on, unread (request logs), as a log shipper would.
      proc.stdout.off('data', onData);
      proc.stdout.on('data', () => undefined);
      resolve(m[1]);
    };
    proc.stdout.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`weir exited with ${String(code)}`)));
  });
  return { url, pid: proc.pid!, stop: () => proc.kill('SIGTERM') };
}

async function measure(
  weir: { url: string; pid: number },
  sender: InputSender,
  cookie: string,
  sample: Record<string, unknown>[],
) {
  const before = await processedEvents(weir.url, cookie, sender.integrationId);
  const cpu0 = cpuOf(weir.pid);
  const t0 = performance.now();
  await sender.send(sample, batch);
  const deadline = Date.now() + 600_000;
  let done = before;
  while (done - before < sample.length && Date.now() < deadline) {
    await new Promise((res) => setTimeout(res, 100));
    done = await processedEvents(weir.url, cookie, sender.integrationId);
  }
  if (done - before < sample.length) throw new Error(`only ${done - before} of ${sample.length} events processed`);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuOf(weir.pid) - cpu0;
  return { perCpu: sample.length / cpu, perWall: sample.length / seconds };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-bench-inputs-'));
  const weir = await startWeir(dataDir);
  try {
    const setup = await setUpIngestion(weir.url, []);
    const headers = { cookie: setup.cookie };
    const createIntegration = async (body: Record<string, unknown>): Promise<number> => {
      const res = await http(
        weir.url,
        'POST',
        '/api/integrations/',
        { organization_id: setup.organizationId, ...body },
        headers,
      );
      if (res.status !== 201) throw new Error(`integration: ${res.status} ${JSON.stringify(res.json)}`);
      return Number(res.json.id);
    };
    const sample = events(eventCount);
    const rows: { name: string; perCpu: number; perWall: number }[] = [];
    for (const bench of await inputBenches()) {
      const id = await createIntegration({ name: `bench-${bench.name}-${Date.now()}`, platform: 'custom' });
      const token = await http(weir.url, 'POST', `/api/ingest/integrations/${id}/token`, {}, headers);
      const ctx: InputBenchContext = {
        baseUrl: weir.url,
        cookie: setup.cookie,
        organizationId: setup.organizationId,
        integration: { id, token: String(token.json.token) },
        createIntegration,
      };
      const sender = await bench.setup(ctx);
      try {
        await measure(weir, sender, setup.cookie, sample.slice(0, Math.min(2000, eventCount))); // warm-up
        const results = [];
        for (let r = 0; r < runs; r++) results.push(await measure(weir, sender, setup.cookie, sample));
        rows.push({
          name: bench.name,
          perCpu: median(results.map((x) => x.perCpu)),
          perWall: median(results.map((x) => x.perWall)),
        });
        console.error(`${bench.name}: ${Math.round(rows.at(-1)!.perCpu)} events/CPU s`);
      } finally {
        await sender.close();
      }
    }
    const base = rows.find((r) => r.name === 'push')?.perCpu;
    console.log(`| input | events per CPU second (median of ${runs}) | vs push | events/s wall |`);
    console.log('|---|---|---|---|');
    for (const r of rows) {
      const ratio = base ? (r.perCpu / base).toFixed(2) : '-';
      console.log(
        `| ${r.name} | ${Math.round(r.perCpu).toLocaleString('en')} | ${ratio} | ${Math.round(r.perWall).toLocaleString('en')} |`,
      );
    }
  } finally {
    weir.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
