// Enrichment tables (and their versions' data), sources, policies (and versions), the
// per-policy live series and the activity list. Every query that a caller's scope limits
// takes the scope; the pass's reads (live.ts) are per organization. The queries of tables,
// sources and policies are in store-tables.ts, store-sources.ts and store-policies.ts.
import { sql, type Kysely } from 'kysely';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import { organizationLookup } from '../../platform/db/organizations.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';
import { policyQueries } from './store-policies.js';
import { sourceQueries } from './store-sources.js';
import { tableQueries } from './store-tables.js';

export type { PolicyRow, PolicyVersionRow } from './store-policies.js';
export type { SourceRow } from './store-sources.js';
export type { TableRow, TableVersionMeta } from './store-tables.js';

export interface MetricsRow {
  policy_id: string;
  minute: Date;
  seen: number;
  hits: number;
  misses: number;
  errors: number;
  unanswered: number;
  micros: number;
}

const num = (v: unknown) => Number(v ?? 0);

export function createEnrichmentStore(db: Kysely<DB>) {
  const q = () => executor(db);

  return {
    ...organizationLookup(db),

    /** Row lock on the organization until the transaction ends: enrichment writes of one organization queue up. */
    async lockOrganization(id: number): Promise<void> {
      await q().selectFrom('organizations').select('id').where('id', '=', id).forUpdate().executeTakeFirst();
    },

    /** Live mapping documents that apply to the organization: its own, and built-ins of platforms it has integrations of. */
    async liveMappingDocuments(organizationId: number): Promise<unknown[]> {
      const platforms = q().selectFrom('integrations').select('platform').where('organization_id', '=', organizationId);
      const rows = await q()
        .selectFrom('mapping_definitions as d')
        .innerJoin('mapping_versions as v', 'v.id', 'd.live_version_id')
        .select('v.document')
        .where((e) =>
          e.or([
            e('d.organization_id', '=', organizationId),
            e.and([e('d.organization_id', 'is', null), e('d.platform', 'in', platforms)]),
          ]),
        )
        .execute();
      return rows.map((r) => r.document);
    },

    /** Everything of an organization's enrichment (its data deletion); rows deleted. */
    async deleteOrganization(organizationId: number): Promise<number> {
      let rows = 0;
      for (const table of [
        'enrichment_policies',
        'enrichment_sources',
        'enrichment_tables',
        'enrichment_metrics',
        'enrichment_activity',
      ] as const) {
        const res = await q().deleteFrom(table).where('organization_id', '=', organizationId).executeTakeFirst();
        rows += Number(res.numDeletedRows);
      }
      return rows;
    },

    ...tableQueries(db),
    ...sourceQueries(db),
    ...policyQueries(db),

    // The live series and activity.
    async addMetrics(
      organizationId: number,
      minute: Date,
      rows: {
        policy_id: string;
        seen: number;
        hits: number;
        misses: number;
        errors: number;
        unanswered: number;
        micros: number;
      }[],
    ): Promise<void> {
      if (rows.length === 0) return;
      await q()
        .insertInto('enrichment_metrics')
        .values(rows.map((r) => ({ ...r, minute, organization_id: organizationId })))
        .onConflict((oc) =>
          oc.columns(['policy_id', 'minute']).doUpdateSet({
            seen: sql`enrichment_metrics.seen + excluded.seen`,
            hits: sql`enrichment_metrics.hits + excluded.hits`,
            misses: sql`enrichment_metrics.misses + excluded.misses`,
            errors: sql`enrichment_metrics.errors + excluded.errors`,
            unanswered: sql`enrichment_metrics.unanswered + excluded.unanswered`,
            micros: sql`enrichment_metrics.micros + excluded.micros`,
          }),
        )
        .execute();
    },
    async metrics(
      scope: Scope,
      since: Date,
      organizationId?: number,
      policyId?: string,
    ): Promise<(MetricsRow & { organization_id: number })[]> {
      let base = q()
        .selectFrom('enrichment_metrics')
        .selectAll()
        .where(scoped(scope, 'organization_id'))
        .where('minute', '>=', since);
      if (organizationId !== undefined) base = base.where('organization_id', '=', organizationId);
      if (policyId !== undefined) base = base.where('policy_id', '=', policyId);
      const rows = await base.orderBy('minute').execute();
      return rows.map((r) => ({
        ...r,
        seen: num(r.seen),
        hits: num(r.hits),
        misses: num(r.misses),
        errors: num(r.errors),
        unanswered: num(r.unanswered),
        micros: num(r.micros),
      })) as (MetricsRow & {
        organization_id: number;
      })[];
    },
    async pruneMetrics(before: Date): Promise<number> {
      const res = await q().deleteFrom('enrichment_metrics').where('minute', '<', before).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
    async addActivity(row: {
      id: string;
      organization_id: number;
      at: Date;
      kind: string;
      subject_type: string;
      subject_id: string;
      message: string;
      actor_id: number | null;
    }): Promise<void> {
      await q().insertInto('enrichment_activity').values(row).execute();
    },
    async activity(scope: Scope, page: { limit: number; offset: number }, organizationId?: number) {
      let base = q().selectFrom('enrichment_activity').where(scoped(scope, 'organization_id'));
      if (organizationId !== undefined) base = base.where('organization_id', '=', organizationId);
      const [items, total] = await Promise.all([
        base.selectAll().orderBy('at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
        base.select((e) => e.fn.countAll().as('n')).executeTakeFirst(),
      ]);
      return { items, total: num(total?.n) };
    },
  };
}

export type EnrichmentStore = ReturnType<typeof createEnrichmentStore>;
