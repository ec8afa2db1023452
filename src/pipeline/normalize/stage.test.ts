import { describe, expect, it } from 'vitest';
import type { OcsfIssue } from '../../ocsf/types.js';
import type { IngestBatch } from '../envelope.js';
import {
  DRIFT_MAX_SAMPLE,
  driftStride,
  normalizeBatch,
  oneLine,
  recordsNdjson,
  summarizeIssues,
  type StageContext,
} from './stage.js';
import type { CompiledMapping, MapResult } from './types.js';

// A stand-in for a compiled mapping: the raw event says how mapping goes.
const fakeMapping: CompiledMapping = {
  reads: new Set(['kind', 'user']),
  expected: new Set(['kind', 'user']),
  map(raw, ctx): MapResult {
    switch (raw.kind) {
      case 'no_rule':
        return { ok: false, kind: 'no_matching_rule', detail: 'no rule matched' };
      case 'bad_cast':
        return { ok: false, kind: 'cast_failed', detail: 'time: "x" is not a timestamp\nsecond line' };
      case 'throws':
        throw new Error('boom');
      case 'bigint':
        return { ok: true, event: { class_uid: 3002, user: 'x', n: 1n } };
      default:
        return {
          ok: true,
          event: { class_uid: raw.class_uid ?? 3002, activity_id: 1, time: ctx.receivedAtMs, user: raw.user },
        };
    }
  },
};

// Validation driven by the mapped event: `user` absent -> missing required, 'bad' -> type issue.
const validate = (event: Record<string, unknown>): OcsfIssue[] => {
  if (event.user === undefined) return [{ path: 'user', kind: 'missing_required', message: 'user is required' }];
  if (event.user === 'bad') {
    return [
      { path: 'user', kind: 'type', message: 'expected an object, got "bad"' },
      { path: 'time', kind: 'type', message: 'x' },
      { path: 'severity_id', kind: 'enum', message: 'x' },
      { path: 'foo', kind: 'unknown_attribute', message: 'x' },
    ];
  }
  return [];
};

function batchOf(events: Record<string, unknown>[], extra: Partial<IngestBatch> = {}): IngestBatch {
  return {
    id: '0190d1c2-0000-7000-8000-000000000000',
    organization_id: 7,
    integration_id: 42,
    platform: 'custom',
    stream: 'app "logs"',
    received_at: '2026-03-01T12:00:00.000Z',
    source: 'push',
    ids: events.map((_, i) => `0190d1c2-0000-7000-8000-${String(i).padStart(12, '0')}`),
    events,
    bytes: 100,
    ...extra,
  };
}

const ctx = (over: Partial<StageContext> = {}): StageContext => ({
  mapping: { versionId: 'v-1', compiled: fakeMapping },
  validate,
  policy: 'strict',
  ...over,
});

