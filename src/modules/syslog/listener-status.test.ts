// A syslog integration through the API: its ports are checked against WEIR_SYSLOG_PORTS and
// the other integrations when it is created or changed (422 naming the allowed ranges and the
// field), its listeners' state and counters show in the ingest status after real messages
// (Cisco ASA lines of test/corpus sent over UDP and TCP sockets), and its connection test
// checks the listeners, not an ingestion token.
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, injectAs, type Principal } from '../../../test/support/identity.js';
import { freePort } from '../../../test/support/rsyslog.js';

type Json = Record<string, unknown>;
interface Listener {
  protocol: string;
  port: number;
  state: string;
  error: string | null;
  received: number;
  accepted: number;
  refused: number;
  last_message_at: string | null;
}
interface Issue {
  location: string;
  message: string;
}

const ALLOWED = '20000-65535';
const lines = readFileSync(
  new URL('../../../test/corpus/cisco_asa/syslog/elastic-asa-program-tag.txt', import.meta.url),
  'utf8',
)
  .split('\n')
  .filter((l) => l.trim() !== '')
  .slice(0, 3)
  .map((l) => `<166>${l}`);

let t: TestApp;
let org: number;
let otherOrg: number;
let admin: Principal;
let otherAdmin: Principal;
let stop: (() => Promise<void>) | undefined;
const ports = { udp: 0, tcp: 0 };
let integrationId: number;

async function freeAbove(kind: 'tcp' | 'udp'): Promise<number> {
  for (;;) {
    const p = await freePort(kind);
    if (p >= 20000) return p;
  }
}

function create(who: Principal, name: string, listeners: { protocol: string; port: number }[], extra: Json = {}) {
  return injectAs(t, who, 'POST', '/api/integrations/', { name, platform: 'syslog', config: { listeners }, ...extra });
}

async function status(): Promise<Listener[]> {
  const res = await injectAs(t, admin, 'GET', `/api/ingest/integrations/${integrationId}`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json<{ syslog?: { listeners: Listener[] } }>().syslog?.listeners ?? []).sort((a, b) =>
    a.protocol.localeCompare(b.protocol),
  );
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  t = await createTestApp({
    env: { WEIR_SYSLOG_PORTS: ALLOWED, WEIR_SYSLOG_LINGER_MS: '5', WEIR_SYSLOG_REFRESH_MS: '100' },
  });
  org = await createOrganization(t, 'Syslog Ports Org');
  otherOrg = await createOrganization(t, 'Other Syslog Org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  otherAdmin = await createPrincipal(t, { role: 'admin', organizationId: otherOrg });
  ports.udp = await freeAbove('udp');
  ports.tcp = await freeAbove('tcp');
}, 60_000);

afterAll(async () => {
  await stop?.();
  await t?.close();
});

describe('syslog integration ports', () => {
  it('refuses a port outside WEIR_SYSLOG_PORTS with 422 naming the allowed range and the field', async () => {
    const res = await create(admin, 'readme example', [{ protocol: 'udp', port: 5514 }]);
    expect(res.statusCode, res.body).toBe(422);
    const body = res.json<{ detail: string; error: { code: string; details: { errors: Issue[] } } }>();
    expect(typeof body.detail).toBe('string');
    expect(body.detail).toContain('WEIR_SYSLOG_PORTS');
    expect(body.detail).toContain(ALLOWED);
    expect(body.detail).toContain('5514');
    expect(body.error.code).toBe('integration.invalid_config');
    expect(body.error.details.errors[0]!.location).toBe('body/config/listeners/0/port');
    const list = await injectAs(t, admin, 'GET', '/api/integrations/?platform=syslog');
    expect(list.json<{ total: number }>().total).toBe(0);
  });

  it('creates one in range, then refuses moving it out of range on update', async () => {
    const res = await create(admin, 'edge firewalls', [
      { protocol: 'udp', port: ports.udp },
      { protocol: 'tcp', port: ports.tcp },
    ]);
    expect(res.statusCode, res.body).toBe(201);
    integrationId = res.json<{ id: number }>().id;
    const moved = await injectAs(t, admin, 'PUT', `/api/integrations/${integrationId}`, {
      config: {
        listeners: [
          { protocol: 'udp', port: ports.udp },
          { protocol: 'tcp', port: 601 },
        ],
      },
    });
    expect(moved.statusCode, moved.body).toBe(422);
    const body = moved.json<{ detail: string; error: { details: { errors: Issue[] } } }>();
    expect(body.detail).toContain(ALLOWED);
    expect(body.error.details.errors[0]!.location).toBe('body/config/listeners/1/port');
  });

  it('refuses a port another active integration listens on, the same port space only', async () => {
    const same = await create(admin, 'second', [{ protocol: 'udp', port: ports.udp }]);
    expect(same.statusCode, same.body).toBe(422);
    expect(same.json<{ detail: string }>().detail).toContain(`integration "edge firewalls" (${integrationId})`);
    // TCP, TLS and RELP share a port space: a RELP listener on the TCP port is taken too.
    const relpOnTcp = await create(otherAdmin, 'elsewhere', [{ protocol: 'relp', port: ports.tcp }]);
    expect(relpOnTcp.statusCode, relpOnTcp.body).toBe(422);
    // Another organization's integration is not named.
    expect(relpOnTcp.json<{ detail: string }>().detail).toContain('another organization');
    expect(relpOnTcp.json<{ detail: string }>().detail).not.toContain('edge firewalls');
    // Twice the same port in one integration.
    const twice = await create(admin, 'twice', [
      { protocol: 'tcp', port: 20001 },
      { protocol: 'relp', port: 20001 },
    ]);
    expect(twice.statusCode).toBe(422);
    expect(twice.json<{ error: { details: { errors: Issue[] } } }>().error.details.errors[0]!.location).toBe(
      'body/config/listeners/1/port',
    );
  });
});

