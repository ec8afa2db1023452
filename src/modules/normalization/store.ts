// Normalization's queries: the registry's reads (definitions, live documents, policies and
// their fingerprints), the per-batch writes of the worker, the aggregate flushes and the
// housekeeping deletes. Sets of rows go in as one JSON parameter (jsonb_to_recordset): one
// statement per table whatever the batch size, and no bind-parameter limit to hit.
import { sql, type Kysely } from 'kysely';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { ledgerDay, ledgerHour } from '../delivery/ledger.js';

export interface DefinitionEntry {
  id: string;
  organization_id: number | null;
  platform: string;
  stream: string;
  live_version_id: string | null;
}

export interface Fingerprints {
  mappings: string;
  policies: string;
}

export interface BatchRow {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  source: string;
  event_count: number;
  flagged_count: number;
  quarantined_count: number;
  bytes: number;
  events: string;
  route_state: string;
  created_at: Date;
}

export interface QuarantineRow {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  received_at: string;
  raw: Record<string, unknown>;
  error_kind: string;
  error_detail: string;
  mapping_version_id: string | null;
}

export interface CounterDelta {
  organization_id: number;
  integration_id: number;
  stream: string;
  /** The moment counted: its UTC day keys stream_counters, its UTC hour the hourly ledger. */
  at: Date;
  events_in: number;
  bytes_in: number;
  normalized: number;
  flagged: number;
  quarantined: number;
  /** Quarantined events this reprocess normalized (they leave the quarantine term of the ledger). */
  quarantine_released?: number;
  /** Collected events dropped as seen within the deduplication period. */
  duplicates?: number;
  last_event_at: Date | null;
}

export interface DriftRow {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  path: string;
  value_type: string;
  count: number;
  example: string | null;
  first_seen_at: string;
  last_seen_at: string;
}

export interface ComplianceRow {
  organization_id: number;
  integration_id: number;
  class_uid: number;
  day: string;
  valid: number;
  invalid: number;
  last_error: string | null;
  last_invalid_at: string | null;
}

export interface SampleRow {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  received_at: string;
  raw: Record<string, unknown>;
}

/** Tables holding an organization's normalization data, deleted with the organization. */
export const ORG_TABLES = [
  'normalized_batches',
  'quarantine_events',
  'drift_fields',
  'raw_samples',
  'ocsf_compliance',
  'ocsf_policies',
  'stream_counters',
  'mapping_definitions',
  'ingestion_tokens',
  'accepted_batches',
] as const;
export type OrgTable = (typeof ORG_TABLES)[number];

// A column that picks out rows for a bounded delete (ctid where the key spans columns).
const ROW_KEY: Record<OrgTable, string> = {
  normalized_batches: 'id',
  quarantine_events: 'id',
  drift_fields: 'id',
  raw_samples: 'id',
  ocsf_compliance: 'ctid',
  ocsf_policies: 'organization_id',
  stream_counters: 'ctid',
  mapping_definitions: 'id',
  ingestion_tokens: 'integration_id',
  accepted_batches: 'id',
};

const json = (rows: unknown[]) => JSON.stringify(rows);

