// Evaluation cost of compiled conditions, per event, in process: the same conditions as a
// mapping `when` (old {path, eq} form and the one {field, op, value} form, over a raw
// vendor event) and as a route condition (over a normalized record). Figures are ns per
// evaluation, median of the runs.
//
//   npx tsx bench/conditions.ts [--events 1000000] [--runs 5]
import { parseArgs } from 'node:util';
import type { NormalizedRecord } from '../src/pipeline/envelope.js';
import { compileMappingCondition } from '../src/pipeline/normalize/conditions.js';
import { compileRecordCondition } from '../src/pipeline/route/conditions.js';

const { values } = parseArgs({
  options: { events: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '5' } },
});
const total = Number(values.events);
const runs = Number(values.runs);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const events = Array.from({ length: 1000 }, (_, i) => ({
  class_uid: i % 3 === 0 ? 3002 : 4001,
  severity_id: i % 6,
  actor: { user: { name: `user${i % 50}@example.com` } },
  src_endpoint: { ip: `10.${i % 4}.2.${i % 250}` },
  observables: [
    { name: 'ip', value: `203.0.113.${i % 200}` },
    { name: 'user', value: `u${i % 7}` },
  ],
  eventType: i % 2 ? 'user.session.start' : 'policy.evaluate_sign_on',
}));
const records: NormalizedRecord[] = events.map((ocsf, i) => ({
  id: `id${i}`,
  organization_id: 1,
  integration_id: 2,
  stream: 'audit',
  received_at: '2024-01-01T00:00:00Z',
  mapping_version_id: 'mv',
  valid: true,
  ocsf,
}));

const one = {
  all: [
    { field: 'class_uid', op: 'in', value: [3002, 3003] },
    { field: 'severity_id', op: 'gte', value: 3 },
    { not: { field: 'actor.user.name', op: 'regex', value: '^svc-' } },
    {
      any: [
        { field: 'observables[*].value', op: 'prefix', value: '203.0.113.1' },
        { field: 'eventType', op: 'ne', value: 'x' },
      ],
    },
  ],
};
const old = {
  all: [
    { path: 'class_uid', in: [3002, 3003] },
    { path: 'severity_id', gte: 3 },
    { not: { path: 'actor.user.name', matches: '^svc-' } },
    {
      any: [
        { path: 'observables[*].value', prefix: '203.0.113.1' },
        { path: 'eventType', ne: 'x' },
      ],
    },
  ],
};

function time(name: string, pred: (x: never) => boolean, inputs: unknown[]): void {
  const rates: number[] = [];
  let hits = 0;
  for (let r = 0; r < runs; r++) {
    const started = process.cpuUsage();
    for (let i = 0; i < total; i++) if (pred(inputs[i % inputs.length] as never)) hits++;
    const used = process.cpuUsage(started);
    rates.push(((used.user + used.system) * 1000) / total);
  }
  console.log(`${name.padEnd(40)} ${median(rates).toFixed(1)} ns/eval (${hits / runs} hits a run)`);
}

const problems: never[] = [];
time('mapping when, old form', compileMappingCondition(old, { problems }, '/when')!, events);
try {
  time('mapping when, one form', compileMappingCondition(one, { problems }, '/when')!, events);
} catch {
  console.log('mapping when, one form: not read by this version');
}
time('route condition', compileRecordCondition(one, [])!, records);
