import { describe, expect, it } from 'vitest';
import { manualClock } from '../../core/clock.js';
import type { IngestBatch } from '../envelope.js';
import { acceptPulled } from './pull.js';

function fakeQueue(failAt = Infinity) {
  const batches: IngestBatch[] = [];
  return {
    batches,
    accept: async (batch: IngestBatch) => {
      if (batches.length >= failAt) throw new Error('queue down');
      batches.push(batch);
    },
  };
}

const pulled = (n: number) => ({
  organizationId: 1,
  integrationId: 2,
  platform: 'okta',
  stream: 'system_log',
  events: Array.from({ length: n }, (_, i) => ({ uuid: `u${i}` })),
  keys: Array.from({ length: n }, (_, i) => `u${i}`),
});

describe('acceptPulled', () => {
  it('accepts pulled events in batches that keep each event with its vendor key, and the cycle trace', async () => {
    const queue = fakeQueue();
    const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    const accepted = await acceptPulled(queue.accept, manualClock(), pulled(5), 2, trace);
    expect(accepted.events).toBe(5);
    expect(accepted.batchIds).toEqual(queue.batches.map((b) => b.id));
    expect(queue.batches.map((b) => b.keys)).toEqual([['u0', 'u1'], ['u2', 'u3'], ['u4']]);
    expect(
      queue.batches.every((b) => b.source === 'pull' && b.ids.length === b.events.length && b.trace === trace),
    ).toBe(true);
    expect(accepted.bytes).toBe(queue.batches.reduce((n, b) => n + b.bytes, 0));
    expect(queue.batches[0]!.events.map((e) => (e as Record<string, unknown>).uuid)).toEqual(['u0', 'u1']);
  });

  it('throws when a batch is refused, so the caller keeps its cursor', async () => {
    const queue = fakeQueue(1);
    await expect(acceptPulled(queue.accept, manualClock(), pulled(3), 2)).rejects.toThrow('queue down');
    expect(queue.batches).toHaveLength(1);
    expect(queue.batches[0]!.trace).toBeUndefined();
  });

  it('refuses keys and events of different lengths', async () => {
    await expect(acceptPulled(fakeQueue().accept, manualClock(), { ...pulled(2), keys: ['only-one'] })).rejects.toThrow(
      /differ in length/,
    );
  });
});
