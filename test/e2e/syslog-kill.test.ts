// End-to-end: a real rsyslogd relays syslog to `weir all` over UDP, TCP, TLS and RELP; every
// message reaches a webhook destination through the stream's mapping. Then weir is killed
// with SIGKILL while rsyslog sends over RELP (over TCP): RELP answers a message only once
// it is durably queued, so rsyslog keeps and resends every message it was not answered for,
// and after a restart every message rsyslog was given is delivered: nothing acknowledged is
// lost. Then it is killed again while rsyslog streams over TLS, which has no acknowledgement
// (docs/decisions/0040-syslog-receiver.md): what is lost is at most what was in flight at the
// kill (given to rsyslog before weir was dead, not yet delivered then); rsyslog reconnects by
// itself, everything given to it after the kill is delivered, and the ledger balances.
// (RELP over TLS is not offered: Weir's `relp` listener is plain TCP.)
// Embedded: `weir all` on PGlite is killed and started again. Distributed (PostgreSQL +
// Redis): the `weir syslog` role is killed and another one takes its listeners.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDestination, createRoute, ledgerTotals, seqOf, waitFor } from '../support/delivery-api.js';
import { http, setUpIngestion } from '../support/ingest.js';
import { freshPostgresDatabase } from '../support/db.js';
import { createFleet, weirStarted, type WeirProcess } from '../support/process.js';
import { deletePrefix, uniquePrefix } from '../support/redis.js';
import { freePort } from '../support/rsyslog.js';
import { startRsyslogSender, type RsyslogSender } from '../support/rsyslog-sender.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

const distributed = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const RELP_MESSAGES = 8000;
const EACH = 50;
/** The TLS stream: TLS_BURST messages every TLS_TICK_MS (250 a second) while weir is killed and restarted. */
const TLS_BURST = 5;
const TLS_TICK_MS = 20;

