// Managed-provider tenants: what a parent integration discovered at its vendor, which of
// them are selected, the child integrations that collect them, and the last sync. The
// caller has resolved the parent inside its scope and holds its row lock while writing.
import type { Kysely, Selectable } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { TenantInfo } from '../../connectors/sdk.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { DiscoveredTenantsTable, TenantSyncsTable } from '../../platform/db/schema.js';

export type TenantRow = Selectable<DiscoveredTenantsTable>;
export type TenantSyncRow = Selectable<TenantSyncsTable>;

export interface TenantFilter {
  selected?: boolean;
  present?: boolean;
}

export interface NewChild {
  organization_id: number;
  parent_id: number;
  platform: string;
  external_tenant_id: string;
  config: Record<string, unknown>;
  /** Names to try in order; the first one free in the organization is taken. */
  names: string[];
}

export function createTenantStore(db: Kysely<DB>) {
  const q = () => executor(db);

  return {
    /** The parent row, locked until the transaction ends (serializes syncs and selections). */
    async lockParent(id: number): Promise<void> {
      await q().selectFrom('integrations').select('id').where('id', '=', id).forUpdate().executeTakeFirst();
    },

    async list(
      integrationId: number,
      f: TenantFilter,
      page: OffsetPage,
    ): Promise<{ items: TenantRow[]; total: number }> {
      let base = q().selectFrom('discovered_tenants').where('integration_id', '=', integrationId);
      if (f.selected !== undefined) base = base.where('selected', '=', f.selected);
      if (f.present !== undefined) base = base.where('present', '=', f.present);
      const [items, n] = await Promise.all([
        base.selectAll().orderBy('name').orderBy('external_id').limit(page.limit).offset(page.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(n.n) };
    },

    async all(integrationId: number): Promise<TenantRow[]> {
      return q()
        .selectFrom('discovered_tenants')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .orderBy('external_id')
        .execute();
    },

    async byIds(integrationId: number, externalIds: string[]): Promise<TenantRow[]> {
      if (externalIds.length === 0) return [];
      return q()
        .selectFrom('discovered_tenants')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .where('external_id', 'in', externalIds)
        .execute();
    },

    /**
     * Records a discovery: listed tenants are inserted or refreshed (present again), every
     * other tenant of the parent is marked absent. Returns the external ids seen for the first time.
     */
    async recordDiscovery(
      integrationId: number,
      organizationId: number,
      tenants: TenantInfo[],
      now: Date,
    ): Promise<{ added: string[]; gone: number }> {
      const known = new Set(
        (
          await q()
            .selectFrom('discovered_tenants')
            .select('external_id')
            .where('integration_id', '=', integrationId)
            .execute()
        ).map((r) => r.external_id),
      );
      const added = tenants.filter((t) => !known.has(t.external_id)).map((t) => t.external_id);
      // In chunks: one statement per 500 tenants, not one per tenant.
      for (let i = 0; i < tenants.length; i += 500) {
        const rows = tenants.slice(i, i + 500).map((t) => ({
          integration_id: integrationId,
          external_id: t.external_id,
          organization_id: organizationId,
          name: t.name,
          domain: t.domain ?? null,
          details: JSON.stringify(t.details ?? {}),
          first_seen_at: now,
          last_seen_at: now,
          present: true,
        }));
        await q()
          .insertInto('discovered_tenants')
          .values(rows)
          .onConflict((oc) =>
            oc.columns(['integration_id', 'external_id']).doUpdateSet((eb) => ({
              name: eb.ref('excluded.name'),
              domain: eb.ref('excluded.domain'),
              details: eb.ref('excluded.details'),
              last_seen_at: now,
              present: true,
            })),
          )
          .execute();
      }
      const listed = tenants.map((t) => t.external_id);
      let gone = q()
        .updateTable('discovered_tenants')
        .set({ present: false })
        .where('integration_id', '=', integrationId)
        .where('present', '=', true);
      if (listed.length > 0) gone = gone.where('external_id', 'not in', listed);
      const res = await gone.executeTakeFirst();
      return { added, gone: Number(res.numUpdatedRows) };
    },

    async setSelected(integrationId: number, externalIds: string[], selected: boolean, now: Date): Promise<number> {
      if (externalIds.length === 0) return 0;
      const res = await q()
        .updateTable('discovered_tenants')
        .set({ selected, selected_at: selected ? now : null })
        .where('integration_id', '=', integrationId)
        .where('external_id', 'in', externalIds)
        .where('selected', '=', !selected)
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },

    async countSelected(integrationId: number): Promise<number> {
      const row = await q()
        .selectFrom('discovered_tenants')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('integration_id', '=', integrationId)
        .where('selected', '=', true)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** A child integration collecting one tenant; its name is the first free one of `names`. */
    async insertChild(child: NewChild, now: Date): Promise<number | undefined> {
      for (const name of child.names) {
        // DO NOTHING instead of catching the unique violation: a failed statement would abort the transaction.
        const row = await q()
          .insertInto('integrations')
          .values({
            organization_id: child.organization_id,
            parent_id: child.parent_id,
            platform: child.platform,
            name,
            is_active: true,
            config: JSON.stringify(child.config),
            external_tenant_id: child.external_tenant_id,
            created_at: now,
            updated_at: now,
          })
          .onConflict((oc) => oc.doNothing())
          .returning('id')
          .executeTakeFirst();
        if (row) return row.id;
      }
      return undefined;
    },

    async linkChild(integrationId: number, externalId: string, childId: number): Promise<void> {
      await q()
        .updateTable('discovered_tenants')
        .set({ child_integration_id: childId })
        .where('integration_id', '=', integrationId)
        .where('external_id', '=', externalId)
        .execute();
    },

    /** Switches child integrations on or off; returns how many changed. */
    async setChildrenActive(parentId: number, childIds: number[], active: boolean, now: Date): Promise<number> {
      if (childIds.length === 0) return 0;
      const res = await q()
        .updateTable('integrations')
        .set({ is_active: active, updated_at: now })
        .where('parent_id', '=', parentId)
        .where('id', 'in', childIds)
        .where('is_active', '=', !active)
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },

    async recordSync(row: {
      integration_id: number;
      organization_id: number;
      status: string;
      discovered: number;
      materialized: number;
      error: string | null;
      warning: string | null;
      synced_at: Date;
    }): Promise<void> {
      await q()
        .insertInto('tenant_syncs')
        .values(row)
        .onConflict((oc) =>
          oc.column('integration_id').doUpdateSet({
            status: row.status,
            discovered: row.discovered,
            materialized: row.materialized,
            error: row.error,
            warning: row.warning,
            synced_at: row.synced_at,
          }),
        )
        .execute();
    },

    async lastSync(integrationId: number): Promise<TenantSyncRow | undefined> {
      return q().selectFrom('tenant_syncs').selectAll().where('integration_id', '=', integrationId).executeTakeFirst();
    },
  };
}

export type TenantStore = ReturnType<typeof createTenantStore>;
