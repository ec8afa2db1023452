// Listener behaviour that real senders cannot easily provoke: UDP datagrams dropped (and
// counted) while the pipeline is saturated, a TCP connection not read while its messages wait
// for acceptance, and a broken octet count closing the connection.
import { spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/support/rsyslog.js';
import type { ListenerSpec } from './config.js';
import type { Intake } from './intake.js';
import { startListener, TCP_UNACCEPTED_BYTES, type RunningListener } from './listeners.js';

function fakeIntake(overloaded: () => boolean) {
  const added: string[] = [];
  let release: () => void = () => undefined;
  let gate = Promise.resolve();
  const intake = {
    add: async (_t: unknown, texts: readonly string[]) => {
      await gate;
      added.push(...texts);
    },
    overloaded,
    pendingEvents: 0,
    close: async () => undefined,
  } as unknown as Intake;
  return {
    intake,
    added,
    hold() {
      gate = new Promise((r) => (release = r));
    },
    release: () => release(),
  };
}

const spec = (protocol: 'udp' | 'tcp', port: number): ListenerSpec => ({
  key: `${protocol}:${port}`,
  integrationId: 1,
  organizationId: 1,
  protocol,
  port,
  route: () => 'syslog',
  fingerprint: '',
});
let listener: RunningListener | undefined;
afterEach(async () => listener?.close());

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('syslog listeners', () => {
  it('UDP: drops and counts datagrams while the intake is overloaded, takes them otherwise', async () => {
    let full = true;
    const f = fakeIntake(() => full);
    const port = await freePort('udp');
    listener = await startListener(spec('udp', port), '127.0.0.1', f.intake, () => undefined);
    const s = dgram.createSocket('udp4');
    const send = (m: string) => new Promise<void>((r) => s.send(m, port, '127.0.0.1', () => r()));
    await send('<13>dropped');
    await until(() => listener!.counters.dropped === 1);
    full = false;
    await send('<13>taken\n');
    await until(() => listener!.counters.accepted === 1);
    s.close();
    expect(f.added.map((t) => JSON.parse(t) as unknown)).toEqual([{ message: '<13>taken', peer_ip: '127.0.0.1' }]);
    expect(listener.counters).toMatchObject({ received: 2, dropped: 1, accepted: 1 });
  });

  it('UDP: asks for its receive buffer and counts what the kernel dropped while the process could not read', async () => {
    const f = fakeIntake(() => false);
    const port = await freePort('udp');
    // A small buffer (the kernel doubles it and keeps a floor) so that a burst overflows it.
    listener = await startListener(spec('udp', port), '127.0.0.1', f.intake, () => undefined, {
      udpReceiveBufferBytes: 4096,
    });
    expect(listener.receiveBufferBytes).toBeGreaterThanOrEqual(4096);
    expect(listener.receiveBufferBytes).toBeLessThan(1024 * 1024);
    // A sender in another process while this one's event loop is blocked (spawnSync): nothing
    // reads the socket, its buffer fills, the kernel drops the rest.
    const sent = 2_000;
    const child = spawnSync(
      process.execPath,
      [
        '-e',
        `
      const s = require('node:dgram').createSocket('udp4');
      let n = 0;
      const next = () => n < ${sent} ? s.send('<13>burst ' + 'x'.repeat(200) + ' ' + n++, ${port}, '127.0.0.1', next) : s.close();
      next();`,
      ],
      { timeout: 20_000 },
    );
    expect(child.status, String(child.stderr)).toBe(0);
    await until(() => {
      listener!.sample();
      return listener!.counters.received + listener!.counters.dropped_kernel === sent;
    });
    expect(listener.counters.dropped_kernel).toBeGreaterThan(0);
    expect(listener.counters.dropped).toBe(0);
  });

  it('TCP: stops reading a connection while 256 KiB of it wait, and closes one whose octet count is broken', async () => {
    const f = fakeIntake(() => false);
    const port = await freePort('tcp');
    listener = await startListener(spec('tcp', port), '127.0.0.1', f.intake, () => undefined);
    f.hold();
    const c = net.connect(port, '127.0.0.1');
    const big = `<13>${'x'.repeat(TCP_UNACCEPTED_BYTES)}\n`;
    c.write(big);
    await until(() => listener!.counters.received === 1);
    c.write('<13>second\n');
    await new Promise((r) => setTimeout(r, 100));
    expect(listener.counters.received).toBe(1); // not read while the first waits
    f.release();
    await until(() => listener!.counters.accepted === 2);
    const closed = new Promise<void>((r) => c.on('close', () => r()));
    c.write('99999999 x');
    await closed;
    expect(listener.counters.refused).toBe(1);
  });
});