const fleet = createFleet({ WEIR_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8', WEIR_DISPATCH_POLL_MS: '100' });
afterAll(() => fleet.cleanup());

const mapping = {
  product: { name: 'rsyslog relay', vendor_name: 'Weir tests' },
  parse: [{ parser: 'syslog' }, { parser: 'kv', on_error: 'skip' }],
  rules: [
    {
      name: 'relayed',
      class_uid: 4001,
      activity_id: 6,
      set: [
        { target: 'src_endpoint.ip', from: 'src', cast: 'ip' },
        { target: 'dst_endpoint.ip', from: 'peer_ip', cast: 'ip' },
        { target: 'dst_endpoint.hostname', from: 'hostname' },
      ],
    },
  ],
  tests: [
    {
      name: 'a relayed line',
      input: {
        message: '<13>1 2024-03-05T14:22:31Z edge app - - - weir_test_seq=x src=10.0.0.7',
        peer_ip: '127.0.0.1',
      },
      expect: { 'src_endpoint.ip': '10.0.0.7', 'unmapped.weir_test_seq': 'x' },
    },
  ],
};

const line = (seq: string) => `<13>Mar  5 14:22:31 edge app: weir_test_seq=${seq} src=10.0.0.7`;

/** The deployment under test: where its API is, and how to kill and restart the process that holds the listeners. */
interface Deployment {
  url: string;
  kill(): Promise<void>;
  restart(): Promise<string>;
  stop(): Promise<void>;
}

async function scenario(
  ports: Record<'udp' | 'tcp' | 'tls' | 'relp', number>,
  sender: RsyslogSender,
  deployment: Deployment,
): Promise<void> {
  const setup = await setUpIngestion(deployment.url, []);
  const headers = { cookie: setup.cookie };
  const created = await http(
    deployment.url,
    'POST',
    '/api/integrations/',
    {
      name: 'relay',
      platform: 'syslog',
      organization_id: setup.organizationId,
      config: {
        listeners: (['udp', 'tcp', 'tls', 'relp'] as const).map((protocol) => ({ protocol, port: ports[protocol] })),
        tls: { certificate: sender.serverCertPem, key: sender.serverKeyPem },
      },
    },
    headers,
  );
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  const integrationId = Number(created.json.id);
  const receiver = await startWebhookReceiver({ keyOf: (event) => seqOf(event) });
  fleet.onCleanup(() => receiver.close());
  const destination = await createDestination(deployment.url, headers, {
    name: 'receiver',
    type: 'http',
    organization_id: setup.organizationId,
    config: { url: receiver.url },
    delivery: { max_wait_ms: 50, timeout_ms: 2000 },
  });
  await createRoute(deployment.url, headers, {
    name: 'everything',
    organization_id: setup.organizationId,
    destination_ids: [destination],
  });
  const listening = async (url: string) => {
    const s = await http(url, 'GET', `/api/ingest/integrations/${integrationId}`, undefined, headers);
    return ((s.json.syslog as { listeners: { protocol: string; state: string }[] } | undefined)?.listeners ?? [])
      .filter((l) => l.state === 'listening')
      .map((l) => l.protocol)
      .sort();
  };

  // A first message makes the stream's definition; its mapping is then published.
  await waitFor(
    'the listeners',
    async () => ((await listening(deployment.url)).length === 4 ? true : undefined),
    30_000,
    100,
  );
  await sender.send('tcp', [line('probe')]);
  const definition = await waitFor(
    "the stream's definition",
    async () => {
      const d = await http(deployment.url, 'GET', '/api/mappings?platform=syslog&stream=syslog', undefined, headers);
      return (d.json.items as { id: string }[])[0];
    },
    30_000,
    100,
  );
  const published = await http(
    deployment.url,
    'POST',
    `/api/mappings/${definition.id}/versions`,
    { document: mapping },
    headers,
  );
  expect(published.status, JSON.stringify(published.json)).toBe(201);
  await new Promise((r) => setTimeout(r, 600)); // the mapping and the route are live within a refresh

  const seqs = (via: string, n: number) => Array.from({ length: n }, (_, i) => `${via}-${i}`);
  for (const via of ['udp', 'tcp', 'tls', 'relp'] as const) await sender.send(via, seqs(via, EACH).map(line));
  await waitFor(
    'UDP, TCP, TLS and RELP delivered',
    async () =>
      ['udp', 'tcp', 'tls', 'relp'].every((v) => seqs(v, EACH).every((s) => receiver.received.has(s)))
        ? true
        : undefined,
    60_000,
    100,
  );

  // RELP under a kill: the receiving process dies while rsyslog sends, and starts again.
  const relp = seqs('relp-kill', RELP_MESSAGES);
  await sender.send('relp', relp.map(line));
  await waitFor(
    'part of the RELP messages delivered',
    async () => (relp.filter((s) => receiver.received.has(s)).length >= 500 ? true : undefined),
    60_000,
    20,
  );
  await deployment.kill();
  expect(relp.filter((s) => receiver.received.has(s)).length).toBeLessThan(RELP_MESSAGES);

  let url = await deployment.restart();
  await waitFor(
    'every RELP message delivered',
    async () => (relp.every((s) => receiver.received.has(s)) ? true : undefined),
    180_000,
    200,
  );
  expect(await listening(url)).toEqual(['relp', 'tcp', 'tls', 'udp']);

  // TLS under a kill: a steady stream, each message stamped with when it was given to rsyslog
  // (before it is written: rsyslog cannot have forwarded it earlier).
  const stream = await sender.open('tls');
  const given: { seq: string; at: number }[] = [];
  let streaming = true;
  const streamer = (async () => {
    for (let i = 0; streaming;) {
      const burst = Array.from({ length: TLS_BURST }, () => ({ seq: `tls-kill-${i++}`, at: Date.now() }));
      given.push(...burst);
      await stream.write(burst.map((g) => line(g.seq)));
      await new Promise((r) => setTimeout(r, TLS_TICK_MS));
    }
    await stream.end();
  })();
  fleet.onCleanup(async () => {
    streaming = false; // when an assertion ended the test first
    await streamer.catch(() => undefined);
  });
  await waitFor(
    'part of the TLS stream delivered',
    async () => (given.filter((g) => receiver.received.has(g.seq)).length >= 500 ? true : undefined),
    60_000,
    20,
  );
  await deployment.kill();
  // Weir is dead and its sockets closed; rsyslog (omfwd) checks its connection before each
  // send, so what it is given from now on goes to the next connection. What can be in flight:
  // given before now and not delivered yet (read or buffered, not durably accepted).
  const killedAt = Date.now();
  const inFlight = new Set(given.filter((g) => g.at < killedAt && !receiver.received.has(g.seq)).map((g) => g.seq));
  const deliveredAtKill = given.filter((g) => g.at < killedAt).length - inFlight.size;
  url = await deployment.restart();
  await waitFor(
    'the listeners after the restart',
    async () => ((await listening(url)).length === 4 ? true : undefined),
    30_000,
    100,
  );
  const restartedAt = Date.now();
  await new Promise((r) => setTimeout(r, 1000));
  streaming = false;
  await streamer;

  // rsyslog held what it was given while weir was away, reconnected by itself and sent it all.
  const afterKill = given.filter((g) => g.at >= killedAt);
  const afterRestart = afterKill.filter((g) => g.at >= restartedAt);
  expect(afterRestart.length).toBeGreaterThan(0);
  await waitFor(
    'every TLS message given to rsyslog after the kill delivered',
    async () => (afterKill.every((g) => receiver.received.has(g.seq)) ? true : undefined),
    120_000,
    200,
  );
  const totals = await waitFor(
    'the ledger settled',
    async () => {
      const t = await ledgerTotals(url, headers);
      return t.pending === 0 ? t : undefined;
    },
    60_000,
    500,
  );
  expect(totals.unaccounted).toBe(0);
  const lost = given.filter((g) => !receiver.received.has(g.seq)).map((g) => g.seq);
  console.log(
    `TLS under SIGKILL: ${given.length} given to rsyslog, ${deliveredAtKill} delivered before the kill, ${inFlight.size} given and undelivered at the kill (the most in flight), ` +
      `${afterKill.length} given after it (${afterRestart.length} after the restart); ${given.length - lost.length} delivered, ${lost.length} lost` +
      (lost.length ? ` (${lost[0]} .. ${lost.at(-1)})` : ''),
  );
  // Lost: only messages in flight at the kill (written to the old connection, not yet accepted).
  expect(lost.filter((s) => !inFlight.has(s))).toEqual([]);
  expect(lost.length).toBeLessThanOrEqual(inFlight.size);
  expect(await listening(url)).toEqual(['relp', 'tcp', 'tls', 'udp']);
  await deployment.stop();
}

async function rsyslog(ctx: { skip: (reason: string) => void }) {
  const ports = {
    udp: await freePort('udp'),
    tcp: await freePort('tcp'),
    tls: await freePort('tcp'),
    relp: await freePort('tcp'),
  };
  const started = await startRsyslogSender(ports);
  if ('skip' in started) {
    ctx.skip(started.skip);
    return undefined;
  }
  fleet.onCleanup(() => started.stop());
  return { ports, sender: started };
}

const SYSLOG_ENV = {
  WEIR_QUEUE_LEASE_MS: '3000',
  WEIR_SYSLOG_PORTS: '1024-65535',
  WEIR_SYSLOG_REFRESH_MS: '200',
  WEIR_MAPPING_REFRESH_MS: '200',
};

describe('syslog from rsyslog to a destination, and SIGKILL under RELP and TLS', () => {
  it.skipIf(distributed)(
    'embedded: delivers UDP, TCP, TLS and RELP; after weir all is killed, every message rsyslog holds is delivered (RELP), only what was in flight is lost (TLS)',
    async (ctx) => {
      const r = await rsyslog(ctx);
      if (!r) return;
      const env = {
        ...SYSLOG_ENV,
        WEIR_DATA_DIR: fleet.keepDir(mkdtempSync(path.join(tmpdir(), 'weir-syslog-kill-'))),
      };
      let current = await fleet.startApi('all', env);
      await scenario(r.ports, r.sender, {
        url: current.url,
        async kill() {
          current.p.kill('SIGKILL');
          await current.p.exited;
        },
        async restart() {
          current = await fleet.startApi('all', env);
          return current.url;
        },
        async stop() {
          current.p.kill('SIGTERM');
          expect(await current.p.exited).toBe(0);
        },
      });
    },
    300_000,
  );

  it.runIf(distributed)(
    'distributed: after weir syslog is killed, another takes its listeners; every message rsyslog holds is delivered (RELP), only what was in flight is lost (TLS)',
    async (ctx) => {
      const r = await rsyslog(ctx);
      if (!r) return;
      const db = await freshPostgresDatabase();
      const prefix = uniquePrefix();
      try {
        const env = {
          ...SYSLOG_ENV,
          DATABASE_URL: db.url,
          REDIS_URL: process.env.REDIS_URL,
          WEIR_REDIS_PREFIX: prefix,
          WEIR_SECRET_KEY: 'ab'.repeat(32),
        };
        const api = await fleet.startApi('api', env);
        const others = ['worker', 'dispatcher'].map((role) => fleet.start(role, env));
        let syslog: WeirProcess = fleet.start('syslog', env);
        for (const p of [...others, syslog]) await p.waitFor(weirStarted, 90_000);
        await scenario(r.ports, r.sender, {
          url: api.url,
          async kill() {
            syslog.kill('SIGKILL');
            await syslog.exited;
          },
          async restart() {
            syslog = fleet.start('syslog', env);
            await syslog.waitFor(weirStarted, 90_000);
            return api.url;
          },
          async stop() {
            syslog.kill('SIGTERM');
            expect(await syslog.exited).toBe(0);
          },
        });
      } finally {
        await deletePrefix(prefix);
        await db.drop();
      }
    },
    300_000,
  );
});
