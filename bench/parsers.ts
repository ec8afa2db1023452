// What each parse step costs per event, against the JSON path. The same firewall traffic
// events (bench/fixtures/firewall.ts: 31 fields, ~715 bytes as JSON) written as the text a
// device would send: key=value (alone, and behind an RFC 5424 syslog header), CSV, CEF,
// LEEF 2.0, a line read by an RE2 regex with named groups, and Windows-event-style XML. Each
// format is mapped by the firewall document of bench/normalize.ts with the matching `parse`
// steps (its 15 paths under the parser's key: extension.* for CEF...), so the output is the
// same OCSF Network Activity. Per format: the parse steps alone (the text to the parsed
// event), and the whole normalization stage (normalizeBatch on batches of --batch events:
// parse, map, validate, serialize), with its ratio to the JSON path (JSON.parse of the same
// event). csv-parse's synchronous parser on the CSV lines is the row that explains why the
// CSV step does not use it. The script stops before measuring if an event of any format is
// quarantined or maps differently from the JSON one. Rounds alternate the formats; medians.
//
//   npx tsx bench/parsers.ts [--events 20000] [--runs 5] [--batch 1000]
import { parseArgs } from 'node:util';
import { parse as csvParse } from 'csv-parse/sync';
import { v7 as uuidv7 } from 'uuid';
import { createValidator, ocsfCatalog } from '../src/ocsf/index.js';
import type { IngestBatch } from '../src/pipeline/envelope.js';
import { compileMapping } from '../src/pipeline/normalize/compile.js';
import { normalizeBatch } from '../src/pipeline/normalize/stage.js';
import type { Assignment, MappingDocument } from '../src/pipeline/normalize/types.js';
import { compileParseSteps, type ParseStep } from '../src/pipeline/parse/steps.js';
import { FIREWALL_MAPPING, firewallEvent } from './fixtures/firewall.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '5' },
    batch: { type: 'string', default: '1000' },
  },
});
const total = Number(values.events);
const runs = Number(values.runs);
const batchSize = Number(values.batch);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

type Ev = Record<string, unknown>;
const events: Ev[] = Array.from({ length: batchSize }, (_, i) => firewallEvent(i));
const keys = Object.keys(events[0]!);
const str = (v: unknown) => String(v);

// The 15 fields the firewall mapping reads.
const FIREWALL_FIELDS: Set<string> = new Set([
  'time',
  'session_id',
  'device_name',
  'src_ip',
  'src_port',
  'dst_ip',
  'dst_port',
  'protocol',
  'action',
  'rule_name',
  'user',
  'severity',
  'bytes_in',
  'bytes_out',
  'packets',
]);

const cefValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/=/g, '\\=');
const csvField = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
const xmlText = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;');

interface Format {
  name: string;
  line: (e: Ev) => string;
  parse?: ParseStep[];
  /** Where the parsed fields are, for the mapping's paths. */
  prefix?: string;
}

const kvLine = (e: Ev) => keys.map((k) => `${k}="${str(e[k]).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(' ');
const FORMATS: Format[] = [
  { name: 'json (the JSON path)', line: (e) => JSON.stringify(e) },
  { name: 'kv', line: kvLine, parse: [{ parser: 'kv' }] },
  {
    name: 'syslog + kv',
    line: (e) => `<189>1 ${str(e.time)} ${str(e.device_name)} fw 4242 traffic - ${kvLine(e)}`,
    parse: [{ parser: 'syslog' }, { parser: 'kv' }],
  },
  {
    name: 'csv',
    line: (e) => keys.map((k) => csvField(str(e[k]))).join(','),
    parse: [{ parser: 'csv', columns: keys }],
  },
  {
    name: 'cef',
    line: (e) =>
      `CEF:0|Weir|Bench NGFW|1.0|traffic|traffic|5|${keys.map((k) => `${k}=${cefValue(str(e[k]))}`).join(' ')}`,
    parse: [{ parser: 'cef' }],
    prefix: 'extension.',
  },
  {
    name: 'leef 2.0',
    line: (e) => `LEEF:2.0|Weir|Bench NGFW|1.0|traffic|^|${keys.map((k) => `${k}=${str(e[k])}`).join('^')}`,
    parse: [{ parser: 'leef' }],
    prefix: 'attributes.',
  },
  {
    name: 'regex (RE2, 15 named groups)',
    line: (e) => keys.map((k) => `${k}=${str(e[k])}`).join(' '),
    parse: [
      {
        parser: 'regex',
        pattern: `^${keys.map((k) => (FIREWALL_FIELDS.has(k) ? `${k}=(?P<${k}>\\S*)` : `${k}=\\S*`)).join(' ')}$`,
      },
    ],
  },
  {
    name: 'xml (windows_event)',
    line: (e) =>
      `<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event"><System><Provider Name="Bench"/><EventID>5156</EventID><TimeCreated SystemTime="${str(e.time)}"/><Computer>${str(e.device_name)}</Computer></System><EventData>${keys.map((k) => `<Data Name="${k}">${xmlText(str(e[k]))}</Data>`).join('')}</EventData></Event>`,
    parse: [{ parser: 'xml', format: 'windows_event' }],
    prefix: 'EventData.',
  },
];

