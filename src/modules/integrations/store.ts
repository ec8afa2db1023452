// Integrations: organization-owned rows, every query filtered by the caller's scope.
import { sql, type Kysely, type Selectable } from 'kysely';
import { AppError } from '../../core/errors.js';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import { organizationLookup } from '../../platform/db/organizations.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import type { DB } from '../../platform/db/index.js';
import type { IntegrationsTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';
import type { SealedSecrets, SecretRow } from './secrets.js';

export type IntegrationRow = Selectable<IntegrationsTable>;

export interface IntegrationFilter {
  organizationId?: number;
  platform?: string;
  isActive?: boolean;
  parentId?: number;
}

export interface NewIntegration {
  organization_id: number;
  name: string;
  platform: string;
  is_active: boolean;
  parent_id: number | null;
  config: Record<string, unknown>;
}

export type IntegrationPatch = Partial<Pick<NewIntegration, 'name' | 'is_active' | 'parent_id' | 'config'>> & {
  updated_at: Date;
};

export function createIntegrationStore(db: Kysely<DB>) {
  const q = () => executor(db);
  const inScope = (scope: Scope) => q().selectFrom('integrations').where(scoped(scope, 'integrations.organization_id'));
  const nameTaken = (name: string) =>
    new AppError('integration.name_taken', {
      detail: `An integration named "${name}" already exists in this organization`,
      details: { field: 'name' },
    });

  return {
    async list(
      scope: Scope,
      f: IntegrationFilter,
      page: OffsetPage,
    ): Promise<{ items: IntegrationRow[]; total: number }> {
      let base = inScope(scope);
      if (f.organizationId !== undefined) base = base.where('organization_id', '=', f.organizationId);
      if (f.platform !== undefined) base = base.where('platform', '=', f.platform);
      if (f.isActive !== undefined) base = base.where('is_active', '=', f.isActive);
      if (f.parentId !== undefined) base = base.where('parent_id', '=', f.parentId);
      const [items, count] = await Promise.all([
        base.selectAll().orderBy('id').limit(page.limit).offset(page.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(count.n) };
    },

    /** The row in scope; `lock` takes a row lock for the rest of the transaction. */
    async get(scope: Scope, id: number, lock?: 'update' | 'share'): Promise<IntegrationRow | undefined> {
      let query = inScope(scope).selectAll().where('id', '=', id);
      if (lock === 'update') query = query.forUpdate();
      if (lock === 'share') query = query.forShare();
      return query.executeTakeFirst();
    },

    ...organizationLookup(db),

    async nameExists(organizationId: number, name: string, exceptId?: number): Promise<boolean> {
      let query = q()
        .selectFrom('integrations')
        .select('id')
        .where('organization_id', '=', organizationId)
        .where(sql<boolean>`lower(name) = lower(${name})`);
      if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
      return Boolean(await query.executeTakeFirst());
    },

    async hasChildren(id: number): Promise<boolean> {
      return Boolean(await q().selectFrom('integrations').select('id').where('parent_id', '=', id).executeTakeFirst());
    },

    async children(id: number): Promise<{ id: number; is_active: boolean }[]> {
      return q()
        .selectFrom('integrations')
        .select(['id', 'is_active'])
        .where('parent_id', '=', id)
        .orderBy('id')
        .execute();
    },

    async insert(values: NewIntegration, now: Date): Promise<IntegrationRow> {
      try {
        return await q()
          .insertInto('integrations')
          .values({ ...values, config: JSON.stringify(values.config), created_at: now, updated_at: now })
          .returningAll()
          .executeTakeFirstOrThrow();
      } catch (err) {
        if (isUniqueViolation(err)) throw nameTaken(values.name);
        throw err;
      }
    },

    async update(id: number, patch: IntegrationPatch): Promise<IntegrationRow> {
      const { config, ...rest } = patch;
      try {
        return await q()
          .updateTable('integrations')
          .set({ ...rest, ...(config !== undefined ? { config: JSON.stringify(config) } : {}) })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
      } catch (err) {
        if (isUniqueViolation(err)) throw nameTaken(patch.name ?? '');
        throw err;
      }
    },

    /** Any integration by id, whatever the scope (internal use: a child's parent, workers). */
    async byId(id: number): Promise<IntegrationRow | undefined> {
      return q().selectFrom('integrations').selectAll().where('id', '=', id).executeTakeFirst();
    },

    async setSecrets(id: number, sealed: SealedSecrets): Promise<void> {
      await q().updateTable('integrations').set(sealed).where('id', '=', id).execute();
    },

    /** Rows that may hold secrets to seal: on a platform with secret fields, or sealed under another key. */
    async secretRows(platformsWithSecrets: string[], currentKeyId: string): Promise<SecretRow[]> {
      return q()
        .selectFrom('integrations')
        .select(['id', 'platform', 'config', 'secrets', 'secrets_key_id'])
        .where((eb) =>
          eb.or([
            ...(platformsWithSecrets.length ? [eb('platform', 'in', platformsWithSecrets)] : []),
            eb.and([
              eb('secrets', 'is not', null),
              eb.or([eb('secrets_key_id', 'is', null), eb('secrets_key_id', '<>', currentKeyId)]),
            ]),
          ]),
        )
        .orderBy('id')
        .execute();
    },

    /** Writes sealed secrets and the plain config only if the row is still as read. */
    async writeSealed(row: SecretRow, next: { config: Record<string, unknown> } & SealedSecrets): Promise<boolean> {
      const res = await q()
        .updateTable('integrations')
        .set({ config: JSON.stringify(next.config), secrets: next.secrets, secrets_key_id: next.secrets_key_id })
        .where('id', '=', row.id)
        .where(sql<boolean>`secrets is not distinct from ${row.secrets}`)
        .where(sql<boolean>`config = ${JSON.stringify(row.config)}::jsonb`)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },

    /** Removes the integration; its children go with it (foreign key cascade). */
    async remove(id: number): Promise<void> {
      await q().deleteFrom('integrations').where('id', '=', id).execute();
    },

    async findInScope(
      scope: Scope,
      ids: number[],
    ): Promise<{ id: number; is_active: boolean; organization_id: number }[]> {
      if (ids.length === 0) return [];
      return inScope(scope).select(['id', 'is_active', 'organization_id']).where('id', 'in', ids).forUpdate().execute();
    },

    async deactivate(ids: number[], now: Date): Promise<number> {
      if (ids.length === 0) return 0;
      const res = await q()
        .updateTable('integrations')
        .set({ is_active: false, updated_at: now })
        .where('id', 'in', ids)
        .where('is_active', '=', true)
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },
  };
}

export type IntegrationStore = ReturnType<typeof createIntegrationStore>;

/** Active integrations of these platforms in active organizations, by id (the inputs that run in
 * Weir's processes, e.g. bus consumers and syslog listeners, read theirs through this). */
export async function activeIntegrationsOf(db: Kysely<DB>, platforms: readonly string[]): Promise<IntegrationRow[]> {
  return executor(db)
    .selectFrom('integrations as i')
    .innerJoin('organizations as o', 'o.id', 'i.organization_id')
    .selectAll('i')
    .where('i.platform', 'in', [...platforms])
    .where('i.is_active', '=', true)
    .where('o.is_active', '=', true)
    .orderBy('i.id')
    .execute();
}
