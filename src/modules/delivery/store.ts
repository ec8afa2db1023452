// The delivery engine's queries (pipeline/delivery/engine-port.ts EngineStore), the leftover
// batches' (leftovers.ts), its housekeeping deletes and an organization's data deletion. Leases and due times use the
// database clock, shared by every dispatcher. Sets of rows go in as one JSON parameter
// (jsonb_to_recordset) or one multi-row insert: one statement per table per transaction.
import { sql, type Kysely } from 'kysely';
import { BODY_REF_PREFIX, type BodyLog } from '../../platform/bodylog/log.js';
import { keepBodies, loadBody } from '../../platform/bodylog/stored.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { EngineStore, OutboxRow, TapSession } from '../../pipeline/delivery/engine-port.js';
import type { RouteSpec } from '../../pipeline/route/types.js';
import { addLedger } from './ledger.js';

const json = (rows: unknown[]) => JSON.stringify(rows);
const ms = (n: number) => sql`(${n}::float8 * interval '1 millisecond')`;

/** Tables holding an organization's delivery data, with the column that picks rows for a bounded delete. */
export const ORG_DELIVERY_TABLES = [
  { table: 'lineage_attempts', key: 'id' },
  { table: 'lineage_copies', key: 'ctid' },
  { table: 'lineage_events', key: 'event_id' },
  { table: 'delivery_batches', key: 'id' },
  { table: 'dlq_events', key: 'id' },
  { table: 'ledger', key: 'ctid' },
  { table: 'ledger_hours', key: 'ctid' },
  { table: 'route_stats', key: 'ctid' },
] as const;
export type OrgDeliveryTable = (typeof ORG_DELIVERY_TABLES)[number]['table'];

