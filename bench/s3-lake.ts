// The s3 sink's parquet_security_lake format: events/s through the real sink (PutObject to the
// in-process S3 of test/support/fake-s3.ts, signature checked) and bytes written per event.
// Also events per CPU second of this process (sink and fake S3 together), steadier than
// events/s on a shared machine.
// Events: the built-in mappings' vendor fixtures (okta, sysmon, VPC flow, Route 53, CloudTrail),
// cycled with distinct ids and times, so each batch holds several OCSF classes.
//   npx tsx bench/s3-lake.ts [--events 2000] [--batches 5] [--runs 5]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { v7 as uuidv7 } from 'uuid';
import { startFakeS3 } from '../test/support/fake-s3.js';
import { sinkBatch, sinkContext } from '../test/support/sink-batch.js';
import { ocsfCatalog } from '../src/ocsf/index.js';
import { builtinMapping } from '../src/pipeline/normalize/builtin/index.js';
import { compileMapping } from '../src/pipeline/normalize/compile.js';
import { s3SinkType } from '../src/pipeline/sinks/s3/index.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    batches: { type: 'string', default: '5' },
    runs: { type: 'string', default: '5' },
  },
});
const perBatch = Number(values.events);
const batches = Number(values.batches);
const runs = Number(values.runs);

const STREAMS: [string, string][] = [
  ['okta', 'system_log'],
  ['sysmon', 'operational'],
  ['aws_vpc_flow', 'flow_logs'],
  ['aws_route53_resolver', 'query_logs'],
  ['aws_cloudtrail', 'cloudtrail'],
];

function samples(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const [platform, name] of STREAMS) {
    const mapping = compileMapping(builtinMapping(platform, name)!.document, ocsfCatalog());
    const url = new URL(`../src/connectors/${platform}/fixtures/${name}.json`, import.meta.url);
    for (const raw of JSON.parse(readFileSync(url, 'utf8')) as Record<string, unknown>[]) {
      const r = mapping.map(raw, { receivedAtMs: 0 });
      if (r.ok) out.push(r.event);
    }
  }
  return out;
}

const base = samples();
const KEY = { access_key_id: 'AKIDBENCH0000001', secret_access_key: 'bench-secret-key-0123' };
const s3 = await startFakeS3({
  credentials: [{ accessKeyId: KEY.access_key_id, secretAccessKey: KEY.secret_access_key }],
  buckets: ['weir-lake'],
});
const sink = s3SinkType.create(
  sinkContext({
    config: {
      bucket: 'weir-lake',
      region: 'us-east-1',
      endpoint: s3.url,
      prefix: 'weir/',
      format: 'parquet_security_lake',
      security_lake: { source_name: 'weir_{class_name}', account_id: '123456789012' },
    },
    credential: KEY,
  }),
);

let serial = 0;
function batch() {
  const t0 = Date.UTC(2025, 2, 14, 12);
  const events = Array.from({ length: perBatch }, (_, i) => {
    const e = structuredClone(base[i % base.length]!);
    const n = serial++;
    e.time = t0 + n;
    (e.metadata as Record<string, unknown>).uid = `bench-${n}`;
    return e;
  });
  return sinkBatch(events, { ids: events.map((_, i) => uuidv7({ msecs: t0 + serial + i })) });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
await sink.send(batch(), AbortSignal.timeout(120_000)); // warm-up: JIT, schemas of the classes

const rates: number[] = [];
const cpuRates: number[] = [];
const sizes: number[] = [];
for (let r = 0; r < runs; r++) {
  const prepared = Array.from({ length: batches }, batch);
  const before = new Set(s3.keys('weir-lake'));
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (const b of prepared) await sink.send(b, AbortSignal.timeout(120_000));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  cpuRates.push((batches * perBatch) / ((used.user + used.system) / 1e6));
  const written = s3.keys('weir-lake').filter((k) => !before.has(k));
  const bytes = written.reduce((sum, k) => sum + s3.object('weir-lake', k)!.body.length, 0);
  rates.push((batches * perBatch) / seconds);
  sizes.push(bytes / written.length);
  console.log(
    `run ${r + 1}: ${Math.round(rates.at(-1)!)} events/s, ${Math.round(cpuRates.at(-1)!)} events/CPU s, ${written.length} objects, ${Math.round(bytes / 1024)} KiB (${Math.round(bytes / (batches * perBatch))} B/event)`,
  );
}
console.log(
  `median: ${Math.round(median(rates))} events/s, ${Math.round(median(cpuRates))} events/CPU s, ${Math.round(median(sizes) / 1024)} KiB per object; ${perBatch} events per batch, ${base.length} distinct sample events`,
);
await sink.close();
await s3.close();
