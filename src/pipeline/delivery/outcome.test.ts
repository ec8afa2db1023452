import { describe, expect, it } from 'vitest';
import { decodeRecords, encodeRecords } from '../batch-codec.js';
import { DeliveryError } from '../sinks/types.js';
import type { OutboxRow } from './engine-port.js';
import { planRows, settleRow } from './outcome.js';
import { deliverySettings } from './settings.js';
import { buildSinkBatch, decodeRow, sliceLength, type Part } from './sink-batch.js';

const settings = deliverySettings({ max_attempts: 3, backoff_base_ms: 100, backoff_max_ms: 1_000 });

async function part(
  n: number,
  opts: { attempts?: number; kind?: OutboxRow['kind']; take?: number } = {},
): Promise<Part> {
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({ n: i, user: { email_addr: `u${i}@example.com` } }),
  );
  const ids = lines.map((_, i) => `id-${i}`);
  const row: OutboxRow = {
    id: `row-${n}-${opts.kind ?? 'primary'}`,
    destination_id: 'd1',
    organization_id: 1,
    integration_id: 2,
    stream: 's',
    kind: opts.kind ?? 'primary',
    event_count: n,
    bytes: lines.reduce((b, l) => b + l.length, 0),
    event_ids: ids.join(','),
    events: await encodeRecords(lines.join('\n')),
    attempts: opts.attempts ?? 0,
    age_ms: 0,
  };
  const decoded = await decodeRow(row);
  return { row, ...decoded, take: opts.take ?? n };
}

describe('sink batches', () => {
  it('concatenates the taken events of each row with shared metadata', async () => {
    const a = await part(3, { take: 2 });
    const b = await part(2);
    const batch = buildSinkBatch([a, b]);
    expect(batch.ids).toEqual(['id-0', 'id-1', 'id-0', 'id-1']);
    expect(batch.meta[0]).toBe(batch.meta[1]);
    expect(batch.bytes).toBe(a.lines[0]!.length + a.lines[1]!.length + b.lines[0]!.length + b.lines[1]!.length);
    expect(batch.events()[2]).toEqual({ n: 0, user: { email_addr: 'u0@example.com' } });
    expect(batch.events()).toBe(batch.events());
  });

  it('slices an oversized row by events and bytes, at least one event', () => {
    const lines = ['aaaa', 'bbbb', 'cccc'];
    expect(sliceLength(lines, 2, 1_000)).toBe(2);
    expect(sliceLength(lines, 10, 9)).toBe(2);
    expect(sliceLength(lines, 10, 1)).toBe(1);
  });
});

describe('planRows', () => {
  it('success: every taken event delivered, the untaken rest stays with its attempts', async () => {
    const p = await part(5, { take: 3, attempts: 1 });
    buildSinkBatch([p]);
    const [plan] = planRows([p], { ok: true, result: {} }, settings);
    expect(plan).toMatchObject({
      delivered: [0, 1, 2],
      dead: [],
      remain: [3, 4],
      attempts: 1,
      delayMs: 0,
      outcome: 'delivered',
    });
    const s = await settleRow(plan!, 12, true);
    expect(s.remove).toBe(false);
    expect(s.rewrite?.content?.event_ids).toBe('id-3,id-4');
    expect((await decodeRecords(s.rewrite!.content!.events)).split('\n')).toEqual([p.lines[3], p.lines[4]]);
    expect(s.ledger).toEqual([
      { organization_id: 1, integration_id: 2, stream: 's', outcome: 'delivered', destination_id: 'd1', count: 3 },
    ]);
    expect(s.deliveredLines).toHaveLength(3);
    expect(s.deliveredBytes).toBe(p.takeBytes);
  });

  it('partial: rejected to the DLQ, retry kept with attempts + 1 and a backoff, indexes across rows', async () => {
    const a = await part(2);
    const b = await part(3);
    const sent = {
      ok: true as const,
      result: {
        rejected: [{ index: 1, reason: 'mapping conflict', statusCode: 400 }],
        retry: [{ index: 3, reason: 'es_rejected_execution', statusCode: 429 }],
      },
    };
    const [pa, pb] = planRows([a, b], sent, settings, () => 0.5);
    expect(pa).toMatchObject({
      delivered: [0],
      dead: [{ index: 1, error_kind: 'rejected', reason: 'mapping conflict', status_code: 400 }],
      remain: [],
      outcome: 'partial',
    });
    expect(pb).toMatchObject({
      delivered: [0, 2],
      dead: [],
      remain: [1],
      attempts: 1,
      delayMs: 50,
      outcome: 'partial',
      lastError: 'es_rejected_execution',
    });
    const sa = await settleRow(pa!, 1, false);
    expect(sa.remove).toBe(true);
    expect(sa.dlq).toEqual([
      expect.objectContaining({
        event_id: 'id-1',
        event: a.lines[1],
        error_kind: 'rejected',
        status_code: 400,
        attempts: 0,
        delivery_batch_id: a.row.id,
      }),
    ]);
    expect(sa.ledger).toContainEqual({
      organization_id: 1,
      integration_id: 2,
      stream: 's',
      outcome: 'dead_lettered',
      destination_id: 'd1',
      reason: 'rejected',
      count: 1,
    });
  });

  it('retryable failure: attempts + 1 and Retry-After; exhausted: DLQ retries_exhausted', async () => {
    const err = new DeliveryError('rate_limited', 'HTTP 429', { statusCode: 429, retryAfterMs: 2_000 });
    const [plan] = planRows([await part(2, { attempts: 1 })], { ok: false, error: err }, settings, () => 0.1);
    expect(plan).toMatchObject({ remain: 'all', attempts: 2, delayMs: 2_000, outcome: 'retry', statusCode: 429 });
    const [last] = planRows([await part(2, { attempts: 2 })], { ok: false, error: err }, settings);
    expect(last).toMatchObject({ remain: [], attempts: 3, outcome: 'dead_lettered' });
    expect(last!.dead.map((d) => d.error_kind)).toEqual(['retries_exhausted', 'retries_exhausted']);
  });

  it('permanent failure: every event of the row to the DLQ with the error kind; shadow rows are dropped, never dead-lettered', async () => {
    const err = new DeliveryError('auth', 'HTTP 401 '.padEnd(1_500, 'x'), { statusCode: 401 });
    const [plan] = planRows([await part(3, { take: 1 })], { ok: false, error: err }, settings);
    expect(plan!.dead.map((d) => d.error_kind)).toEqual(['auth', 'auth', 'auth']);
    expect(plan!.dead[0]!.reason.length).toBe(1_000);
    const [shadow] = planRows([await part(2, { kind: 'shadow' })], { ok: false, error: err }, settings);
    const s = await settleRow(shadow!, 1, false);
    expect(s.dlq).toEqual([]);
    expect(s.deadLettered).toBe(0);
    expect(s.ledger).toEqual([
      {
        organization_id: 1,
        integration_id: 2,
        stream: 's',
        outcome: 'shadow_dropped',
        destination_id: 'd1',
        reason: 'auth',
        count: 2,
      },
    ]);
  });
});
