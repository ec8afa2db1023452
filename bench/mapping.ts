// Throughput of a compiled mapping (src/pipeline/normalize/compile.ts) on ~1 KB raw events
// of a made-up identity provider, with a realistic document: 2 rules, 19 assignments
// (casts, lookups with captions, a template, an each over a list), unmapped and
// observables on. Also times the whole normalization of one event: JSON.parse + map +
// OCSF validation + JSON.stringify. Rates are per second of this process's CPU time.
//
//   npx tsx bench/mapping.ts [--events 200000] [--runs 5]
import { parseArgs } from 'node:util';
import { createValidator, ocsfCatalog } from '../src/ocsf/index.js';
import { compileMapping } from '../src/pipeline/normalize/compile.js';
import type { MappingDocument } from '../src/pipeline/normalize/types.js';

const { values } = parseArgs({
  options: { events: { type: 'string', default: '200000' }, runs: { type: 'string', default: '5' } },
});
const total = Number(values.events);
const runs = Number(values.runs);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const doc: MappingDocument = {
  product: { name: 'Gatekeeper', vendor_name: 'Example Corp' },
  defaults: [
    { target: 'metadata.uid', from: 'uuid' },
    { target: 'metadata.event_code', from: 'eventType' },
    { target: 'time', from: 'published', cast: 'timestamp' },
    { target: 'severity_id', from: 'severity', lookup: { map: { DEBUG: 1, INFO: 1, WARN: 3, ERROR: 4 }, default: 0 } },
    { target: 'message', from: 'displayMessage' },
    { target: 'src_endpoint.ip', from: 'client.ipAddress', cast: 'ip' },
    { target: 'src_endpoint.location.country', from: 'client.geographicalContext.country' },
    { target: 'src_endpoint.location.city', from: 'client.geographicalContext.city' },
    { target: 'actor.user.uid', from: 'actor.id' },
    { target: 'actor.user.name', from: 'actor.alternateId' },
    { target: 'actor.user.full_name', from: 'actor.displayName' },
  ],
  rules: [
    {
      name: 'sessions',
      when: { path: 'eventType', prefix: 'user.session.' },
      class_uid: 3002,
      activity_id: { from: 'eventType', lookup: { map: { 'user.session.start': 1, 'user.session.end': 2 } } },
      set: [
        { target: 'user.uid', from: 'actor.id' },
        { target: 'user.name', from: 'actor.alternateId' },
        { target: 'user.email_addr', from: 'actor.alternateId', cast: 'email', on_error: 'skip' },
        { target: 'status_id', from: 'outcome.result', lookup: { map: { SUCCESS: 1, FAILURE: 2 }, default: 99 } },
        { target: 'status_detail', from: 'outcome.reason' },
        {
          target: 'is_mfa',
          from: 'authenticationContext.authenticationStep',
          lookup: { map: { '0': false }, default: true },
        },
        { target: 'service.name', template: '{target[0].displayName|Gatekeeper}' },
        { target: 'session.uid', from: 'authenticationContext.externalSessionId' },
      ],
    },
    {
      name: 'everything else',
      class_uid: 6003,
      activity_id: 99,
      set: [
        { target: 'api.operation', from: 'eventType' },
        {
          target: 'resources',
          each: 'target',
          set: [
            { target: 'uid', from: 'id' },
            { target: 'type', from: 'type' },
            { target: 'name', from: 'displayName' },
          ],
        },
      ],
    },
  ],
};

function raw(i: number): Record<string, unknown> {
  const failed = i % 7 === 0;
  return {
    uuid: `a1b2c3d4-${String(i).padStart(4, '0')}-11ee-9c5a-0242ac120002`,
    published: new Date(1_704_164_645_000 + i * 1000).toISOString(),
    eventType: i % 10 === 9 ? 'policy.lifecycle.update' : i % 2 ? 'user.session.end' : 'user.session.start',
    version: '0',
    severity: failed ? 'WARN' : 'INFO',
    displayMessage: 'User login to Gatekeeper',
    actor: {
      id: `00u${i % 500}abcdEFGH`,
      type: 'User',
      alternateId: `user${i % 500}@example.com`,
      displayName: `User ${i % 500}`,
      detailEntry: null,
    },
    client: {
      userAgent: {
        rawUserAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 Chrome/120.0',
        os: 'Mac OS X',
        browser: 'CHROME',
      },
      zone: 'null',
      device: 'Computer',
      id: null,
      ipAddress: `203.0.113.${i % 256}`,
      geographicalContext: {
        city: 'Berlin',
        state: 'Land Berlin',
        country: 'Germany',
        postalCode: '10115',
        geolocation: { lat: 52.52, lon: 13.405 },
      },
    },
    outcome: { result: failed ? 'FAILURE' : 'SUCCESS', reason: failed ? 'INVALID_CREDENTIALS' : null },
    transaction: { type: 'WEB', id: `Xk${i}Zq`, detail: {} },
    debugContext: {
      debugData: { requestId: `req-${i}`, requestUri: '/idp/idx/authenticate', url: '/idp/idx/authenticate?' },
    },
    authenticationContext: { authenticationStep: 0, externalSessionId: `102${i}abc` },
    securityContext: {
      asNumber: 64496,
      asOrg: 'example isp',
      isp: 'example isp',
      domain: 'example.net',
      isProxy: false,
    },
    target: [
      { id: `0oa${i % 20}`, type: 'AppInstance', alternateId: 'Payroll', displayName: 'Payroll', detailEntry: null },
    ],
  };
}

const texts = Array.from({ length: 1000 }, (_, i) => JSON.stringify(raw(i)));
const parsed = texts.map((t) => JSON.parse(t) as Record<string, unknown>);
const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / texts.length;
const catalog = ocsfCatalog();
const mapping = compileMapping(doc, catalog);
const validator = createValidator(catalog);
const ctx = { receivedAtMs: 1_704_164_700_000 };
for (const e of parsed.slice(0, 20)) {
  const r = mapping.map(e, ctx);
  if (!r.ok) throw new Error(`benchmark event does not map: ${r.detail}`);
  const issues = validator.validate(r.event);
  if (issues.length) throw new Error(`benchmark output is not valid: ${JSON.stringify(issues)}`);
}

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
const mapOnly = measure((i) => {
  const r = mapping.map(parsed[i % parsed.length]!, ctx);
  sink += r.ok ? 1 : 0;
});
const noValidate = measure((i) => {
  const r = mapping.map(JSON.parse(texts[i % texts.length]!) as Record<string, unknown>, ctx);
  if (r.ok) sink += JSON.stringify(r.event).length;
});
const full = measure((i) => {
  const r = mapping.map(JSON.parse(texts[i % texts.length]!) as Record<string, unknown>, ctx);
  if (r.ok) sink += validator.validate(r.event).length + JSON.stringify(r.event).length;
});

const out = mapping.map(parsed[0]!, ctx);
const outBytes = out.ok ? Buffer.byteLength(JSON.stringify(out.event)) : 0;
const fmt = (r: { cpu: number; wall: number }) =>
  `${Math.round(r.cpu).toLocaleString('en-US').padStart(9)} events/s of CPU  (${Math.round(r.wall).toLocaleString('en-US')} wall)`;
console.log(
  `raw event ~${Math.round(bytes)} bytes, output ~${outBytes} bytes; ${runs} runs of ${total} events, median`,
);
console.log(`map only:                               ${fmt(mapOnly)}`);
console.log(`parse + map + stringify:                ${fmt(noValidate)}`);
console.log(`parse + map + validate + stringify:     ${fmt(full)}`);
if (sink < 0) console.log(sink);
