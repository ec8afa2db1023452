// Ingestion tokens (one per integration, stored as an HMAC) and the per-stream counters
// the ingest status reads. Integrations themselves belong to the integrations module.
import { sql, type Kysely, type Selectable } from 'kysely';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { IngestionTokensTable } from '../../platform/db/schema.js';

export type IngestTokenRow = Selectable<IngestionTokensTable>;

/** What a push needs to know about the token's integration. */
export interface TokenTarget {
  integration_id: number;
  organization_id: number;
  token_hash: string;
  platform: string;
  integration_active: boolean;
  organization_active: boolean;
  /** The integration config's `text_streams` (JSON as stored; only that field of the config is read). */
  text_streams: unknown;
}

export interface AcceptedRow {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  event_count: number;
  accepted_at: Date;
}

export interface StreamStats {
  stream: string;
  events_in: number;
  bytes_in: number;
  last_event_at: Date | null;
}

export function createIngestStore(db: Kysely<DB>) {
  const q = () => executor(db);

  return {
    async byHash(hash: string): Promise<TokenTarget | undefined> {
      return q()
        .selectFrom('ingestion_tokens as t')
        .innerJoin('integrations as i', 'i.id', 't.integration_id')
        .innerJoin('organizations as o', 'o.id', 'i.organization_id')
        .select([
          't.integration_id',
          'i.organization_id',
          't.token_hash',
          'i.platform',
          'i.is_active as integration_active',
          'o.is_active as organization_active',
          sql<unknown>`i.config -> 'text_streams'`.as('text_streams'),
        ])
        .where('t.token_hash', '=', hash)
        .executeTakeFirst();
    },

    /**
     * An accepted batch's row (see accept.ts); joins the open transaction. A redelivered id
     * is ignored. asyncCommit: the transaction's commit does not wait for the WAL flush
     * (set_config(..., true) is local to the transaction), for when the queue job in Redis,
     * not this row, is the durable acceptance.
     */
    async addAccepted(row: AcceptedRow, options: { asyncCommit?: boolean } = {}): Promise<void> {
      await sql`
        insert into accepted_batches (id, organization_id, integration_id, stream, event_count, accepted_at)
        select ${row.id}, ${row.organization_id}, ${row.integration_id}, ${row.stream}, ${row.event_count}, ${row.accepted_at}::timestamptz
        ${options.asyncCommit ? sql`from (select set_config('synchronous_commit', 'off', true)) as relaxed` : sql``}
        on conflict (id) do nothing`.execute(q());
    },

    async tokenOf(integrationId: number): Promise<IngestTokenRow | undefined> {
      return q()
        .selectFrom('ingestion_tokens')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .executeTakeFirst();
    },

    /**
     * Locks the integration's row for the rest of the transaction: two concurrent creations
     * for an integration that has no token yet would otherwise both answer 201, and only the
     * second token would work.
     */
    async lockIntegration(integrationId: number): Promise<void> {
      await q().selectFrom('integrations').select('id').where('id', '=', integrationId).forUpdate().executeTakeFirst();
    },

    /** Creates or replaces the integration's token; the old hash stops matching at once. */
    async replace(
      values: {
        integration_id: number;
        organization_id: number;
        token_prefix: string;
        token_hash: string;
        created_by: number | null;
      },
      now: Date,
    ): Promise<IngestTokenRow> {
      return q()
        .insertInto('ingestion_tokens')
        .values({ ...values, created_at: now, last_used_at: null })
        .onConflict((oc) =>
          oc.column('integration_id').doUpdateSet({
            organization_id: values.organization_id,
            token_prefix: values.token_prefix,
            token_hash: values.token_hash,
            created_by: values.created_by,
            created_at: now,
            last_used_at: null,
          }),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** Deletes the integration's token; its hash, or undefined when there was none. */
    async remove(integrationId: number): Promise<string | undefined> {
      const row = await q()
        .deleteFrom('ingestion_tokens')
        .where('integration_id', '=', integrationId)
        .returning('token_hash')
        .executeTakeFirst();
      return row?.token_hash;
    },

    /** Batched last-use times, keyed by token hash (a rotated token's uses are dropped). */
    async touch(batch: Map<string, Date>): Promise<void> {
      if (batch.size === 0) return;
      const hashes = [...batch.keys()];
      const times = hashes.map((h) => (batch.get(h) as Date).toISOString());
      await sql`update ingestion_tokens set last_used_at = v.t
        from unnest(${hashes}::text[], ${times}::timestamptz[]) as v(h, t)
        where ingestion_tokens.token_hash = v.h and (ingestion_tokens.last_used_at is null or ingestion_tokens.last_used_at < v.t)`.execute(
        q(),
      );
    },

    /** Per-stream sums of the counters from `sinceDay` (UTC YYYY-MM-DD) on. */
    async streamStats(integrationId: number, sinceDay: string): Promise<StreamStats[]> {
      const rows = await q()
        .selectFrom('stream_counters')
        .select((eb) => [
          'stream',
          eb.fn.sum<string | number>('events_in').as('events_in'),
          eb.fn.sum<string | number>('bytes_in').as('bytes_in'),
          eb.fn.max('last_event_at').as('last_event_at'),
        ])
        .where('integration_id', '=', integrationId)
        .where('day', '>=', sinceDay)
        .groupBy('stream')
        .orderBy('stream')
        .execute();
      return rows.map((r) => ({
        stream: r.stream,
        events_in: Number(r.events_in),
        bytes_in: Number(r.bytes_in),
        last_event_at: r.last_event_at ? new Date(r.last_event_at) : null,
      }));
    },
  };
}

export type IngestStore = ReturnType<typeof createIngestStore>;

/** Events accepted and not yet normalized, every organization (the ledger's pending_normalization). */
export async function readPendingEvents(db: Kysely<DB>): Promise<number> {
  const { rows } = await sql<{
    n: string;
  }>`select coalesce(sum(event_count), 0)::text as n from accepted_batches where event_count > 0`.execute(executor(db));
  return Number(rows[0]?.n ?? 0);
}
