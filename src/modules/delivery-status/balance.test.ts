import { describe, expect, it } from 'vitest';
import { balanceLedger, destinationLedger, emptyCounts } from './balance.js';
import { errorIsCurrent, healthStatus } from './service.js';

const s1 = { organization_id: 1, integration_id: 10, stream: 'events' };
const s2 = { organization_id: 2, integration_id: 20, stream: 'audit' };

describe('balanceLedger', () => {
  it('is zero-balanced when every event is somewhere, with fan-out and net dead letters', () => {
    const { rows, totals } = balanceLedger({
      counters: [{ ...s1, events_in: 100, quarantined: 5 }],
      ledger: [
        { ...s1, outcome: 'filtered', reason: 'no_route', count: 10 },
        { ...s1, outcome: 'filtered', reason: 'sampled_out', count: 5 },
        { ...s1, outcome: 'routed', reason: '', count: 80 },
        // 80 events, 20 of them to two destinations.
        { ...s1, outcome: 'copies', reason: 'd1', count: 80 },
        { ...s1, outcome: 'copies', reason: 'd2', count: 20 },
        { ...s1, outcome: 'delivered', reason: '', count: 90 },
        { ...s1, outcome: 'dead_lettered', reason: 'rejected', count: 6 },
        { ...s1, outcome: 'dead_lettered', reason: 'retries_exhausted', count: 2 },
        { ...s1, outcome: 'dlq_reprocessed', reason: 'retries_exhausted', count: 2 },
        { ...s1, outcome: 'shadow_dropped', reason: 'timeout', count: 3 },
      ],
      pendingNormalization: [],
      pendingRouting: [{ ...s1, events: 0 }],
      pendingOutbox: [{ ...s1, events: 4 }],
    });
    expect(rows).toEqual([
      {
        ...s1,
        events_in: 100,
        quarantined: 5,
        filtered: 15,
        filtered_by_reason: { no_route: 10, sampled_out: 5 },
        routed: 80,
        copies_added: 20,
        replayed: 0,
        delivered: 90,
        dead_lettered: 6,
        dead_lettered_by_reason: { rejected: 6 },
        dlq_reprocessed: 2,
        dropped: 0,
        dropped_by_reason: {},
        pending: 4,
        pending_normalization: 0,
        unaccounted: 0,
        shadow_delivered: 0,
        shadow_dropped: 3,
      },
    ]);
    const { organization_id: _o, integration_id: _i, stream: _s, ...counts } = rows[0]!;
    expect(totals).toEqual(counts);
  });

  it('balances after a replay: the replayed copies enter beside the copies added, pending until delivered', () => {
    const base = [
      { ...s1, outcome: 'routed', reason: '', count: 10 },
      { ...s1, outcome: 'copies', reason: 'd1', count: 10 },
      { ...s1, outcome: 'delivered', reason: '', count: 10 },
      // A replay of 2 stored events to d1.
      { ...s1, outcome: 'replayed', reason: 'd1', count: 2 },
    ];
    const queued = balanceLedger({
      counters: [{ ...s1, events_in: 10, quarantined: 0 }],
      ledger: base,
      pendingNormalization: [],
      pendingRouting: [],
      pendingOutbox: [{ ...s1, events: 2 }],
    });
    expect(queued.totals).toMatchObject({ replayed: 2, pending: 2, unaccounted: 0 });
    const delivered = balanceLedger({
      counters: [{ ...s1, events_in: 10, quarantined: 0 }],
      ledger: [...base, { ...s1, outcome: 'delivered', reason: '', count: 2 }],
      pendingNormalization: [],
      pendingRouting: [],
      pendingOutbox: [],
    });
    expect(delivered.totals).toMatchObject({ replayed: 2, delivered: 12, pending: 0, unaccounted: 0 });
  });

  it('shows a lost or doubled event as unaccounted, per stream and in total, in a stable order', () => {
    const { rows, totals } = balanceLedger({
      counters: [
        { ...s2, events_in: 3, quarantined: 0 },
        { ...s1, events_in: 2, quarantined: 0 },
      ],
      ledger: [
        { ...s1, outcome: 'routed', reason: '', count: 2 },
        { ...s1, outcome: 'copies', reason: 'd', count: 2 },
        { ...s1, outcome: 'delivered', reason: '', count: 1 },
        { ...s2, outcome: 'routed', reason: '', count: 3 },
        { ...s2, outcome: 'copies', reason: 'd', count: 3 },
        { ...s2, outcome: 'delivered', reason: '', count: 4 },
        { ...s2, outcome: 'some_future_outcome', reason: '', count: 100 },
      ],
      pendingNormalization: [],
      pendingRouting: [],
      pendingOutbox: [],
    });
    expect(rows.map((r) => [r.organization_id, r.unaccounted])).toEqual([
      [1, 1],
      [2, -1],
    ]);
    expect(totals).toMatchObject({ events_in: 5, delivered: 5, unaccounted: 0 });
  });

  it('counts events accepted and not yet normalized in events_in and in pending, also for a stream nothing was normalized of yet', () => {
    const { rows, totals } = balanceLedger({
      counters: [{ ...s1, events_in: 10, quarantined: 0 }],
      ledger: [],
      pendingNormalization: [
        { ...s1, events: 1000 },
        { ...s2, events: 500 },
      ],
      pendingRouting: [{ ...s1, events: 10 }],
      pendingOutbox: [],
    });
    expect(rows).toMatchObject([
      { ...s1, events_in: 1010, pending: 1010, pending_normalization: 1000, unaccounted: 0 },
      { ...s2, events_in: 500, pending: 500, pending_normalization: 500, unaccounted: 0 },
    ]);
    expect(totals).toMatchObject({ events_in: 1510, pending: 1510, pending_normalization: 1500, unaccounted: 0 });
  });

  it('answers zeros for an empty scope', () => {
    expect(
      balanceLedger({ counters: [], ledger: [], pendingNormalization: [], pendingRouting: [], pendingOutbox: [] }),
    ).toEqual({ totals: emptyCounts(), rows: [] });
    expect(emptyCounts()).toMatchObject({
      events_in: 0,
      unaccounted: 0,
      filtered_by_reason: {},
      dead_lettered_by_reason: {},
    });
  });
});

