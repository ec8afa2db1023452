// The live path's in-memory sort and aggregations (the store computes the same in SQL).
import { describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../pipeline/envelope.js';
import { aggregate, sortRecords } from './live-executor.js';
import { planQuery } from './query/definition.js';

const T0 = Date.parse('2026-11-20T08:00:00Z');
const rec = (id: string, ocsf: Record<string, unknown>) =>
  ({
    id,
    organization_id: 1,
    integration_id: 1,
    stream: 's',
    received_at: '',
    mapping_version_id: '',
    valid: true,
    ocsf,
  }) as NormalizedRecord;
const records = [
  rec('a', {
    time: T0 + 5 * 60_000,
    severity_id: 1,
    actor: { user: { name: 'ana' } },
    observables: [{ value: 'x' }, { value: 'y' }],
  }),
  rec('b', { time: T0 + 65 * 60_000, severity_id: 4, actor: { user: { name: 'bob' } }, observables: [{ value: 'x' }] }),
  rec('c', { time: T0 + 70 * 60_000, severity_id: 4 }),
];

function plan(extra: Record<string, unknown>) {
  return planQuery(
    { time: { from: '2026-11-20T08:00:00Z', to: '2026-11-20T10:00:00Z' }, ...extra },
    { now: new Date(T0 + 3 * 3_600_000), maxRangeDays: 30, maxLimit: 100 },
  );
}

describe('live queries: sort and aggregations in memory', () => {
  it('sorts asc with missing values first and desc with them last, ties by id', () => {
    expect(
      sortRecords(records, plan({ sort: [{ field: 'actor.user.name', order: 'asc' }] }).sort).map((r) => r.id),
    ).toEqual(['c', 'a', 'b']);
    expect(
      sortRecords(records, plan({ sort: [{ field: 'actor.user.name', order: 'desc' }] }).sort).map((r) => r.id),
    ).toEqual(['b', 'a', 'c']);
    expect(
      sortRecords(records, plan({ sort: [{ field: 'severity_id', order: 'desc' }] }).sort).map((r) => r.id),
    ).toEqual(['b', 'c', 'a']);
  });

  it('count_by, top over [*] and a histogram with its empty buckets', () => {
    const out = aggregate(
      records,
      plan({
        aggregations: [
          { type: 'count_by', fields: ['severity_id'] },
          { type: 'top', field: 'observables[*].value' },
          { type: 'histogram', interval: '1h' },
        ],
      }),
    );
    expect(out).toEqual([
      {
        type: 'count_by',
        fields: ['severity_id'],
        buckets: [
          { key: { severity_id: 4 }, count: 2 },
          { key: { severity_id: 1 }, count: 1 },
        ],
      },
      {
        type: 'top',
        field: 'observables[*].value',
        values: [
          { value: 'x', count: 2 },
          { value: 'y', count: 1 },
        ],
      },
      {
        type: 'histogram',
        interval: '1h',
        buckets: [
          { start: '2026-11-20T08:00:00.000Z', count: 1 },
          { start: '2026-11-20T09:00:00.000Z', count: 2 },
        ],
      },
    ]);
  });
});
