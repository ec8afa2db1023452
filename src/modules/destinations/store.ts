// Destinations: organization-owned or global (organization_id null) rows. A caller sees
// its organizations' destinations and the global ones. The encrypted credential is read
// only by credentialOf() and the re-encryption sweep: every other query leaves it out.
import { sql, type Kysely, type SqlBool } from 'kysely';
import { AppError } from '../../core/errors.js';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { afterCommit, executor } from '../../platform/db/ambient.js';
import { organizationLookup } from '../../platform/db/organizations.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';
import type { AuditRow } from '../audit/store.js';
import { addLedger, type LedgerDelta } from '../delivery/ledger.js';

export interface DestinationRow {
  id: string;
  organization_id: number | null;
  name: string;
  description: string;
  type: string;
  config: Record<string, unknown>;
  delivery: Record<string, unknown>;
  enabled: boolean;
  disabled_reason: string | null;
  has_credential: boolean;
  credential_updated_at: Date | null;
  shadow_destination_id: string | null;
  version: number;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface DestinationFilter {
  organizationId?: number;
  type?: string;
  enabled?: boolean;
  global?: boolean;
}

export interface NewDestination {
  id: string;
  organization_id: number | null;
  name: string;
  description: string;
  type: string;
  config: Record<string, unknown>;
  delivery: Record<string, unknown>;
  enabled: boolean;
  credential: string | null;
  credential_key_id: string | null;
  credential_updated_at: Date | null;
  created_by: number | null;
}

/** Fields a change may set; version and updated_at move with every change. */
export interface DestinationPatch {
  name?: string;
  description?: string;
  config?: Record<string, unknown>;
  delivery?: Record<string, unknown>;
  enabled?: boolean;
  disabled_reason?: string | null;
  credential?: string | null;
  credential_key_id?: string | null;
  credential_updated_at?: Date | null;
  shadow_destination_id?: string | null;
}

export interface OutboxRemoved {
  organization_id: number;
  integration_id: number;
  stream: string;
  kind: string;
  event_count: number;
}

export interface SealedRow {
  id: string;
  credential: string;
  credential_key_id: string | null;
}

/** The credential operations' audit entries: rotate, revoke, test, and a create that set one. */
export const CREDENTIAL_OPERATIONS = [
  'destinations.credential_rotate',
  'destinations.credential_revoke',
  'destinations.test',
] as const;

const COLUMNS = [
  'd.id',
  'd.organization_id',
  'd.name',
  'd.description',
  'd.type',
  'd.config',
  'd.delivery',
  'd.enabled',
  'd.disabled_reason',
  'd.credential_updated_at',
  'd.shadow_destination_id',
  'd.version',
  'd.created_by',
  'd.created_at',
  'd.updated_at',
] as const;

export const nameTaken = (name: string) =>
  new AppError('destination.name_taken', {
    detail: `A destination named "${name}" already exists here`,
    details: { field: 'name' },
  });

export function createDestinationStore(db: Kysely<DB>) {
  const q = () => executor(db);
  // This process's writes, told once they committed (the dispatcher refreshes its lanes at once).
  const listeners = new Set<() => void>();
  const changed = () =>
    afterCommit(async () => {
      for (const listener of listeners) listener();
    });
  const visible = (scope: Scope) => sql<SqlBool>`(d.organization_id is null or ${scoped(scope, 'd.organization_id')})`;
  const from = () => q().selectFrom('destinations as d');
  const select = (base: ReturnType<typeof from>) =>
    base.select([...COLUMNS, sql<boolean>`d.credential is not null`.as('has_credential')]);
  const asRow = (
    r: Omit<DestinationRow, 'config' | 'delivery'> & { config: unknown; delivery: unknown },
  ): DestinationRow => ({
    ...r,
    config: (r.config ?? {}) as Record<string, unknown>,
    delivery: (r.delivery ?? {}) as Record<string, unknown>,
  });

  return {
    async list(
      scope: Scope,
      f: DestinationFilter,
      page: OffsetPage,
    ): Promise<{ items: DestinationRow[]; total: number }> {
      let base = from().where(visible(scope));
      if (f.organizationId !== undefined) base = base.where('d.organization_id', '=', f.organizationId);
      if (f.type !== undefined) base = base.where('d.type', '=', f.type);
      if (f.enabled !== undefined) base = base.where('d.enabled', '=', f.enabled);
      if (f.global === true) base = base.where('d.organization_id', 'is', null);
      if (f.global === false) base = base.where('d.organization_id', 'is not', null);
      const [rows, count] = await Promise.all([
        select(base)
          .orderBy(sql`lower(d.name)`)
          .orderBy(sql`coalesce(d.organization_id, 0)`)
          .orderBy('d.id')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(asRow), total: Number(count.n) };
    },

    /** The row if the scope sees it; `lock` holds it for the rest of the transaction. */
    async get(scope: Scope, id: string, lock = false): Promise<DestinationRow | undefined> {
      if (lock) await q().selectFrom('destinations').select('id').where('id', '=', id).forUpdate().execute();
      const row = await select(from().where(visible(scope)).where('d.id', '=', id)).executeTakeFirst();
      return row ? asRow(row) : undefined;
    },

    /** Every destination, for the dispatchers (no scope: they serve every organization). */
    async all(): Promise<DestinationRow[]> {
      return (await select(from()).orderBy('d.id').execute()).map(asRow);
    },

    /** The shadow target of a destination (any organization: the cycle check walks the chain); undefined when it does not exist. */
    async shadowOf(id: string): Promise<string | null | undefined> {
      const row = await q()
        .selectFrom('destinations')
        .select('shadow_destination_id')
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? row.shadow_destination_id : undefined;
    },

    ...organizationLookup(db),

    async nameExists(organizationId: number | null, name: string, exceptId?: string): Promise<boolean> {
      let query = q()
        .selectFrom('destinations')
        .select('id')
        .where(sql<SqlBool>`coalesce(organization_id, 0) = ${organizationId ?? 0}`)
        .where(sql<SqlBool>`lower(name) = lower(${name})`);
      if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
      return (await query.executeTakeFirst()) !== undefined;
    },

    /** Calls listener after each committed write of this process to a destination; returns the unsubscribe. */
    onChange(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    /** Whether the organization has a destination of the type. */
    async typeExists(organizationId: number, type: string): Promise<boolean> {
      return (
        (await q()
          .selectFrom('destinations')
          .select('id')
          .where('organization_id', '=', organizationId)
          .where('type', '=', type)
          .executeTakeFirst()) !== undefined
      );
    },

    async insert(row: NewDestination, now: Date): Promise<void> {
      try {
        await q()
          .insertInto('destinations')
          .values({
            ...row,
            config: JSON.stringify(row.config),
            delivery: JSON.stringify(row.delivery),
            created_at: now,
            updated_at: now,
          })
          .execute();
        await changed();
      } catch (err) {
        // Two creations racing past nameExists: the unique index decides.
        if (isUniqueViolation(err)) throw nameTaken(row.name);
        throw err;
      }
    },

    async update(id: string, patch: DestinationPatch, now: Date): Promise<void> {
      const { config, delivery, ...rest } = patch;
      try {
        await q()
          .updateTable('destinations')
          .set({
            ...rest,
            ...(config !== undefined ? { config: JSON.stringify(config) } : {}),
            ...(delivery !== undefined ? { delivery: JSON.stringify(delivery) } : {}),
            version: sql<number>`version + 1`,
            updated_at: now,
          })
          .where('id', '=', id)
          .execute();
        await changed();
      } catch (err) {
        if (isUniqueViolation(err)) throw nameTaken(patch.name ?? '');
        throw err;
      }
    },

    /** Ids of the routes (any organization) that deliver to the destination. */
    async routesUsing(id: string): Promise<string[]> {
      const rows = await q()
        .selectFrom('routes')
        .select('id')
        .where(sql<SqlBool>`destination_ids @> ${JSON.stringify([id])}::jsonb`)
        .orderBy('id')
        .execute();
      return rows.map((r) => r.id);
    },

    /** Clears the shadow of every destination that mirrors to this one; returns their ids. */
    async clearShadowsTo(id: string, now: Date): Promise<string[]> {
      const rows = await q()
        .updateTable('destinations')
        .set({ shadow_destination_id: null, version: sql<number>`version + 1`, updated_at: now })
        .where('shadow_destination_id', '=', id)
        .returning('id')
        .execute();
      if (rows.length > 0) await changed();
      return rows.map((r) => r.id).sort();
    },

    /** Deletes the destination's outbox rows and says what they held (for the ledger). */
    async deleteOutbox(id: string): Promise<OutboxRemoved[]> {
      return q()
        .deleteFrom('delivery_batches')
        .where('destination_id', '=', id)
        .returning(['organization_id', 'integration_id', 'stream', 'kind', 'event_count'])
        .execute();
    },

    addLedger: (deltas: LedgerDelta[], at: Date) => addLedger(db, deltas, at),

    /** The destination and everything kept about it (DLQ, breaker state, statistics, taps). */
    async deleteWithState(id: string): Promise<{ dlqEvents: number }> {
      const dlq = await q().deleteFrom('dlq_events').where('destination_id', '=', id).executeTakeFirst();
      await q().deleteFrom('destination_state').where('destination_id', '=', id).execute();
      await q().deleteFrom('destination_stats').where('destination_id', '=', id).execute();
      await q().deleteFrom('tap_samples').where('destination_id', '=', id).execute();
      await q().deleteFrom('tap_sessions').where('destination_id', '=', id).execute();
      await q().deleteFrom('destinations').where('id', '=', id).execute();
      await changed();
      return { dlqEvents: Number(dlq.numDeletedRows) };
    },

    /**
     * The outcome of a connection test, beside the deliveries' outcomes in destination_state
     * (the breaker columns stay the dispatchers'). A failed test is the destination's latest
     * error too. Nothing is written for a destination deleted meanwhile.
     */
    async recordTest(id: string, at: Date, ok: boolean, error: string | null): Promise<void> {
      const failed = ok ? null : error;
      await sql`
        insert into destination_state (destination_id, last_test_at, last_test_ok, last_error, last_error_at)
        select id, ${at}, ${ok}, ${failed}, ${failed === null ? null : at} from destinations where id = ${id}
        on conflict (destination_id) do update set
          last_test_at = excluded.last_test_at,
          last_test_ok = excluded.last_test_ok,
          last_error = coalesce(excluded.last_error, destination_state.last_error),
          last_error_at = coalesce(excluded.last_error_at, destination_state.last_error_at),
          updated_at = now()`.execute(q());
    },

    async credentialOf(
      id: string,
    ): Promise<{ credential: string | null; credential_key_id: string | null } | undefined> {
      return q()
        .selectFrom('destinations')
        .select(['credential', 'credential_key_id'])
        .where('id', '=', id)
        .executeTakeFirst();
    },

    /** Credentials not sealed under the given key. */
    async staleCredentials(currentKeyId: string): Promise<SealedRow[]> {
      const rows = await q()
        .selectFrom('destinations')
        .select(['id', 'credential', 'credential_key_id'])
        .where('credential', 'is not', null)
        .where((eb) => eb.or([eb('credential_key_id', 'is', null), eb('credential_key_id', '<>', currentKeyId)]))
        .execute();
      return rows.filter((r): r is SealedRow => r.credential !== null);
    },

    /** Replaces a ciphertext only if it is still the one read (a concurrent rotate wins). */
    async resealCredential(id: string, expected: string, ciphertext: string, keyId: string): Promise<boolean> {
      const res = await q()
        .updateTable('destinations')
        .set({ credential: ciphertext, credential_key_id: keyId })
        .where('id', '=', id)
        .where('credential', '=', expected)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },

    /**
     * Audit entries of the destination's credential operations, newest first: rotate,
     * revoke, test, and the create that set a credential. Scoped like the audit trail.
     */
    async credentialAudit(
      scope: Scope,
      id: string,
      withPlatformEntries: boolean,
      page: OffsetPage,
    ): Promise<{ items: AuditRow[]; total: number }> {
      let base = q()
        .selectFrom('audit_log')
        .where('target_type', '=', 'destinations')
        .where('target_id', '=', id)
        .where((eb) =>
          eb.or([
            eb('operation_id', 'in', [...CREDENTIAL_OPERATIONS]),
            eb.and([eb('operation_id', '=', 'destinations.create'), eb(sql`details->>'has_credential'`, '=', 'true')]),
          ]),
        );
      if (!scope.global) {
        base = withPlatformEntries
          ? base.where(
              sql<SqlBool>`(audit_log.organization_id is null or ${scoped(scope, 'audit_log.organization_id')})`,
            )
          : base.where(scoped(scope, 'audit_log.organization_id'));
      }
      const [items, count] = await Promise.all([
        base.selectAll().orderBy('seq', 'desc').limit(page.limit).offset(page.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(count.n) };
    },
  };
}

export type DestinationStore = ReturnType<typeof createDestinationStore>;
