// Per-event cost of masking (pipeline/mask.ts): maskEvent as the tap, the capture export and
// the DLQ view call it, and a route's mask transform of named fields (on the delivery path).
// Events are OCSF Authentication records of ~1.6 KB with a user, an e-mail, addresses, three
// observables, a message and raw_data that repeat those values; every event has its own
// values, as real traffic does, so nothing is cached across events.
//   npx tsx bench/mask.ts [--events 20000] [--runs 5]
import { maskEvent } from '../src/pipeline/mask.js';
import { compileTransforms } from '../src/pipeline/route/transforms.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const EVENTS = arg('events', 20_000);
const RUNS = arg('runs', 5);

function event(i: number): Record<string, unknown> {
  const user = `user${i}.lastname${i % 97}`;
  const email = `${user}@corp${i % 13}.example`;
  const ip = `10.${i % 250}.${(i >> 8) % 250}.${i % 199}`;
  const host = `WKS-${(i * 7919) % 100000}`;
  return {
    class_uid: 3002,
    category_uid: 3,
    activity_id: 1,
    type_uid: 300201,
    severity_id: 1,
    status_id: 1,
    time: 1_732_000_000_000 + i,
    message: `User ${user} (${email}) signed in from ${ip} on ${host}`,
    metadata: {
      version: '1.8.0',
      product: { name: 'IdP', vendor_name: 'Example' },
      uid: `evt-${i}`,
      logged_time: 1_732_000_000_000 + i,
    },
    user: { name: user, email_addr: email, uid: `00u${i}abc`, type_id: 1, type: 'User' },
    actor: { user: { name: user, uid: `00u${i}abc` }, session: { uid: `sess-${i}` } },
    src_endpoint: { ip, hostname: host, location: { country: 'FR', city: 'Paris' } },
    dst_endpoint: { hostname: 'idp.example', port: 443 },
    http_request: {
      user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 Safari/537.36',
      http_method: 'POST',
    },
    observables: [
      { name: 'user.name', type_id: 4, value: user },
      { name: 'src_endpoint.ip', type_id: 2, value: ip },
      { name: 'src_endpoint.hostname', type_id: 1, value: host },
    ],
    raw_data: JSON.stringify({
      actor: { alternateId: email, displayName: user },
      client: { ipAddress: ip, device: host },
      outcome: { result: 'SUCCESS' },
      eventType: 'user.session.start',
    }),
    unmapped: { debugContext: { requestUri: '/api/v1/authn', threatSuspected: 'false', actor: user } },
  };
}

const events = Array.from({ length: EVENTS }, (_, i) => event(i));
const named = compileTransforms([{ type: 'mask', fields: ['actor.user.name', 'user.name'] }], [])!.apply!;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function time(label: string, fn: (e: Record<string, unknown>) => unknown): void {
  for (let i = 0; i < Math.min(2_000, EVENTS); i++) fn(events[i]!);
  const perEvent: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const started = process.hrtime.bigint();
    for (const e of events) fn(e);
    perEvent.push(Number(process.hrtime.bigint() - started) / 1e3 / EVENTS);
  }
  console.log(`${label.padEnd(44)} ${median(perEvent).toFixed(2)} µs/event (median of ${RUNS} x ${EVENTS})`);
}

console.log(`event: ${Buffer.byteLength(JSON.stringify(events[0]))} bytes of JSON`);
time('maskEvent (tap, capture export, DLQ view)', maskEvent);
time('route transform mask, 2 named fields', named);