describe('destinationLedger', () => {
  it("gives one destination's copies, deliveries, net dead letters and outbox per stream", () => {
    expect(
      destinationLedger({
        ledger: [
          { ...s1, outcome: 'copies', reason: 'd', count: 10 },
          { ...s1, outcome: 'delivered', reason: '', count: 6 },
          { ...s1, outcome: 'dead_lettered', reason: 'rejected', count: 3 },
          { ...s1, outcome: 'dlq_reprocessed', reason: 'rejected', count: 1 },
        ],
        pendingOutbox: [{ ...s1, events: 2 }],
      }),
    ).toEqual([
      {
        ...s1,
        copies: 10,
        delivered: 6,
        dead_lettered: 2,
        dead_lettered_by_reason: { rejected: 2 },
        dlq_reprocessed: 1,
        dropped: 0,
        dropped_by_reason: {},
        pending: 2,
        shadow_delivered: 0,
        shadow_dropped: 0,
      },
    ]);
  });
});

describe('healthStatus', () => {
  const quiet = { enabled: true, breaker_state: 'closed', failing: false, recent_delivered: 0, pending: 0 };
  it('says idle when nothing happened, unhealthy when disabled or open, degraded while the latest outcome failed, healthy otherwise', () => {
    expect(healthStatus(quiet)).toBe('idle');
    expect(healthStatus({ ...quiet, pending: 3 })).toBe('healthy');
    expect(healthStatus({ ...quiet, recent_delivered: 3 })).toBe('healthy');
    expect(healthStatus({ ...quiet, recent_delivered: 3, failing: true })).toBe('degraded');
    expect(healthStatus({ ...quiet, failing: true, breaker_state: 'half_open' })).toBe('degraded');
    // Half-open waiting for an event to probe with, after a test that succeeded: nothing is failing.
    expect(healthStatus({ ...quiet, breaker_state: 'half_open' })).toBe('idle');
    expect(healthStatus({ ...quiet, breaker_state: 'open', recent_delivered: 5 })).toBe('unhealthy');
    expect(healthStatus({ ...quiet, enabled: false })).toBe('unhealthy');
  });
});

describe('errorIsCurrent', () => {
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
  const none = { last_success_at: null, last_error_at: null, last_test_at: null, last_test_ok: null };
  it('holds while nothing succeeded after the last error: neither a delivery nor a test', () => {
    expect(errorIsCurrent(undefined)).toBe(false);
    expect(errorIsCurrent(none)).toBe(false);
    expect(errorIsCurrent({ ...none, last_error_at: at(10) })).toBe(true);
    expect(errorIsCurrent({ ...none, last_error_at: at(10), last_success_at: at(5) })).toBe(true);
    expect(errorIsCurrent({ ...none, last_error_at: at(10), last_success_at: at(11) })).toBe(false);
    expect(errorIsCurrent({ ...none, last_error_at: at(10), last_test_at: at(12), last_test_ok: true })).toBe(false);
    expect(errorIsCurrent({ ...none, last_error_at: at(10), last_test_at: at(12), last_test_ok: false })).toBe(true);
  });
});
