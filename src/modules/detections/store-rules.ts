// Detection rules and their versions: what the API edits and the pass's live rules.
import type { Kysely } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';
import type { RuleVersionRow, RuleWithVersion } from './store.js';

/** The rule queries of the detection store. */
export function ruleQueries(db: Kysely<DB>) {
  const q = () => executor(db);

  const ruleQuery = () =>
    q()
      .selectFrom('detection_rules as r')
      .leftJoin('detection_rule_versions as v', 'v.id', 'r.live_version_id')
      .selectAll('r')
      .select(['v.version as version', 'v.definition as definition']);

  return {
    async listRules(
      scope: Scope,
      organizationId: number | undefined,
      page: OffsetPage,
    ): Promise<{ items: RuleWithVersion[]; total: number }> {
      let base = ruleQuery().where(scoped(scope, 'r.organization_id'));
      if (organizationId !== undefined) base = base.where('r.organization_id', '=', organizationId);
      const [items, count] = await Promise.all([
        base.orderBy('r.name').orderBy('r.id').limit(page.limit).offset(page.offset).execute(),
        base
          .clearSelect()
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      return { items: items as RuleWithVersion[], total: Number(count.n) };
    },
    async getRule(scope: Scope, id: string, lock = false): Promise<RuleWithVersion | undefined> {
      if (lock) await q().selectFrom('detection_rules').select('id').where('id', '=', id).forUpdate().execute();
      return (await ruleQuery().where('r.id', '=', id).where(scoped(scope, 'r.organization_id')).executeTakeFirst()) as
        RuleWithVersion | undefined;
    },
    async insertRule(
      row: { id: string; organization_id: number; name: string; enabled: boolean; created_by: number | null },
      now: Date,
    ): Promise<void> {
      await q()
        .insertInto('detection_rules')
        .values({ ...row, live_version_id: null, created_at: now, updated_at: now })
        .execute();
    },
    async updateRule(
      id: string,
      patch: { name?: string; enabled?: boolean; live_version_id?: string },
      now: Date,
    ): Promise<void> {
      await q()
        .updateTable('detection_rules')
        .set({ ...patch, updated_at: now })
        .where('id', '=', id)
        .execute();
    },
    async deleteRule(id: string): Promise<void> {
      await q().deleteFrom('detection_rules').where('id', '=', id).execute();
    },
    async insertVersion(
      row: {
        id: string;
        rule_id: string;
        version: number;
        definition: Record<string, unknown>;
        comment: string;
        created_by: number | null;
      },
      now: Date,
    ): Promise<void> {
      await q()
        .insertInto('detection_rule_versions')
        .values({ ...row, definition: JSON.stringify(row.definition), created_at: now })
        .execute();
    },
    async versions(ruleId: string): Promise<RuleVersionRow[]> {
      return q()
        .selectFrom('detection_rule_versions')
        .selectAll()
        .where('rule_id', '=', ruleId)
        .orderBy('version', 'desc')
        .execute();
    },
    async maxVersion(ruleId: string): Promise<number> {
      const r = await q()
        .selectFrom('detection_rule_versions')
        .select((eb) => eb.fn.max('version').as('m'))
        .where('rule_id', '=', ruleId)
        .executeTakeFirst();
      return Number(r?.m ?? 0);
    },
    /** An organization's enabled rules with their live version (the pass's job). */
    async liveRules(
      organizationId: number,
    ): Promise<{ id: string; name: string; version: number; definition: Record<string, unknown> }[]> {
      const rows = await q()
        .selectFrom('detection_rules as r')
        .innerJoin('detection_rule_versions as v', 'v.id', 'r.live_version_id')
        .select(['r.id', 'r.name', 'v.version', 'v.definition'])
        .where('r.organization_id', '=', organizationId)
        .where('r.enabled', '=', true)
        .orderBy('r.id')
        .execute();
      return rows as { id: string; name: string; version: number; definition: Record<string, unknown> }[];
    },
    /** The live definitions of the rules named, any organization (the recorder's view of what fired). */
    async rulesById(ids: string[]): Promise<Map<string, { id: string; name: string; organization_id: number }>> {
      if (ids.length === 0) return new Map();
      const rows = await q()
        .selectFrom('detection_rules')
        .select(['id', 'name', 'organization_id'])
        .where('id', 'in', ids)
        .execute();
      return new Map(rows.map((r) => [r.id, r]));
    },
    async ruleVersion(ruleId: string, version: number): Promise<RuleVersionRow | undefined> {
      return q()
        .selectFrom('detection_rule_versions')
        .selectAll()
        .where('rule_id', '=', ruleId)
        .where('version', '=', version)
        .executeTakeFirst();
    },
  };
}
