// The push flow with fakes: what is accepted (ledger rows and queue jobs, accept.ts), the
// counters and the trace context.
import { Readable } from 'node:stream';
import type { Meter } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../core/clock.js';
import { NORMALIZE_JOB, NORMALIZE_QUEUE, type IngestBatch } from '../../pipeline/envelope.js';
import { createAcceptBatch } from './accept.js';
import { createIngestService, type IngestServiceDeps } from './service.js';
import type { IngestStore } from './store.js';
import type { IngestTokens } from './tokens.js';

interface Added {
  name: string;
  value: number;
  attributes: Record<string, unknown> | undefined;
}

function setup(options: { failFrom?: number; trace?: boolean } = {}) {
  const added: Added[] = [];
  const meter = {
    createCounter: (name: string) => ({
      add: (value: number, attributes?: Record<string, unknown>) => added.push({ name, value, attributes }),
    }),
  } as unknown as Meter;
  const enqueued: { queue: string; name: string; batch: IngestBatch; options: unknown }[] = [];
  const queue = {
    async enqueue<T>(q: string, name: string, payload: T, opts?: unknown) {
      if (options.failFrom !== undefined && enqueued.length >= options.failFrom) throw new Error('down');
      enqueued.push({ queue: q, name, batch: payload as IngestBatch, options: opts });
      return 'id';
    },
    counts: async () => ({ waiting: 0, active: 0, delayed: 0, completed: 0, failed: 0 }),
    backend: 'database' as const,
  } satisfies IngestServiceDeps['queue'] & { enqueue: unknown; backend: string };
  const accepted: unknown[] = [];
  const accept = createAcceptBatch({
    store: { addAccepted: async (row) => void accepted.push(row) },
    queue,
    // A refused job rolls its row back, as the database transaction does.
    transaction: async (fn) => {
      const mark = accepted.length;
      try {
        return await fn();
      } catch (err) {
        accepted.length = mark;
        throw err;
      }
    },
  });
  const tokens = {
    verify: async () => ({ integrationId: 7, organizationId: 3, platform: 'okta' }),
  } as unknown as IngestTokens;
  const service = createIngestService({
    store: {} as IngestStore,
    tokens,
    integrations: { find: async () => undefined },
    queue,
    accept,
    clock: manualClock(new Date('2026-03-01T12:00:00Z')),
    limits: {
      maxBodyBytes: 1 << 20,
      maxDecodedBytes: 1 << 20,
      maxEventsPerRequest: 50_000,
      batchMaxEvents: 2,
      batchMaxBytes: 1 << 20,
      maxInflightBytes: 1 << 20,
      maxPendingBatches: 100,
    },
    jsonMaxDepth: 32,
    isTextStream: () => false,
    meter,
    traceContext: options.trace
      ? () => ({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })
      : undefined,
    onError: () => undefined,
  });
  const push = (body: string) =>
    service.push({
      token: 'svcik_x',
      stream: 'system_log',
      contentEncoding: undefined,
      contentLength: undefined,
      body: Readable.from([Buffer.from(body)]),
    });
  return { service, push, added, enqueued, accepted };
}

describe('push', () => {
  it('accepts chunks with the envelope (a ledger row and a queue job each) and counts them', async () => {
    const { push, added, enqueued, accepted } = setup();
    const out = await push('{"a":1}\n{"b":22}\n{"c":333}\nnope');
    expect(out).toMatchObject({ status: 207, accepted: 3, rejected: 1, errors: [{ line: 4, reason: 'invalid JSON' }] });
    expect(enqueued.map((e) => [e.queue, e.name])).toEqual([
      [NORMALIZE_QUEUE, NORMALIZE_JOB],
      [NORMALIZE_QUEUE, NORMALIZE_JOB],
    ]);
    const [first, second] = enqueued.map((e) => e.batch);
    expect(first).toMatchObject({
      organization_id: 3,
      integration_id: 7,
      platform: 'okta',
      stream: 'system_log',
      source: 'push',
      received_at: '2026-03-01T12:00:00.000Z',
      bytes: 15,
    });
    expect(second!.bytes).toBe(9);
    expect(enqueued[0]!.options).toEqual({ attempts: 10, backoffMs: 1000, jobId: first!.id });
    expect(out.batch_ids).toEqual([first!.id, second!.id]);
    expect(accepted).toEqual([
      {
        id: first!.id,
        organization_id: 3,
        integration_id: 7,
        stream: 'system_log',
        event_count: 2,
        accepted_at: new Date('2026-03-01T12:00:00Z'),
      },
      {
        id: second!.id,
        organization_id: 3,
        integration_id: 7,
        stream: 'system_log',
        event_count: 1,
        accepted_at: new Date('2026-03-01T12:00:00Z'),
      },
    ]);
    expect(first!.trace).toBeUndefined();
    expect(added).toEqual([
      { name: 'collector_events_in_total', value: 3, attributes: { org_id: '3', integration_id: '7' } },
      { name: 'collector_bytes_in_total', value: 24, attributes: undefined },
    ]);
  });

  it('counts only the chunks that reached the queue, and keeps no ledger row for a refused one', async () => {
    const { push, added, accepted } = setup({ failFrom: 1 });
    const out = await push('{"a":1}\n{"b":2}\n{"c":3}');
    expect(out).toMatchObject({
      status: 207,
      accepted: 2,
      rejected: 1,
      errors: [{ line: 3, reason: 'not accepted: pipeline unavailable, resend' }],
    });
    expect(added.find((a) => a.name === 'collector_events_in_total')?.value).toBe(2);
    expect(accepted).toHaveLength(1);
  });

  it('counts nothing when nothing was accepted', async () => {
    const { push, added } = setup({ failFrom: 0 });
    await expect(push('{"a":1}')).rejects.toMatchObject({
      code: 'dependency.unavailable',
      headers: { 'retry-after': '5' },
    });
    await expect(push('1')).rejects.toMatchObject({ code: 'ingest.no_events_accepted' });
    expect(added).toEqual([]);
  });

  it('carries the trace context of the request when telemetry is on', async () => {
    const { push, enqueued } = setup({ trace: true });
    await push('{"a":1}');
    expect(enqueued[0]!.batch.trace).toEqual({
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
  });
});
