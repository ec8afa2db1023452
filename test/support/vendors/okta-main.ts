// The Okta simulator in a process of its own, for tests that kill collectors with SIGKILL
// and must not lose the vendor with them.
//   node --import tsx test/support/vendors/okta-main.ts [events] [--latency-ms N] [--api-token T]
// It adds `events` system_log events (default window), then prints one JSON line on stdout:
//   {"url": "...", "config": {...}, "ids": <count>}
// and serves until SIGTERM/SIGINT. Other processes read the ids with GET <url>/__sim/ids and
// add events with POST <url>/__sim/events?stream=system_log&n=N (sim-kit.ts).
import { startOktaSimulator } from './okta.js';

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
const events = Number(positional[0] ?? 0);
const latency = option('--latency-ms');
if (!Number.isInteger(events) || events < 0) {
  console.error('usage: okta-main.ts [events] [--latency-ms N] [--api-token T]');
  process.exit(2);
}

const sim = await startOktaSimulator({
  apiToken: option('--api-token'),
  latencyMs: latency ? Number(latency) : undefined,
});
const ids = events > 0 ? sim.addEvents('system_log', events) : [];
console.log(JSON.stringify({ url: sim.url, config: sim.config(), ids: ids.length }));

const stop = () => {
  void sim.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