describe('syslog listener state, counters and connection test', () => {
  it('tests the listeners, not a token: missing before any receiver runs', async () => {
    const res = await injectAs(t, admin, 'POST', `/api/integrations/${integrationId}/test-connection`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ ok: boolean; kind: string; detail: string; listeners: { state: string }[] }>();
    expect(body.kind).toBe('listener');
    expect(body.ok).toBe(false);
    expect(body.detail).not.toMatch(/token/i);
    expect(body.listeners.map((l) => l.state)).toEqual(['missing', 'missing']);
  });

  it('shows each listener listening, then its counters and last message time after real messages', async () => {
    const receiver = t.container.syslog.receiver();
    stop = receiver.start().stop;
    const up = await until(status, (ls) => ls.length === 2 && ls.every((l) => l.state === 'listening'));
    expect(up.map((l) => [l.protocol, l.port, l.state, l.received, l.last_message_at])).toEqual([
      ['tcp', ports.tcp, 'listening', 0, null],
      ['udp', ports.udp, 'listening', 0, null],
    ]);

    const udp = dgram.createSocket('udp4');
    for (const line of lines)
      await new Promise<void>((ok, ko) => udp.send(line, ports.udp, '127.0.0.1', (e) => (e ? ko(e) : ok())));
    udp.close();
    const tcp = net.connect(ports.tcp, '127.0.0.1');
    await new Promise<void>((ok) => tcp.once('connect', ok));
    await new Promise<void>((ok) => tcp.end(`${lines.join('\n')}\n`, ok));

    const counted = await until(status, (ls) => ls.every((l) => l.accepted === lines.length));
    for (const l of counted) {
      expect(l.received).toBe(lines.length);
      expect(l.accepted).toBe(lines.length);
      expect(l.refused).toBe(0);
      expect(Date.parse(l.last_message_at!)).toBeGreaterThan(Date.now() - 60_000);
    }
  });

  it('passes the connection test once listening: TCP by a real connection, per listener', async () => {
    const res = await injectAs(t, admin, 'POST', `/api/integrations/${integrationId}/test-connection`);
    const body = res.json<{
      ok: boolean;
      detail: string;
      listeners: { protocol: string; ok: boolean; detail: string }[];
    }>();
    expect(body.ok, body.detail).toBe(true);
    const byProtocol = Object.fromEntries(body.listeners.map((l) => [l.protocol, l]));
    expect(byProtocol.tcp!.detail).toMatch(/accepts connections/);
    expect(byProtocol.udp!.detail).toMatch(/received 3, accepted 3/);
    const health = await injectAs(t, admin, 'GET', `/api/integrations/${integrationId}/health`);
    expect(health.json<{ check_kind: string; last_check: { ok: boolean } }>()).toMatchObject({
      check_kind: 'listener',
      last_check: { ok: true },
    });
  });

  it('reports a listener whose port another program holds as an error', async () => {
    const blocker = net.createServer();
    const held = await freeAbove('tcp');
    await new Promise<void>((ok) => blocker.listen(held, '127.0.0.1', ok));
    try {
      const res = await create(admin, 'blocked', [{ protocol: 'tcp', port: held }]);
      expect(res.statusCode, res.body).toBe(201);
      const id = res.json<{ id: number }>().id;
      const test = () =>
        injectAs(t, admin, 'POST', `/api/integrations/${id}/test-connection`).then((r) =>
          r.json<{ ok: boolean; detail: string; listeners: { state: string }[] }>(),
        );
      const body = await until(test, (b) => b.listeners[0]!.state === 'error');
      expect(body.ok).toBe(false);
      expect(body.detail).toContain(`port ${held} is in use by another program`);
    } finally {
      await new Promise((ok) => blocker.close(ok));
    }
  });
});