/** bodies: the embedded body log, where the rows' compressed events go (the rows keep references). */
export function createDeliveryStore(db: Kysely<DB>, bodies?: BodyLog) {
  const q = () => executor(db);

  const engine: EngineStore = {
    async routesFingerprint(organizationId) {
      const { rows } = await sql<{ f: string }>`
        select count(*)::text || ':' || coalesce(max(updated_at)::text, '') || ':'
          || coalesce(sum(hashtext(id || ':' || position || ':' || version || ':' || enabled::text)), 0)::text as f
        from routes where organization_id = ${organizationId}`.execute(q());
      return rows[0]!.f;
    },

    async enabledRoutes(organizationId) {
      const rows = await q()
        .selectFrom('routes')
        .select([
          'id',
          'organization_id',
          'name',
          'position',
          'enabled',
          'condition',
          'transforms',
          'destination_ids',
          'final',
          'version',
        ])
        .where('organization_id', '=', organizationId)
        .where('enabled', '=', true)
        .orderBy('position')
        .orderBy('id')
        .execute();
      return rows as unknown as RouteSpec[];
    },

    async insertDeliveries(rows) {
      if (rows.length === 0) return;
      const events = await keepBodies(
        bodies,
        rows.map((r) => r.events),
      );
      // A few rows (one per destination) with large texts: bound parameters, no JSON to parse.
      await q()
        .insertInto('delivery_batches')
        .values(rows.map((r, i) => ({ ...r, events: events[i]! })))
        .onConflict((oc) => oc.columns(['source_batch_id', 'destination_id', 'kind']).doNothing())
        .execute();
    },

    addLedger: (entries, at) => addLedger(db, entries, at),

    async addRouteStats(rows, hour) {
      if (rows.length === 0) return;
      await sql`
        insert into route_stats (route_id, organization_id, hour, matched, sampled_out, copies)
        select v.route_id, v.organization_id, ${hour}::timestamptz, v.matched, v.sampled_out, v.copies
        from jsonb_to_recordset(${json(rows)}::jsonb) as v(route_id text, organization_id integer, matched bigint, sampled_out bigint, copies bigint)
        order by v.route_id
        on conflict (route_id, hour) do update set
          matched = route_stats.matched + excluded.matched,
          sampled_out = route_stats.sampled_out + excluded.sampled_out,
          copies = route_stats.copies + excluded.copies`.execute(q());
    },

    async insertLineage(events, copies) {
      if (events.length > 0) {
        await sql`
          insert into lineage_events (event_id, organization_id, integration_id, stream, mapping_version_id, received_at, normalized_batch_id, routes, filtered)
          select v.event_id, v.organization_id, v.integration_id, v.stream, v.mapping_version_id, v.received_at, v.normalized_batch_id, v.routes, v.filtered
          from jsonb_to_recordset(${json(events)}::jsonb) as v(event_id text, organization_id integer, integration_id integer, stream text,
            mapping_version_id text, received_at timestamptz, normalized_batch_id text, routes jsonb, filtered text)
          on conflict (event_id) do update set routes = excluded.routes, filtered = excluded.filtered, normalized_batch_id = excluded.normalized_batch_id`.execute(
          q(),
        );
      }
      if (copies.length > 0) {
        await sql`
          insert into lineage_copies (event_id, destination_id, delivery_batch_id, route_id, kind)
          select v.event_id, v.destination_id, v.delivery_batch_id, v.route_id, v.kind
          from jsonb_to_recordset(${json(copies)}::jsonb) as v(event_id text, destination_id text, delivery_batch_id text, route_id text, kind text)
          on conflict do nothing`.execute(q());
      }
    },

    async nextDeliveryDue(destinationId) {
      const { rows } = await sql<{ wait_ms: number | null }>`
        select (extract(epoch from (min(greatest(next_attempt_at, coalesce(leased_until, next_attempt_at))) - now())) * 1000)::float8 as wait_ms
        from delivery_batches where destination_id = ${destinationId}`.execute(q());
      const wait = rows[0]?.wait_ms;
      return wait == null ? null : Math.max(0, wait);
    },

    async claimDeliveries(destinationId, owner, budget, leaseMs) {
      const limit = Math.min(budget.events, 2_000);
      if (limit <= 0 || budget.bytes <= 0) return [];
      const { rows } = await sql<OutboxRow & { rn: number }>`
        with c as (
          select id, event_count, bytes, next_attempt_at from delivery_batches
          where destination_id = ${destinationId} and next_attempt_at <= now() and (leased_until is null or leased_until < now())
          order by next_attempt_at, id limit ${limit} for update skip locked
        ), w as (
          select id,
            row_number() over (order by next_attempt_at, id) as rn,
            sum(event_count) over (order by next_attempt_at, id) as ce,
            sum(bytes) over (order by next_attempt_at, id) as cb
          from c
        )
        update delivery_batches b set leased_until = now() + ${ms(leaseMs)}, lease_owner = ${owner}
        from w
        where b.id = w.id and ((w.rn = 1 and ${budget.firstAlways}) or (w.ce <= ${budget.events} and w.cb <= ${budget.bytes}))
        returning b.id, b.destination_id, b.organization_id, b.integration_id, b.stream, b.kind, b.event_count, b.bytes, b.event_ids, b.events,
          b.attempts, b.trace_parent, (extract(epoch from (now() - b.created_at)) * 1000)::float8 as age_ms, w.rn::int as rn`.execute(
        q(),
      );
      const claimed = rows.sort((a, b) => a.rn - b.rn).map(({ rn: _rn, ...row }) => row);
      await Promise.all(claimed.map(async (row) => (row.events = await loadBody(bodies, row.events as string))));
      return claimed;
    },

    async lockOwned(ids, owner) {
      if (ids.length === 0) return new Set();
      const rows = await q()
        .selectFrom('delivery_batches')
        .select('id')
        .where('id', 'in', ids)
        .where('lease_owner', '=', owner)
        .forUpdate()
        .execute();
      return new Set(rows.map((r) => r.id));
    },

    async deleteDeliveries(ids, owner) {
      if (ids.length === 0) return;
      await q().deleteFrom('delivery_batches').where('id', 'in', ids).where('lease_owner', '=', owner).execute();
    },

    async rewriteDeliveries(rows, owner) {
      if (rows.length === 0) return;
      const events = await keepBodies(
        bodies,
        rows.map((r) => r.content?.events ?? ''),
      );
      const flat = rows.map((r, i) => ({
        id: r.id,
        attempts: r.attempts,
        delay_ms: r.delay_ms,
        last_error: r.last_error,
        ...(r.content ? { ...r.content, events: events[i]! } : {}),
      }));
      await sql`
        update delivery_batches b set
          attempts = v.attempts,
          next_attempt_at = now() + v.delay_ms * interval '1 millisecond',
          leased_until = null,
          lease_owner = null,
          last_error = coalesce(v.last_error, b.last_error),
          event_count = coalesce(v.event_count, b.event_count),
          bytes = coalesce(v.bytes, b.bytes),
          event_ids = coalesce(v.event_ids, b.event_ids),
          events = coalesce(v.events, b.events)
        from jsonb_to_recordset(${json(flat)}::jsonb)
          as v(id text, attempts integer, delay_ms float8, last_error text, event_count integer, bytes integer, event_ids text, events text)
        where b.id = v.id and b.lease_owner = ${owner}`.execute(q());
    },

    async insertDlq(rows) {
      if (rows.length === 0) return;
      await sql`
        insert into dlq_events (id, destination_id, organization_id, integration_id, stream, event_id, delivery_batch_id, event, error_kind, reason, status_code, attempts)
        select v.id, v.destination_id, v.organization_id, v.integration_id, v.stream, v.event_id, v.delivery_batch_id, v.event, v.error_kind, v.reason, v.status_code, v.attempts
        from jsonb_to_recordset(${json(rows)}::jsonb) as v(id text, destination_id text, organization_id integer, integration_id integer, stream text,
          event_id text, delivery_batch_id text, event text, error_kind text, reason text, status_code integer, attempts integer)`.execute(
        q(),
      );
    },

    async addDestinationStats(d, hour) {
      await q()
        .insertInto('destination_stats')
        .values({
          destination_id: d.destination_id,
          hour,
          delivered: d.delivered,
          bytes: d.bytes,
          requests: d.requests,
          failed_requests: d.failed_requests,
          dead_lettered: d.dead_lettered,
          shadow_delivered: d.shadow_delivered,
          latency_ms_sum: d.latency_ms,
          latency_ms_max: d.latency_ms,
        })
        .onConflict((oc) =>
          oc.columns(['destination_id', 'hour']).doUpdateSet({
            delivered: sql`destination_stats.delivered + excluded.delivered`,
            bytes: sql`destination_stats.bytes + excluded.bytes`,
            requests: sql`destination_stats.requests + excluded.requests`,
            failed_requests: sql`destination_stats.failed_requests + excluded.failed_requests`,
            dead_lettered: sql`destination_stats.dead_lettered + excluded.dead_lettered`,
            shadow_delivered: sql`destination_stats.shadow_delivered + excluded.shadow_delivered`,
            latency_ms_sum: sql`destination_stats.latency_ms_sum + excluded.latency_ms_sum`,
            latency_ms_max: sql`greatest(destination_stats.latency_ms_max, excluded.latency_ms_max)`,
          }),
        )
        .execute();
    },

    async writeDestinationState(destinationId, breaker, attempt) {
      const failed = attempt !== null && !attempt.ok;
      await q()
        .insertInto('destination_state')
        .values({
          destination_id: destinationId,
          breaker_state: breaker.state,
          consecutive_failures: breaker.consecutive_failures,
          opened_at: breaker.opened_at,
          last_attempt_at: attempt?.at ?? null,
          last_success_at: attempt?.ok ? attempt.at : null,
          last_error: failed ? attempt.error : null,
          last_error_at: failed ? attempt.at : null,
          updated_at: sql`now()`,
        })
        .onConflict((oc) =>
          oc.column('destination_id').doUpdateSet({
            breaker_state: sql`excluded.breaker_state`,
            consecutive_failures: sql`excluded.consecutive_failures`,
            opened_at: sql`excluded.opened_at`,
            last_attempt_at: sql`coalesce(excluded.last_attempt_at, destination_state.last_attempt_at)`,
            last_success_at: sql`coalesce(excluded.last_success_at, destination_state.last_success_at)`,
            last_error: sql`coalesce(excluded.last_error, destination_state.last_error)`,
            last_error_at: sql`coalesce(excluded.last_error_at, destination_state.last_error_at)`,
            updated_at: sql`now()`,
          }),
        )
        .execute();
    },

    async insertAttempts(rows) {
      if (rows.length === 0) return;
      await sql`
        insert into lineage_attempts (id, delivery_batch_id, destination_id, attempt, outcome, status_code, error, duration_ms)
        select v.id, v.delivery_batch_id, v.destination_id, v.attempt, v.outcome, v.status_code, v.error, v.duration_ms
        from jsonb_to_recordset(${json(rows)}::jsonb) as v(id text, delivery_batch_id text, destination_id text, attempt integer,
          outcome text, status_code integer, error text, duration_ms integer)`.execute(q());
    },

    async releaseDeliveries(destinationId, owner, ids) {
      if (ids && ids.length === 0) return;
      let query = q()
        .updateTable('delivery_batches')
        .set({ leased_until: null, lease_owner: null })
        .where('destination_id', '=', destinationId)
        .where('lease_owner', '=', owner);
      if (ids) query = query.where('id', 'in', ids);
      await query.execute();
    },

    async openTaps(destinationIds): Promise<TapSession[]> {
      if (destinationIds.length === 0) return [];
      const { rows } = await sql<TapSession>`
        select s.id, s.destination_id, (s.max_events - (select count(*) from tap_samples t where t.session_id = s.id))::int as remaining
        from tap_sessions s
        where s.expires_at > now() and s.destination_id in (${sql.join(destinationIds)})`.execute(q());
      return rows.filter((r) => r.remaining > 0);
    },

    async insertTapSamples(rows) {
      if (rows.length === 0) return;
      await q().insertInto('tap_samples').values(rows).execute();
    },

    async lag() {
      const { rows } = await sql<{ partition: string; events: number }>`
        select 'routing' as partition, coalesce(sum(event_count), 0)::float8 as events from normalized_batches where route_state = 'pending'
        union all
        select 'destination:' || destination_id, sum(event_count)::float8 from delivery_batches group by destination_id`.execute(
        q(),
      );
      return rows.map((r) => ({ partition: r.partition, events: Number(r.events) }));
    },
  };

  /** Normalized batches an earlier version left pending (leftovers.ts, decision 0064). */
  const leftovers = {
    async read(batchId: string) {
      return q()
        .selectFrom('normalized_batches')
        .select(['id', 'organization_id', 'integration_id', 'stream', 'event_count', 'events'])
        .where('id', '=', batchId)
        .where('route_state', '=', 'pending')
        .executeTakeFirst();
    },
    /** Marks the batch done (no events kept); false when it was not pending any more. */
    async markRouted(batchId: string): Promise<boolean> {
      const res = await q()
        .updateTable('normalized_batches')
        .set({ route_state: 'done', events: '' })
        .where('id', '=', batchId)
        .where('route_state', '=', 'pending')
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
  };

  /** The body-log segments the outbox's rows name. */
  async function bodySegments(): Promise<number[]> {
    const { rows } = await sql<{ seq: number }>`
      select distinct split_part(events, ':', 2)::int as seq from delivery_batches where events like ${`${BODY_REF_PREFIX}%`}`.execute(
      q(),
    );
    return rows.map((r) => r.seq);
  }

  /** Deletes up to `limit` rows of `table` older than `before` (column `column`); returns how many. */
  async function purgeOlder(table: string, column: string, key: string, before: Date, limit: number): Promise<number> {
    const res = await sql`
      delete from ${sql.table(table)} where ${sql.ref(key)} in (
        select ${sql.ref(key)} from ${sql.table(table)} where ${sql.ref(column)} < ${before}::timestamptz limit ${limit})`.execute(
      q(),
    );
    return Number(res.numAffectedRows ?? 0);
  }

  return {
    engine,
    leftovers,
    bodySegments,
    purgeDlq: (before: Date, limit: number) => purgeOlder('dlq_events', 'created_at', 'id', before, limit),
    purgeLineage: async (before: Date, limit: number) =>
      (await purgeOlder('lineage_attempts', 'at', 'id', before, limit)) +
      (await purgeOlder('lineage_copies', 'created_at', 'ctid', before, limit)) +
      (await purgeOlder('lineage_events', 'created_at', 'event_id', before, limit)),
    purgeTaps: async (before: Date, limit: number) =>
      (await purgeOlder('tap_samples', 'at', 'id', before, limit)) +
      (await purgeOlder('tap_sessions', 'expires_at', 'id', before, limit)),
    purgeStats: async (before: Date, limit: number) =>
      (await purgeOlder('route_stats', 'hour', 'ctid', before, limit)) +
      (await purgeOlder('destination_stats', 'hour', 'ctid', before, limit)),
    /** The hourly ledger's rows of hours before `before` (ledger_hours_hour index). */
    purgeLedgerHours: (before: Date, limit: number) => purgeOlder('ledger_hours', 'hour', 'ctid', before, limit),

    /** Deletes up to `limit` rows of an organization from one table; returns how many. */
    async deleteOrgRows(table: OrgDeliveryTable, key: string, organizationId: number, limit: number): Promise<number> {
      // Lineage copies and attempts carry no organization: found through the organization's lineage events.
      const owned =
        table === 'lineage_copies'
          ? sql`event_id in (select event_id from lineage_events where organization_id = ${organizationId})`
          : table === 'lineage_attempts'
            ? sql`delivery_batch_id in (select c.delivery_batch_id from lineage_copies c join lineage_events e on e.event_id = c.event_id where e.organization_id = ${organizationId})`
            : sql`organization_id = ${organizationId}`;
      const res = await sql`
        delete from ${sql.table(table)} where ${sql.ref(key)} in (
          select ${sql.ref(key)} from ${sql.table(table)} where ${owned} limit ${limit})`.execute(q());
      return Number(res.numAffectedRows ?? 0);
    },
  };
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;

export interface BacklogRow {
  destination_id: string;
  name: string;
  delivery: Record<string, unknown>;
  integration_id: number;
  events: number;
  bytes: number;
}

/**
 * The outbox per destination and integration (every kind: a shadow copy waits on the disk as
 * well), with the destination's name and delivery settings: what the backlog gate reads.
 */
export async function readBacklog(db: Kysely<DB>): Promise<BacklogRow[]> {
  const { rows } = await sql<BacklogRow>`
    select b.destination_id, d.name, d.delivery, b.integration_id, b.events::float8 as events, b.bytes::float8 as bytes
    from (select destination_id, integration_id, sum(event_count) as events, sum(bytes) as bytes from delivery_batches group by 1, 2) b
    join destinations d on d.id = b.destination_id`.execute(executor(db));
  return rows.map((r) => ({ ...r, events: Number(r.events), bytes: Number(r.bytes) }));
}
