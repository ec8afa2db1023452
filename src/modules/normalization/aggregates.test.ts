import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { IngestBatch } from '../../pipeline/envelope.js';
import type { StageResult } from '../../pipeline/normalize/stage.js';
import { AGGREGATE_LIMITS, createAggregates, unreadLeaves, type AggregateStore } from './aggregates.js';
import type { ComplianceRow, DriftRow, SampleRow } from './store.js';

function leaves(raw: Record<string, unknown>, reads: string[]): [string, unknown][] {
  const out: [string, unknown][] = [];
  unreadLeaves(raw, new Set(reads), (path, value) => out.push([path, value]));
  return out;
}

describe('unreadLeaves', () => {
  it('lists the leaves the mapping does not read; a read path covers its subtree', () => {
    const raw = {
      a: { b: 1, c: { d: 'x', e: null } },
      list: [
        { id: 1, name: 'n' },
        { id: 2, extra: true },
      ],
      tags: ['t'],
      empty: {},
      none: [],
    };
    expect(leaves(raw, ['a.c', 'list[].id'])).toEqual([
      ['a.b', 1],
      ['list[].name', 'n'],
      ['list[].extra', true],
      ['tags[]', 't'],
      ['empty', {}],
      ['none', []],
    ]);
    expect(leaves(raw, ['a', 'list', 'tags[]', 'empty', 'none'])).toEqual([]);
  });

  it('counts a lone value read as a one-element list (each over a hash written as one string) as read', () => {
    expect(leaves({ md5: 'abc', sha1: ['def'], name: 'n' }, ['md5[]', 'sha1[]'])).toEqual([['name', 'n']]);
  });

  it('spells odd keys as the mapping paths do', () => {
    expect(leaves({ 'user.name': 'x', 'a[b]': 1 }, [])).toEqual([
      ['["user.name"]', 'x'],
      ['["a[b]"]', 1],
    ]);
  });

  it('is bounded in leaves, depth and array elements', () => {
    const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
    expect(leaves(wide, [])).toHaveLength(AGGREGATE_LIMITS.leavesPerEvent);
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 50; i++) deep = { d: deep };
    expect(leaves(deep, [])).toEqual([]);
    const long = { list: Array.from({ length: 100 }, (_, i) => ({ [`f${i}`]: i })) };
    expect(leaves(long, [])).toHaveLength(AGGREGATE_LIMITS.arrayElements);
  });
});

function recorder(fail = false) {
  const written = { drift: [] as DriftRow[], compliance: [] as ComplianceRow[], samples: [] as SampleRow[] };
  const store: AggregateStore = {
    upsertDrift: async (rows) => {
      if (fail) throw new Error('db down');
      written.drift.push(...rows);
    },
    upsertCompliance: async (rows) => {
      written.compliance.push(...rows);
    },
    insertSamples: async (rows) => {
      written.samples.push(...rows);
    },
  };
  return { store, written };
}

const batch = (events: Record<string, unknown>[]): IngestBatch => ({
  id: 'b',
  organization_id: 1,
  integration_id: 2,
  platform: 'custom',
  stream: 's',
  received_at: '2026-05-01T00:00:00.000Z',
  source: 'push',
  ids: events.map((_, i) => `e${i}`),
  events,
  bytes: 0,
});

const result = (over: Partial<StageResult>): StageResult => ({
  records: [],
  texts: [],
  normalized: 0,
  flagged: 0,
  quarantined: [],
  compliance: new Map(),
  mapped: 0,
  base: 0,
  driftSample: [],
  driftRaw: [],
  ...over,
});

describe('aggregates', () => {
  it('sums drift estimates, compliance and samples across batches into one write', async () => {
    const { store, written } = recorder();
    const agg = createAggregates({ store, logger: pino({ level: 'silent' }) });
    const events = [{ read: 1, email: 'jane@example.com' }, { read: 2 }];
    const t0 = new Date('2026-05-01T10:00:00Z');
    const t1 = new Date('2026-05-01T10:00:01Z');
    agg.recordBatch(
      batch(events),
      result({
        mapped: 32,
        driftSample: [0, 1],
        driftRaw: [events[0]!, events[1]!],
        compliance: new Map([[3004, { valid: 30, invalid: 2, lastError: 'e1' }]]),
      }),
      new Set(['read']),
      t0,
    );
    agg.recordBatch(
      batch(events),
      result({
        mapped: 1,
        driftSample: [0],
        driftRaw: [events[0]!],
        compliance: new Map([[3004, { valid: 1, invalid: 0, lastError: null }]]),
      }),
      new Set(['read']),
      t1,
    );
    expect(agg.pending()).toEqual({ drift: 1, compliance: 1, samples: 2 });
    await agg.flush(t1);
    expect(agg.pending()).toEqual({ drift: 0, compliance: 0, samples: 0 });

    // 1 of 2 sampled events had the field in a batch of 32 (16), then 1 of 1 of 1.
    expect(written.drift).toEqual([
      expect.objectContaining({
        path: 'email',
        count: 17,
        value_type: 'string',
        example: 'j***@example.com',
        first_seen_at: t0.toISOString(),
        last_seen_at: t1.toISOString(),
      }),
    ]);
    expect(written.compliance).toEqual([
      {
        organization_id: 1,
        integration_id: 2,
        class_uid: 3004,
        day: '2026-05-01',
        valid: 31,
        invalid: 2,
        last_error: 'e1',
        last_invalid_at: t0.toISOString(),
      },
    ]);
    // One sample write per stream per interval.
    expect(written.samples.map((s) => s.raw)).toEqual(events);
  });

  it('skips drift without a mapping, and logs and drops a failed write', async () => {
    const { store, written } = recorder(true);
    const agg = createAggregates({ store, logger: pino({ level: 'silent' }) });
    agg.recordBatch(batch([{ x: 1 }]), result({}), undefined, new Date());
    expect(agg.pending().drift).toBe(0);
    agg.recordBatch(
      batch([{ x: 1 }]),
      result({ mapped: 1, driftSample: [0], driftRaw: [{ x: 1 }] }),
      new Set(),
      new Date(),
    );
    await expect(agg.flush()).resolves.toBeUndefined();
    expect(written.drift).toEqual([]);
    expect(agg.pending()).toEqual({ drift: 0, compliance: 0, samples: 0 });
  });
});
