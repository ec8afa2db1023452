import { describe, expect, it } from 'vitest';
import { manualClock } from '../../core/clock.js';
import type { IngestBatch } from '../../pipeline/envelope.js';
import { listenerSpecs, portRanges } from './config.js';
import { createIntake, IntakeClosed } from './intake.js';

const target = { integrationId: 1, organizationId: 2, platform: 'syslog', stream: 'syslog' };
const limits = { batchMaxEvents: 3, batchMaxBytes: 1 << 20, lingerMs: 5, maxPendingEvents: 4, maxPendingBatches: 10 };

function intake(accept: (b: IngestBatch) => Promise<void>, depth = async () => 0) {
  return createIntake({
    accept,
    clock: manualClock(new Date('2026-03-05T00:00:00Z')),
    limits,
    queueDepth: depth,
    onError: () => undefined,
  });
}

describe('syslog intake', () => {
  it('gathers messages per stream into batches: full ones at once, the rest after the linger', async () => {
    const accepted: IngestBatch[] = [];
    const i = intake(async (b) => void accepted.push(b));
    const full = i.add(target, ['a', 'b', 'c'], 3);
    const other = i.add({ ...target, stream: 'fw' }, ['d'], 1);
    await Promise.all([full, other]);
    expect(accepted.map((b) => [b.stream, b.events, b.ids.length, b.organization_id, b.platform])).toEqual([
      ['syslog', ['a', 'b', 'c'], 3, 2, 'syslog'],
      ['fw', ['d'], 1, 2, 'syslog'],
    ]);
    expect(i.pendingEvents).toBe(0);
  });

  it('retries a failed accept while its senders wait, and is overloaded meanwhile', async () => {
    let calls = 0;
    const i = intake(async () => {
      if (++calls < 3) throw new Error('database down');
    });
    const p = i.add(target, ['a', 'b', 'c', 'd'], 4);
    expect(i.overloaded(target.integrationId)).toBe(true); // 4 held: a UDP datagram now would be dropped
    await p;
    expect(calls).toBe(3);
    expect(i.overloaded(target.integrationId)).toBe(false);
  });

  it('offers nothing while the normalize queue is over its limit', async () => {
    let depth = 11;
    const accepted: IngestBatch[] = [];
    const i = intake(
      async (b) => void accepted.push(b),
      async () => depth,
    );
    const p = i.add(target, ['a'], 1);
    await new Promise((r) => setTimeout(r, 150));
    expect(accepted).toEqual([]);
    expect(i.overloaded(target.integrationId)).toBe(true);
    depth = 0;
    await p;
    expect(accepted.length).toBe(1);
  });

  it("holds an integration's batches while the admission refuses them (TCP and RELP wait), drops for UDP, and lets them through once it admits", async () => {
    const accepted: IngestBatch[] = [];
    let refused: (Error & { code: string }) | undefined = Object.assign(
      new Error('destination "s3" is over its backlog budget'),
      { code: 'delivery.backlog_full' },
    );
    const checked: number[] = [];
    const i = createIntake({
      accept: async (b) => void accepted.push(b),
      clock: manualClock(new Date('2026-03-05T00:00:00Z')),
      limits,
      queueDepth: async () => 0,
      admission: {
        check: async (id) => (checked.push(id), refused),
        checkNow: () => refused,
      },
      onError: () => undefined,
    });
    const p = i.add(target, ['a', 'b', 'c'], 3);
    await new Promise((r) => setTimeout(r, 300));
    expect(accepted).toEqual([]);
    expect(checked.every((id) => id === target.integrationId) && checked.length >= 2).toBe(true);
    expect(i.overloaded(target.integrationId)).toBe(true);
    refused = undefined;
    await p;
    expect(accepted.map((b) => b.events)).toEqual([['a', 'b', 'c']]);
    expect(i.overloaded(target.integrationId)).toBe(false);
  });

  it('accepts what it holds when it closes, then refuses; gives up on a failing accept after the grace', async () => {
    const accepted: IngestBatch[] = [];
    const i = intake(async (b) => void accepted.push(b));
    const p = i.add(target, ['a'], 1);
    await i.close(1000);
    await p;
    expect(accepted.length).toBe(1);
    await expect(i.add(target, ['b'], 1)).rejects.toBeInstanceOf(IntakeClosed);
    const failing = intake(async () => {
      throw new Error('down');
    });
    const lost = failing.add(target, ['x'], 1);
    await failing.close(50);
    await expect(lost).rejects.toBeInstanceOf(IntakeClosed);
  });
});

describe('syslog listeners from integrations', () => {
  const allowed = portRanges('514, 5140-5199');
  it('reads WEIR_SYSLOG_PORTS', () => {
    expect([514, 5140, 5199, 5200, 80].map(allowed)).toEqual([true, true, true, false, false]);
    expect(() => portRanges('5140-5100')).toThrow();
  });

  it('gives a port to the lowest integration id, and names every problem', () => {
    const { specs, problems } = listenerSpecs(
      [
        {
          id: 7,
          organization_id: 1,
          config: {
            listeners: [
              { protocol: 'tcp', port: 5140 },
              { protocol: 'udp', port: 5140 },
            ],
          },
        },
        {
          id: 3,
          organization_id: 1,
          config: {
            listeners: [
              { protocol: 'relp', port: 5140 },
              { protocol: 'tcp', port: 80 },
              { protocol: 'tls', port: 5141 },
            ],
          },
        },
      ],
      allowed,
    );
    expect(specs.map((s) => [s.integrationId, s.key])).toEqual([
      [3, 'tcp:5140'],
      [7, 'udp:5140'],
    ]);
    expect(problems).toEqual([
      { integrationId: 3, protocol: 'tcp', port: 80, error: 'port 80 is not allowed by WEIR_SYSLOG_PORTS' },
      { integrationId: 3, protocol: 'tls', port: 5141, error: 'a tls listener needs tls.certificate and tls.key' },
      {
        integrationId: 7,
        protocol: 'tcp',
        port: 5140,
        error: 'port 5140/tcp is already the relp listener of integration 3',
      },
    ]);
  });

  it("routes by header host (else the sender's address) and app-name, first match wins", () => {
    const [spec] = listenerSpecs(
      [
        {
          id: 1,
          organization_id: 1,
          config: {
            listeners: [{ protocol: 'udp', port: 514 }],
            stream: 'other',
            routes: [
              { stream: 'fw', host: 'FW-*', app_name: 'kernel' },
              { stream: 'dns', app_name: 'named' },
              { stream: 'lab', host: '10.9.*' },
            ],
          },
        },
      ],
      allowed,
    ).specs;
    const route = spec!.route;
    expect(route('<13>Mar  5 14:22:31 fw-edge-1 kernel: drop', '10.0.0.1')).toBe('fw');
    expect(route('<13>1 2024-03-05T14:22:31Z ns1 named 9 - - query', '10.0.0.1')).toBe('dns');
    expect(route('<13>no header here', '10.9.0.4')).toBe('lab');
    expect(route('<13>Mar  5 14:22:31 fw-edge-1 sshd: login', '10.0.0.1')).toBe('other');
  });
});