export function createNormalizationStore(db: Kysely<DB>) {
  const q = () => executor(db);

  async function purgeExpired(
    table: 'quarantine_events' | 'normalized_batches',
    now: Date,
    defaultDays: number,
    limit: number,
  ): Promise<number> {
    // A batch still pending routing holds events not yet counted anywhere else: routing consumes it, retention never does.
    const routable = table === 'normalized_batches' ? sql`and t.route_state <> 'pending'` : sql``;
    const res = await sql`
      delete from ${sql.table(table)} where id in (
        select t.id from ${sql.table(table)} t
        left join organizations o on o.id = t.organization_id
        where t.created_at < ${now}::timestamptz - make_interval(days => coalesce(o.retention_days, ${defaultDays})) ${routable}
        limit ${limit})`.execute(q());
    return Number(res.numAffectedRows ?? 0);
  }

  return {
    /** Changes whenever a row is added, removed or touched (any updated_at or live version). */
    async fingerprints(): Promise<Fingerprints> {
      const { rows } = await sql<{ mappings: string; policies: string }>`
        select
          (select count(*)::text || ':' || coalesce(sum(hashtext(id || ':' || coalesce(live_version_id, '') || ':' || updated_at::text)), 0)::text
             from mapping_definitions) as mappings,
          (select count(*)::text || ':' || coalesce(sum(hashtext(organization_id::text || ':' || mode || ':' || updated_at::text)), 0)::text
             from ocsf_policies) as policies`.execute(q());
      return rows[0]!;
    },

    /** The integrations whose config lists streams of already-OCSF events (`ocsf_streams`, as stored). */
    async ocsfStreams(): Promise<{ id: number; ocsf_streams: unknown }[]> {
      return q()
        .selectFrom('integrations')
        .select(['id', sql<unknown>`config -> 'ocsf_streams'`.as('ocsf_streams')])
        .where(sql<boolean>`jsonb_typeof(config -> 'ocsf_streams') = 'array'`)
        .execute();
    },

    async definitions(): Promise<DefinitionEntry[]> {
      return q()
        .selectFrom('mapping_definitions')
        .select(['id', 'organization_id', 'platform', 'stream', 'live_version_id'])
        .execute();
    },

    async documents(versionIds: string[]): Promise<{ id: string; document: Record<string, unknown> }[]> {
      if (versionIds.length === 0) return [];
      return q().selectFrom('mapping_versions').select(['id', 'document']).where('id', 'in', versionIds).execute();
    },

    async policies(): Promise<{ organization_id: number; mode: 'strict' | 'lenient' }[]> {
      return q().selectFrom('ocsf_policies').select(['organization_id', 'mode']).execute();
    },

    /** An organization's definition without a live version, unless one exists already. */
    async createDefinition(
      d: { id: string; organization_id: number; platform: string; stream: string; name: string },
      now: Date,
    ): Promise<void> {
      await q()
        .insertInto('mapping_definitions')
        .values({ ...d, live_version_id: null, created_at: now, updated_at: now })
        .onConflict((oc) => oc.doNothing())
        .execute();
    },

    async integrationPlatforms(ids: number[]): Promise<Map<number, string>> {
      if (ids.length === 0) return new Map();
      const rows = await q().selectFrom('integrations').select(['id', 'platform']).where('id', 'in', ids).execute();
      return new Map(rows.map((r) => [r.id, r.platform]));
    },

    /** The organization's most recent raw samples with their integration's platform (enrichment dry-runs). */
    async recentSamples(organizationId: number, limit: number) {
      return q()
        .selectFrom('raw_samples as s')
        .innerJoin('integrations as i', 'i.id', 's.integration_id')
        .select(['s.integration_id', 's.stream', 's.received_at', 's.raw', 'i.platform'])
        .where('s.organization_id', '=', organizationId)
        .orderBy('s.received_at', 'desc')
        .limit(limit)
        .execute();
    },

    /** False when the batch was stored before (a redelivered job): the caller then writes nothing else. */
    async insertBatch(row: BatchRow): Promise<boolean> {
      const res = await q()
        .insertInto('normalized_batches')
        .values(row)
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return res !== undefined;
    },

    /**
     * The batch leaves the ledger's queued events (ingest accept.ts wrote its row); joins the
     * open transaction. On BullMQ a worker may take the job before the accepting transaction
     * has committed its row: the delete then finds nothing, and the insert of a 0-event
     * marker waits for that transaction and zeroes its row (or stays, if it rolled back).
     * Markers are purged with the routed batches (purgeBatches).
     */
    async settleAccepted(b: {
      id: string;
      organization_id: number;
      integration_id: number;
      stream: string;
    }): Promise<void> {
      await sql`
        with gone as (delete from accepted_batches where id = ${b.id} returning 1)
        insert into accepted_batches (id, organization_id, integration_id, stream, event_count, accepted_at)
        select ${b.id}, ${b.organization_id}, ${b.integration_id}, ${b.stream}, 0, now()
        where not exists (select 1 from gone)
        on conflict (id) do update set event_count = 0`.execute(q());
    },

    async insertQuarantine(rows: QuarantineRow[], now: Date): Promise<void> {
      if (rows.length === 0) return;
      await sql`
        insert into quarantine_events (id, organization_id, integration_id, stream, received_at, raw, error_kind, error_detail, mapping_version_id, created_at, updated_at)
        select v.id, v.organization_id, v.integration_id, v.stream, v.received_at, v.raw, v.error_kind, v.error_detail, v.mapping_version_id, ${now}::timestamptz, ${now}::timestamptz
        from jsonb_to_recordset(${json(rows)}::jsonb) as v(id text, organization_id integer, integration_id integer, stream text,
          received_at timestamptz, raw jsonb, error_kind text, error_detail text, mapping_version_id text)
        on conflict (id) do nothing`.execute(q());
    },

    /** The keys among `keys` accepted for this stream since `since` (the deduplication period). */
    async seenKeys(integrationId: number, stream: string, keys: string[], since: Date): Promise<string[]> {
      if (keys.length === 0) return [];
      const rows = await sql<{ key: string }>`
        select key from collected_keys
        where integration_id = ${integrationId} and stream = ${stream} and seen_at >= ${since}::timestamptz
          and key = any(${keys}::text[])`.execute(q());
      return rows.rows.map((r) => r.key);
    },

    /**
     * Records the keys as accepted now; a key seen before `since` counts as new again. Returns
     * how many were recorded: fewer than given means another batch took some meanwhile.
     */
    async rememberKeys(integrationId: number, stream: string, keys: string[], now: Date, since: Date): Promise<number> {
      if (keys.length === 0) return 0;
      const res = await sql<{ key: string }>`
        insert into collected_keys (integration_id, stream, key, seen_at)
        select ${integrationId}, ${stream}, k, ${now}::timestamptz from unnest(${keys}::text[]) as k
        on conflict (integration_id, stream, key) do update set seen_at = excluded.seen_at
          where collected_keys.seen_at < ${since}::timestamptz
        returning key`.execute(q());
      return res.rows.length;
    },

    /**
     * Adds to the day's counters of a stream and, in the same statement, the dashboard's
     * terms (events_in, quarantined, quarantine_released) to the hourly ledger for the
     * hour of `at`: the hour and the day are written together or not at all. The hour's
     * rows go in term order; PostgreSQL's executor runs the unreferenced WITH after the
     * main insert (counters' row, then hour rows), the same way for every writer.
     */
    async addCounters(d: CounterDelta): Promise<void> {
      const terms = (
        [
          ['events_in', d.events_in],
          ['quarantine_released', d.quarantine_released ?? 0],
          ['quarantined', d.quarantined],
        ] as const
      ).filter(([, n]) => n !== 0);
      const hours =
        terms.length === 0
          ? sql``
          : sql`with hours as (
              insert into ledger_hours (organization_id, integration_id, stream, hour, term, count)
              select ${d.organization_id}, ${d.integration_id}, ${d.stream}, ${ledgerHour(d.at)}::timestamptz, t.term, t.count
              from (values ${sql.join(terms.map(([term, n]) => sql`(${term}::text, ${n}::bigint)`))}) as t(term, count)
              order by t.term collate "C"
              on conflict (integration_id, stream, hour, term)
              do update set count = ledger_hours.count + excluded.count
            )`;
      await sql`${hours}
        insert into stream_counters (organization_id, integration_id, stream, day, events_in, bytes_in, normalized, flagged, quarantined, quarantine_released, duplicates, last_event_at)
        values (${d.organization_id}, ${d.integration_id}, ${d.stream}, ${ledgerDay(d.at)}, ${d.events_in}, ${d.bytes_in}, ${d.normalized}, ${d.flagged},
          ${d.quarantined}, ${d.quarantine_released ?? 0}, ${d.duplicates ?? 0}, ${d.last_event_at}::timestamptz)
        on conflict (integration_id, stream, day) do update set
          events_in = stream_counters.events_in + excluded.events_in,
          bytes_in = stream_counters.bytes_in + excluded.bytes_in,
          normalized = stream_counters.normalized + excluded.normalized,
          flagged = stream_counters.flagged + excluded.flagged,
          quarantined = stream_counters.quarantined + excluded.quarantined,
          quarantine_released = stream_counters.quarantine_released + excluded.quarantine_released,
          duplicates = stream_counters.duplicates + excluded.duplicates,
          -- greatest() ignores nulls: a delta without events keeps the last time.
          last_event_at = greatest(stream_counters.last_event_at, excluded.last_event_at)`.execute(q());
    },

    /** New fields start 'new'; a known one adds to its count and refreshes type and example, its status unchanged. */
    async upsertDrift(rows: DriftRow[], now: Date): Promise<void> {
      if (rows.length === 0) return;
      await sql`
        insert into drift_fields (id, organization_id, integration_id, stream, path, value_type, count, example, first_seen_at, last_seen_at, updated_at)
        select v.id, v.organization_id, v.integration_id, v.stream, v.path, v.value_type, v.count, v.example, v.first_seen_at, v.last_seen_at, ${now}::timestamptz
        from jsonb_to_recordset(${json(rows)}::jsonb) as v(id text, organization_id integer, integration_id integer, stream text, path text,
          value_type text, count bigint, example text, first_seen_at timestamptz, last_seen_at timestamptz)
        where exists (select 1 from integrations i where i.id = v.integration_id)
        on conflict (integration_id, stream, path) do update set
          count = drift_fields.count + excluded.count,
          value_type = excluded.value_type,
          example = excluded.example,
          last_seen_at = greatest(drift_fields.last_seen_at, excluded.last_seen_at),
          updated_at = excluded.updated_at`.execute(q());
    },

    async upsertCompliance(rows: ComplianceRow[]): Promise<void> {
      if (rows.length === 0) return;
      await sql`
        insert into ocsf_compliance (organization_id, integration_id, class_uid, day, valid, invalid, last_error, last_invalid_at)
        select v.organization_id, v.integration_id, v.class_uid, v.day, v.valid, v.invalid, v.last_error, v.last_invalid_at
        from jsonb_to_recordset(${json(rows)}::jsonb) as v(organization_id integer, integration_id integer, class_uid integer, day text,
          valid bigint, invalid bigint, last_error text, last_invalid_at timestamptz)
        on conflict (integration_id, class_uid, day) do update set
          valid = ocsf_compliance.valid + excluded.valid,
          invalid = ocsf_compliance.invalid + excluded.invalid,
          last_error = coalesce(excluded.last_error, ocsf_compliance.last_error),
          last_invalid_at = greatest(ocsf_compliance.last_invalid_at, excluded.last_invalid_at)`.execute(q());
    },

    async insertSamples(rows: SampleRow[]): Promise<void> {
      if (rows.length === 0) return;
      await sql`
        insert into raw_samples (id, organization_id, integration_id, stream, received_at, raw)
        select v.id, v.organization_id, v.integration_id, v.stream, v.received_at, v.raw
        from jsonb_to_recordset(${json(rows)}::jsonb) as v(id text, organization_id integer, integration_id integer, stream text, received_at timestamptz, raw jsonb)
        where exists (select 1 from integrations i where i.id = v.integration_id)
        on conflict (id) do nothing`.execute(q());
    },

    /** Deletes up to `limit` quarantined events older than their organization's retention; returns how many. */
    purgeQuarantine: (now: Date, defaultDays: number, limit: number) =>
      purgeExpired('quarantine_events', now, defaultDays, limit),

    /**
     * Deletes up to `limit` routed normalized batches older than their organization's
     * retention (the rows left as done markers); pending ones are never deleted.
     */
    purgeBatches: async (now: Date, defaultDays: number, limit: number) => {
      // settleAccepted's markers only stand in for a transaction in flight: an hour is plenty.
      await sql`delete from accepted_batches where event_count = 0 and accepted_at < ${now}::timestamptz - interval '1 hour'`.execute(
        q(),
      );
      return purgeExpired('normalized_batches', now, defaultDays, limit);
    },

    /** Deletes up to `limit` raw samples beyond the newest `keep` of their stream or older than `before`. */
    async trimSamples(keep: number, before: Date, limit: number): Promise<number> {
      const res = await sql`
        delete from raw_samples where id in (
          select id from (
            select id, received_at, row_number() over (partition by integration_id, stream order by received_at desc, id desc) as rank
            from raw_samples) ranked
          where ranked.rank > ${keep} or ranked.received_at < ${before}::timestamptz
          limit ${limit})`.execute(q());
      return Number(res.numAffectedRows ?? 0);
    },

    /** Deletes up to `limit` rows of an organization from one table; returns how many. */
    async deleteOrgRows(table: OrgTable, organizationId: number, limit: number): Promise<number> {
      const keyCol = ROW_KEY[table];
      const res = await sql`
        delete from ${sql.table(table)} where ${sql.ref(keyCol)} in (
          select ${sql.ref(keyCol)} from ${sql.table(table)} where organization_id = ${organizationId} limit ${limit})`.execute(
        q(),
      );
      return Number(res.numAffectedRows ?? 0);
    },
  };
}

export type NormalizationStore = ReturnType<typeof createNormalizationStore>;
