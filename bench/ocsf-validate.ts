// Throughput of the OCSF validator on a realistic Authentication (3002) event of about 30
// attributes (~1 KB of JSON), in process, one core. Also times JSON.parse + validate +
// JSON.stringify of the same event, the share of normalization that surrounds validation.
// Rates are per second of this process's CPU time (process.cpuUsage), so a busy machine
// slows the run down without skewing the figure much; wall-clock rates are shown too.
//
//   npx tsx bench/ocsf-validate.ts [--events 200000] [--runs 5]
import { parseArgs } from 'node:util';
import { createValidator, ocsfCatalog } from '../src/ocsf/index.js';

const { values } = parseArgs({
  options: { events: { type: 'string', default: '200000' }, runs: { type: 'string', default: '5' } },
});
const total = Number(values.events);
const runs = Number(values.runs);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function event(i: number): Record<string, unknown> {
  return {
    class_uid: 3002,
    class_name: 'Authentication',
    category_uid: 3,
    category_name: 'Identity & Access Management',
    activity_id: 1,
    activity_name: 'Logon',
    type_uid: 300201,
    type_name: 'Authentication: Logon',
    severity_id: 1,
    severity: 'Informational',
    status_id: i % 7 === 0 ? 2 : 1,
    status: i % 7 === 0 ? 'Failure' : 'Success',
    time: 1_700_000_000_000 + i,
    message: `User login to Okta (${i})`,
    is_mfa: true,
    auth_protocol_id: 5,
    auth_protocol: 'SAML',
    metadata: {
      version: '1.8.0',
      uid: `evt-${i}`,
      log_name: 'System Log',
      original_time: '2023-11-14T22:13:20.000Z',
      product: { name: 'Okta', vendor_name: 'Okta' },
    },
    user: {
      name: `user${i % 500}@example.com`,
      uid: `00u${i % 500}`,
      email_addr: `user${i % 500}@example.com`,
      type_id: 1,
      type: 'User',
    },
    src_endpoint: {
      ip: `203.0.${i % 256}.${(i >> 8) % 256}`,
      port: 1024 + (i % 60000),
      location: { country: 'DE', city: 'Berlin' },
    },
    dst_endpoint: { hostname: 'example.okta.com' },
    service: { name: 'Okta', uid: 'okta' },
    session: { uid: `s-${i}`, is_remote: false },
    observables: [{ name: 'src_endpoint.ip', type_id: 2, type: 'IP Address', value: `203.0.${i % 256}.1` }],
    unmapped: { debugContext: { debugData: { requestUri: '/api/v1/authn', threatSuspected: 'false' } } },
  };
}

// Distinct events, parsed from JSON as the pipeline receives them (so V8 cannot share shapes
// created by one literal).
const texts = Array.from({ length: 1000 }, (_, i) => JSON.stringify(event(i)));
const parsed = texts.map((t) => JSON.parse(t) as Record<string, unknown>);
const validator = createValidator(ocsfCatalog());
const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / texts.length;
const issues = validator.validate(parsed[0]!);
if (issues.length) throw new Error(`benchmark event is not valid: ${JSON.stringify(issues)}`);

function measure(fn: (i: number) => void): { cpu: number; wall: number } {
  for (let i = 0; i < 20_000; i++) fn(i); // warm-up: let the JIT settle
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let r = 0; r < runs; r++) {
    const start = process.hrtime.bigint();
    const used = process.cpuUsage();
    for (let i = 0; i < total; i++) fn(i);
    const { user, system } = process.cpuUsage(used);
    cpu.push(total / ((user + system) / 1e6));
    wall.push(total / (Number(process.hrtime.bigint() - start) / 1e9));
  }
  return { cpu: median(cpu), wall: median(wall) };
}

let sink = 0;
const validateOnly = measure((i) => {
  sink += validator.validate(parsed[i % parsed.length]!).length;
});
const parseOnly = measure((i) => {
  sink += JSON.stringify(JSON.parse(texts[i % texts.length]!)).length;
});
const full = measure((i) => {
  const e = JSON.parse(texts[i % texts.length]!) as Record<string, unknown>;
  sink += validator.validate(e).length + JSON.stringify(e).length;
});

const fmt = (r: { cpu: number; wall: number }) =>
  `${Math.round(r.cpu).toLocaleString('en-US').padStart(9)} events/s of CPU  (${Math.round(r.wall).toLocaleString('en-US')} wall)`;
console.log(
  `event: Authentication 3002, ${Object.keys(parsed[0]!).length} top-level attributes, ~${Math.round(bytes)} bytes of JSON; ${runs} runs of ${total} events, median`,
);
console.log(`validate only:                    ${fmt(validateOnly)}`);
console.log(`JSON.parse + JSON.stringify:      ${fmt(parseOnly)}`);
console.log(`parse + validate + stringify:     ${fmt(full)}`);
if (sink < 0) console.log(sink);
