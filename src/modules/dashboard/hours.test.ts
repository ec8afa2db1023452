// The dashboard's hourly windows against the real writers (addCounters, addLedger) at
// chosen times and an injectable clock: which buckets fall in the last hour and the last
// 24 hours, that the hours add up to the days written by the same statements, retention
// and an organization's data deletion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { http } from '../../../test/support/ingest.js';
import { createIntegration } from '../../../test/support/normalization.js';
import { manualClock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import { addLedger, type LedgerDelta } from '../delivery/ledger.js';
import { DELIVERY_HOUSEKEEPING_QUEUE, PURGE_STATS_JOB } from '../delivery/jobs.js';
import { createNormalizationStore } from '../normalization/store.js';

type Json = Record<string, unknown>;

const clock = manualClock(new Date('2026-11-25T10:20:00Z'));
let t: TestApp;
let base: string;
let orgA: number;
let orgB: number;
let intA: number;
let intB: number;
let root: Principal;
let adminA: Principal;
const db = () => t.container.database.db;

/** Events received at `at` (stream counters and their hour), `quarantined` of them quarantined. */
async function received(
  organizationId: number,
  integrationId: number,
  at: string,
  events: number,
  quarantined = 0,
  released = 0,
): Promise<void> {
  await createNormalizationStore(db()).addCounters({
    organization_id: organizationId,
    integration_id: integrationId,
    stream: 's',
    at: new Date(at),
    events_in: events,
    bytes_in: events * 100,
    normalized: events - quarantined + released,
    flagged: 0,
    quarantined,
    quarantine_released: released,
    last_event_at: events > 0 ? new Date(at) : null,
  });
}

/** Ledger outcomes written at `at` (the ledger and its hour). */
async function outcomes(
  organizationId: number,
  integrationId: number,
  at: string,
  counts: Partial<Record<LedgerDelta['outcome'], number>>,
): Promise<void> {
  const deltas = Object.entries(counts).map(([outcome, count]) => ({
    organization_id: organizationId,
    integration_id: integrationId,
    stream: 's',
    outcome: outcome as LedgerDelta['outcome'],
    destination_id: ['delivered', 'dead_lettered', 'copies'].includes(outcome) ? 'dest-1' : '',
    reason: outcome === 'filtered' ? 'no_route' : outcome === 'dead_lettered' ? 'rejected' : '',
    count: count!,
  }));
  await addLedger(db(), deltas, new Date(at));
}

async function traffic(who: Principal): Promise<Record<'last_hour' | 'last_24_hours' | 'today' | 'yesterday', Json>> {
  const res = await http(base, 'GET', '/api/dashboard/summary', undefined, who.headers);
  expect(res.status).toBe(200);
  return res.json.traffic as Record<'last_hour' | 'last_24_hours' | 'today' | 'yesterday', Json>;
}

const at = (iso: string) => Date.parse(iso);

beforeAll(async () => {
  t = await createTestApp({ clock });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  orgA = await createOrganization(t, 'Hours A');
  orgB = await createOrganization(t, 'Hours B');
  intA = await createIntegration(t, orgA);
  intB = await createIntegration(t, orgB);
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });

  // Now is 2026-11-25 10:20Z. The current hour:
  await received(orgA, intA, '2026-11-25T10:05:00Z', 10, 2);
  await outcomes(orgA, intA, '2026-11-25T10:06:00Z', { routed: 8, copies: 8, delivered: 8 });
  await received(orgA, intA, '2026-11-25T10:10:00Z', 0, 0, 1); // a reprocess released one quarantined event
  await outcomes(orgA, intA, '2026-11-25T10:10:00Z', { routed: 1, copies: 1, delivered: 1 });
  // The hour before (in the last hour):
  await received(orgA, intA, '2026-11-25T09:30:00Z', 5);
  await outcomes(orgA, intA, '2026-11-25T09:31:00Z', {
    filtered: 1,
    routed: 4,
    copies: 4,
    delivered: 3,
    dead_lettered: 1,
  });
  // Three hours before (in the last 24 hours only):
  await received(orgA, intA, '2026-11-25T07:10:00Z', 3);
  await outcomes(orgA, intA, '2026-11-25T07:11:00Z', { routed: 3, copies: 3, delivered: 3 });
  // Yesterday: the first bucket of the last 24 hours (10:00), and the one just before it (09:59).
  await received(orgA, intA, '2026-11-24T10:00:00Z', 4);
  await outcomes(orgA, intA, '2026-11-24T10:00:00Z', { routed: 4, copies: 4, delivered: 4 });
  await received(orgA, intA, '2026-11-24T09:59:59Z', 7);
  await outcomes(orgA, intA, '2026-11-24T09:59:59Z', { routed: 7, copies: 7, delivered: 7 });
  // B, this hour: never in A's summary.
  await received(orgB, intB, '2026-11-25T10:01:00Z', 6);
  await outcomes(orgB, intB, '2026-11-25T10:02:00Z', { filtered: 6 });
  // A batch of A accepted at 10:15 and not normalized yet: events in of every window that covers 10:15.
  await db()
    .insertInto('accepted_batches')
    .values({
      id: newId(),
      organization_id: orgA,
      integration_id: intA,
      stream: 's',
      event_count: 2,
      accepted_at: new Date('2026-11-25T10:15:00Z'),
    })
    .execute();
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe("the dashboard's hourly windows", () => {
  it('sums the current hour so far and the whole hour before it as the last hour', async () => {
    clock.set(new Date('2026-11-25T10:20:00Z'));
    const w = await traffic(adminA);
    expect(w.last_hour).toMatchObject({
      resolution: 'hour',
      events_in: 10 + 5 + 2,
      delivered: 8 + 1 + 3,
      filtered: 1,
      quarantined: 2 - 1,
      dead_lettered: 1,
      dlq_reprocessed: 0,
    });
    expect(at(String(w.last_hour.from))).toBe(at('2026-11-25T09:00:00Z'));
    expect(at(String(w.last_hour.to))).toBe(at('2026-11-25T10:20:00Z'));
    // From the start of the hour 24 hours before the current one: 2026-11-24 10:00 is in, 09:59:59 is out.
    expect(w.last_24_hours).toMatchObject({
      events_in: 10 + 5 + 3 + 4 + 2,
      delivered: 8 + 1 + 3 + 3 + 4,
      filtered: 1,
      quarantined: 1,
      dead_lettered: 1,
    });
    expect(at(String(w.last_24_hours.from))).toBe(at('2026-11-24T10:00:00Z'));
    // The days, from the day tables written by the same statements, agree with the hours.
    expect(w.today).toMatchObject({
      resolution: 'utc_day',
      events_in: 10 + 5 + 3 + 2,
      delivered: 8 + 1 + 3 + 3,
      quarantined: 1,
    });
    expect(w.yesterday).toMatchObject({ events_in: 4 + 7, delivered: 4 + 7 });
    const hourRows = await db()
      .selectFrom('ledger_hours')
      .select(['hour', 'term', 'count'])
      .where('organization_id', '=', orgA)
      .execute();
    const dayRows = await db()
      .selectFrom('ledger')
      .select(['day', 'outcome', 'count'])
      .where('organization_id', '=', orgA)
      .where('outcome', 'in', ['delivered', 'filtered', 'dead_lettered'])
      .execute();
    for (const day of ['2026-11-24', '2026-11-25']) {
      for (const term of ['delivered', 'filtered', 'dead_lettered']) {
        const hours = hourRows
          .filter((r) => new Date(r.hour).toISOString().startsWith(day) && r.term === term)
          .reduce((n, r) => n + Number(r.count), 0);
        const days = dayRows
          .filter((r) => r.day === day && r.outcome === term)
          .reduce((n, r) => n + Number(r.count), 0);
        expect(hours, `${day} ${term}`).toBe(days);
      }
    }
    // Outcomes the dashboard does not show (routed, copies) are not kept per hour.
    expect(hourRows.map((r) => r.term)).not.toContain('routed');
  });

  it('gives the terms per hour over the last 24 hours, summing to that window', async () => {
    clock.set(new Date('2026-11-25T10:20:00Z'));
    const w = await traffic(adminA);
    const hourly = (w as unknown as { hourly: Record<string, number | string>[] }).hourly;
    expect(hourly).toHaveLength(25);
    expect(at(String(hourly[0]?.hour))).toBe(at('2026-11-24T10:00:00Z'));
    expect(at(String(hourly[24]?.hour))).toBe(at('2026-11-25T10:00:00Z'));
    const sum = (term: string) => hourly.reduce((n, p) => n + Number(p[term]), 0);
    for (const term of ['delivered', 'filtered', 'quarantined', 'dead_lettered', 'dlq_reprocessed']) {
      expect(sum(term), term).toBe((w.last_24_hours as Record<string, number>)[term]);
    }
    // The batch accepted at 10:15 and not normalized yet is in the window's events in, not in an hour.
    expect(sum('events_in')).toBe(Number((w.last_24_hours as Record<string, number>).events_in) - 2);
    expect(hourly[24]).toMatchObject({ events_in: 10, delivered: 8 + 1, quarantined: 2 - 1 });
    expect(hourly[0]).toMatchObject({ events_in: 4, delivered: 4 });
  });

  it('lets the previous hour go when the clock passes the next hour', async () => {
    clock.set(new Date('2026-11-25T11:05:00Z'));
    const w = await traffic(adminA);
    expect(w.last_hour).toMatchObject({
      events_in: 10 + 2,
      delivered: 9,
      filtered: 0,
      quarantined: 1,
      dead_lettered: 0,
    });
    expect(at(String(w.last_hour.from))).toBe(at('2026-11-25T10:00:00Z'));
    // The 24-hour window now starts at 2026-11-24 11:00: yesterday's rows are out.
    expect(w.last_24_hours).toMatchObject({ events_in: 10 + 5 + 3 + 2, delivered: 8 + 1 + 3 + 3 });
  });

  it('sums every organization for a platform caller', async () => {
    clock.set(new Date('2026-11-25T10:20:00Z'));
    const w = await traffic(root);
    expect(w.last_hour).toMatchObject({ events_in: 17 + 6, filtered: 1 + 6 });
  });

  it('keeps 48 hours of hourly rows (delivery housekeeping)', async () => {
    clock.set(new Date('2026-11-26T10:00:00Z'));
    const purge = t.container.jobs.find((j) => j.queue === DELIVERY_HOUSEKEEPING_QUEUE)!.handlers[PURGE_STATS_JOB]!;
    await purge(
      { id: 'p', queue: DELIVERY_HOUSEKEEPING_QUEUE, name: PURGE_STATS_JOB, payload: {}, attempt: 1, maxAttempts: 1 },
      new AbortController().signal,
    );
    const hours = await db()
      .selectFrom('ledger_hours')
      .select('hour')
      .distinct()
      .where('organization_id', '=', orgA)
      .execute();
    const kept = hours.map((r) => new Date(r.hour).toISOString()).sort();
    // The cutoff is 48 hours ago, 2026-11-24 10:00: the 09:00 bucket goes, the 10:00 bucket stays.
    expect(kept).toEqual([
      '2026-11-24T10:00:00.000Z',
      '2026-11-25T07:00:00.000Z',
      '2026-11-25T09:00:00.000Z',
      '2026-11-25T10:00:00.000Z',
    ]);
    // The day tables are not touched by the hours' retention.
    const ledgerDays = await db()
      .selectFrom('ledger')
      .select('day')
      .distinct()
      .where('organization_id', '=', orgA)
      .execute();
    expect(ledgerDays.map((r) => r.day).sort()).toEqual(['2026-11-24', '2026-11-25']);
  });

  it("deletes the hourly rows with the organization's data, and nothing of another", async () => {
    const id = newId();
    await db()
      .insertInto('org_data_deletions')
      .values({ id, organization_id: orgA, requested_by: null, state: 'queued', detail: JSON.stringify({}) })
      .execute();
    await t.container.organizations.dataDeletion.run(id, 1, 1);
    expect(
      (await db().selectFrom('org_data_deletions').select('state').where('id', '=', id).executeTakeFirstOrThrow())
        .state,
    ).toBe('completed');
    const count = async (o: number) =>
      Number(
        (
          await db()
            .selectFrom('ledger_hours')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('organization_id', '=', o)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await count(orgA)).toBe(0);
    expect(await count(orgB)).toBeGreaterThan(0);
  });
});