describe('normalizeBatch', () => {
  it('writes one NDJSON line per valid event with the full envelope', () => {
    const res = normalizeBatch(batchOf([{ user: 'a' }, { user: 'b', class_uid: 6003 }]), ctx());
    expect(res.normalized).toBe(2);
    expect(res.flagged).toBe(0);
    expect(res.quarantined).toEqual([]);
    expect(recordsNdjson(res).split('\n')).toHaveLength(2);
    expect(res.records[0]).toEqual({
      id: '0190d1c2-0000-7000-8000-000000000000',
      organization_id: 7,
      integration_id: 42,
      stream: 'app "logs"',
      received_at: '2026-03-01T12:00:00.000Z',
      mapping_version_id: 'v-1',
      valid: true,
      ocsf: { class_uid: 3002, activity_id: 1, time: Date.parse('2026-03-01T12:00:00.000Z'), user: 'a' },
    });
    expect(res.records[1]!.ocsf.class_uid).toBe(6003);
    expect(res.compliance).toEqual(
      new Map([
        [3002, { valid: 1, invalid: 0, lastError: null }],
        [6003, { valid: 1, invalid: 0, lastError: null }],
      ]),
    );
  });

  it('quarantines every event as no_mapping when there is no live mapping', () => {
    const res = normalizeBatch(batchOf([{ user: 'a' }, { user: 'b' }]), ctx({ mapping: undefined }));
    expect(recordsNdjson(res)).toBe('');
    expect(res.normalized).toBe(0);
    expect(res.mapped).toBe(0);
    expect(res.quarantined.map((q) => [q.index, q.error_kind, q.mapping_version_id])).toEqual([
      [0, 'no_mapping', null],
      [1, 'no_mapping', null],
    ]);
    expect(res.quarantined[0]!.error_detail).toBe('no live mapping for platform "custom", stream "app "logs""');
    expect(res.quarantined[1]).toMatchObject({
      id: '0190d1c2-0000-7000-8000-000000000001',
      raw: { user: 'b' },
      received_at: '2026-03-01T12:00:00.000Z',
    });
  });

  it('quarantines mapping failures with their own kind, on one line', () => {
    const res = normalizeBatch(
      batchOf([{ kind: 'no_rule' }, { kind: 'bad_cast' }, { kind: 'throws' }, { kind: 'bigint' }, { user: 'ok' }]),
      ctx(),
    );
    expect(res.quarantined.map((q) => [q.index, q.error_kind, q.error_detail, q.mapping_version_id])).toEqual([
      [0, 'no_matching_rule', 'no rule matched', 'v-1'],
      [1, 'cast_failed', 'time: "x" is not a timestamp second line', 'v-1'],
      [2, 'mapping_error', 'normalization failed: boom', 'v-1'],
      [3, 'mapping_error', expect.stringMatching(/^normalization failed: .*BigInt/), 'v-1'],
    ]);
    expect(res.normalized).toBe(1);
    expect(res.records.map((r) => r.ocsf.user)).toEqual(['ok']);
  });

  it('always quarantines missing required attributes, even when lenient', () => {
    for (const policy of ['strict', 'lenient'] as const) {
      const res = normalizeBatch(batchOf([{ kind: 'x' }]), ctx({ policy }));
      expect(res.quarantined.map((q) => [q.error_kind, q.error_detail])).toEqual([
        ['missing_required', 'missing required attribute: user'],
      ]);
      expect(res.normalized).toBe(0);
      expect(res.compliance.get(3002)).toEqual({ valid: 0, invalid: 1, lastError: 'missing required attribute: user' });
    }
  });

  it('strict: invalid OCSF is quarantined with a summary that carries no values', () => {
    const res = normalizeBatch(batchOf([{ user: 'bad' }, { user: 'fine' }]), ctx());
    expect(res.quarantined).toHaveLength(1);
    const q = res.quarantined[0]!;
    expect(q.error_kind).toBe('invalid_ocsf');
    expect(q.error_detail).toBe('invalid OCSF (4 issues): type at user; type at time; enum at severity_id (+1 more)');
    expect(q.error_detail).not.toContain('"bad"');
    expect(res.normalized).toBe(1);
    expect(res.compliance.get(3002)).toEqual({ valid: 1, invalid: 1, lastError: q.error_detail });
  });

  it('lenient: invalid OCSF is delivered, flagged with valid=false and its issues', () => {
    const res = normalizeBatch(batchOf([{ user: 'bad' }, { user: 'fine' }]), ctx({ policy: 'lenient' }));
    expect(res.quarantined).toEqual([]);
    expect(res.normalized).toBe(2);
    expect(res.flagged).toBe(1);
    const [flagged, valid] = res.records;
    expect(flagged).toMatchObject({ valid: false, mapping_version_id: 'v-1', ocsf: { user: 'bad' } });
    expect(flagged!.issues).toHaveLength(4);
    expect(flagged!.issues![0]).toEqual({ path: 'user', kind: 'type', message: 'expected an object, got "bad"' });
    expect(valid).toMatchObject({ valid: true });
    expect(valid).not.toHaveProperty('issues');
  });

  it('uses per-event received_at when given (reprocessing)', () => {
    const times = ['2026-02-01T00:00:00.000Z', '2026-02-02T00:00:00.000Z'];
    const res = normalizeBatch(batchOf([{ user: 'a' }, { kind: 'no_rule' }]), ctx({ receivedAt: times }));
    const [rec] = res.records;
    expect(rec!.received_at).toBe(times[0]);
    expect(rec!.ocsf.time).toBe(Date.parse(times[0]!));
    expect(res.quarantined[0]!.received_at).toBe(times[1]);
  });

  it('walks every mapped event of a small batch for drift, and a bounded sample spread over a large one', () => {
    const small = normalizeBatch(
      batchOf(Array.from({ length: DRIFT_MAX_SAMPLE }, (_, i) => ({ user: `u${i}` }))),
      ctx(),
    );
    expect(small.driftSample).toEqual(Array.from({ length: DRIFT_MAX_SAMPLE }, (_, i) => i));
    const events = Array.from({ length: 2000 }, (_, i) => ({ user: `u${i}` }));
    const res = normalizeBatch(batchOf(events), ctx());
    expect(res.driftSample).toHaveLength(DRIFT_MAX_SAMPLE);
    const stride = driftStride(2000);
    expect(res.driftSample.slice(0, 3)).toEqual([0, stride, stride * 2]);
    // Spread over the whole batch, not its first events only.
    expect(res.driftSample.at(-1)).toBeGreaterThan(1900);
  });

  it('samples only mapped events for drift', () => {
    const events = Array.from({ length: 1000 }, (_, i) => (i % 2 ? { kind: 'no_rule' } : { user: `u${i}` }));
    const res = normalizeBatch(batchOf(events), ctx());
    expect(res.mapped).toBe(500);
    expect(res.driftSample.every((i) => i % 2 === 0)).toBe(true);
  });

  it('delivers Base Events, counts them, and leaves them out of the drift sample', () => {
    const events = Array.from({ length: 40 }, (_, i) => (i % 2 ? { class_uid: 0, user: `b${i}` } : { user: `u${i}` }));
    const res = normalizeBatch(batchOf(events), ctx());
    expect(res).toMatchObject({ mapped: 40, base: 20, normalized: 40 });
    // Every second specific event (a batch of 40: a stride of 2), the Base Events left out.
    expect(res.driftSample).toEqual(Array.from({ length: 10 }, (_, i) => i * 4));
    expect(res.compliance.get(0)).toEqual({ valid: 20, invalid: 0, lastError: null });
  });

  it('handles an empty batch', () => {
    const res = normalizeBatch(batchOf([]), ctx());
    expect(res).toMatchObject({ records: [], normalized: 0, flagged: 0, quarantined: [], mapped: 0, driftSample: [] });
  });
});

describe('detail helpers', () => {
  it('oneLine flattens and bounds', () => {
    expect(oneLine('a\n  b\r\nc')).toBe('a b c');
    expect(oneLine('x'.repeat(600))).toHaveLength(500);
  });

  it('summarizeIssues lists missing attributes first', () => {
    const issues: OcsfIssue[] = [
      { path: 'time', kind: 'type', message: '' },
      { path: 'a', kind: 'missing_required', message: '' },
      { path: 'b', kind: 'missing_required', message: '' },
      { path: 'c', kind: 'missing_required', message: '' },
      { path: 'd', kind: 'missing_required', message: '' },
    ];
    expect(summarizeIssues(issues)).toBe('missing required attributes: a, b, c (+1 more)');
    expect(summarizeIssues([{ path: '', kind: 'unknown_class', message: '' }])).toBe(
      'invalid OCSF (1 issue): unknown_class at (event)',
    );
  });
});