function prefixed(doc: MappingDocument, prefix: string, parse: ParseStep[] | undefined): MappingDocument {
  const p = (path: string) => `${prefix}${path}`;
  const assignment = (a: Assignment): Assignment => ({
    ...a,
    ...(typeof a.from === 'string' ? { from: p(a.from) } : {}),
  });
  return {
    ...doc,
    ...(parse ? { parse } : {}),
    rules: doc.rules.map((r) => ({
      ...r,
      activity_id:
        typeof r.activity_id === 'number' ? r.activity_id : { ...r.activity_id, from: p(r.activity_id.from as string) },
      set: (r.set ?? []).map(assignment),
    })),
  };
}

const validator = createValidator(ocsfCatalog());
const validate = (e: Ev) => validator.validate(e);
const received_at = new Date().toISOString();

function stage(compiled: ReturnType<typeof compileMapping>, texts: string[]) {
  const batch: IngestBatch = {
    id: uuidv7(),
    organization_id: 1,
    integration_id: 1,
    platform: 'custom',
    stream: 'firewall',
    received_at,
    source: 'push',
    ids: texts.map(() => uuidv7()),
    events: texts,
    bytes: 0,
  };
  return normalizeBatch(batch, { mapping: { versionId: 'v', compiled }, validate, policy: 'strict' });
}

interface Prepared {
  format: Format;
  texts: string[];
  bytes: number;
  compiled: ReturnType<typeof compileMapping>;
  parse?: ReturnType<typeof compileParseSteps>;
}

const reference = stage(
  compileMapping(FIREWALL_MAPPING, ocsfCatalog()),
  events.map((e) => JSON.stringify(e)),
);
const prepared: Prepared[] = FORMATS.map((format) => {
  const lines = events.map(format.line);
  const texts = format.parse ? lines.map((l) => JSON.stringify({ message: l })) : lines;
  const compiled = compileMapping(
    format.parse ? prefixed(FIREWALL_MAPPING, format.prefix ?? '', format.parse) : FIREWALL_MAPPING,
    ocsfCatalog(),
  );
  const out = stage(compiled, texts);
  if (out.quarantined.length > 0)
    throw new Error(
      `${format.name}: ${out.quarantined.length} quarantined, first: ${out.quarantined[0]!.error_detail}`,
    );
  // The same OCSF events as the JSON path (unmapped aside: each format leaves its own).
  const strip = (r: { ocsf: Ev }) => JSON.stringify({ ...r.ocsf, unmapped: undefined });
  const differs = out.records.findIndex((r, i) => strip(r) !== strip(reference.records[i]!));
  if (differs >= 0)
    throw new Error(
      `${format.name}: event ${differs} maps differently:\n${strip(out.records[differs]!)}\n${strip(reference.records[differs]!)}`,
    );
  const problems: { at: string; message: string }[] = [];
  const parse = format.parse ? compileParseSteps(format.parse, problems) : undefined;
  return {
    format,
    texts,
    bytes: lines.reduce((n, l) => n + Buffer.byteLength(l), 0) / lines.length,
    compiled,
    ...(parse ? { parse } : {}),
  };
});

const results = new Map<string, { parseNs: number[]; stage: number[]; csvParseNs: number[] }>();
for (const p of prepared) results.set(p.format.name, { parseNs: [], stage: [], csvParseNs: [] });
const csvLines = prepared
  .find((p) => p.format.name === 'csv')!
  .texts.map((t) => (JSON.parse(t) as { message: string }).message);

for (let r = 0; r < runs; r++) {
  for (const p of prepared) {
    const res = results.get(p.format.name)!;
    // Parse alone: the text as queued to the event the rules read (JSON.parse for the JSON path).
    const raws = p.texts.map((t) => JSON.parse(t) as Ev);
    let t0 = process.hrtime.bigint();
    for (let done = 0; done < total; done += batchSize) {
      if (p.parse) for (const raw of raws) p.parse.run(raw);
      else for (const t of p.texts) JSON.parse(t);
    }
    res.parseNs.push(Number(process.hrtime.bigint() - t0) / total);
    t0 = process.hrtime.bigint();
    for (let done = 0; done < total; done += batchSize) stage(p.compiled, p.texts);
    res.stage.push(total / (Number(process.hrtime.bigint() - t0) / 1e9));
    if (p.format.name === 'csv') {
      t0 = process.hrtime.bigint();
      for (let done = 0; done < total; done += batchSize) for (const l of csvLines) csvParse(l, { columns: keys });
      res.csvParseNs.push(Number(process.hrtime.bigint() - t0) / total);
    }
  }
}

const jsonStage = median(results.get(FORMATS[0]!.name)!.stage);
console.log(`Node ${process.version}, ${total} events a run, median of ${runs} runs, batches of ${batchSize}\n`);
console.log('| format | bytes/event | parse step(s) µs/event | stage events/s | stage vs JSON |');
console.log('|---|---|---|---|---|');
for (const p of prepared) {
  const res = results.get(p.format.name)!;
  const s = median(res.stage);
  console.log(
    `| ${p.format.name} | ${Math.round(p.bytes)} | ${(median(res.parseNs) / 1000).toFixed(2)} | ${Math.round(s).toLocaleString('en-US')} | ${(s / jsonStage).toFixed(2)} |`,
  );
  if (res.csvParseNs.length)
    console.log(
      `| csv with csv-parse/sync (columns), parse only | | ${(median(res.csvParseNs) / 1000).toFixed(2)} | | |`,
    );
}
