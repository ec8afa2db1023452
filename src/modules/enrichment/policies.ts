// Enrichment policies: each version is a publication, checked in full (condition, key,
// table or source, targets against the OCSF classes the policy can meet) and refused with
// 422 and every problem with its location. Enable and disable; rollback publishes the old
// definition again (checked again: its table may be gone). The pass reads the live
// definition of enabled policies within a poll (live.ts).
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { inScope, scopeOf, type Scope } from '../../core/scope.js';
import { ocsfCatalog, SUPPORTED_CLASS_UIDS } from '../../ocsf/index.js';
import { at, readCondition } from '../../pipeline/conditions/input.js';
import { GEO_COLUMNS } from '../../pipeline/enrich/geoip.js';
import { checkPolicy, type PolicyDefinition } from '../../pipeline/enrich/policy.js';
import { setAuditTarget } from '../audit/service.js';
import { cleanName, createdBy, nameTaken, refuse, targetOrganization, type Activity } from './common.js';
import { BUILTIN_GEOIP_ID } from './sources.js';
import type { EnrichmentStore, PolicyRow, PolicyVersionRow } from './store.js';

export type PolicyInput = Omit<PolicyDefinition, 'order' | 'on_miss' | 'condition' | 'description'> & {
  organization_id?: number;
  description?: string;
  order?: number;
  condition?: unknown;
  on_miss?: PolicyDefinition['on_miss'];
  comment?: string;
};

export const policyNotFound = () => errors.notFound('Enrichment policy');

export function policyOut(p: PolicyRow) {
  const d = p.definition as unknown as PolicyDefinition;
  return {
    id: p.id,
    organization_id: p.organization_id,
    name: p.name,
    enabled: p.enabled,
    version: p.version,
    description: d.description ?? '',
    order: d.order,
    condition: d.condition ?? null,
    key: d.key,
    lookup: d.lookup as Record<string, string>,
    output: d.output,
    on_miss: d.on_miss,
    ...(d.defaults ? { defaults: d.defaults } : {}),
    ...(d.overwrite !== undefined ? { overwrite: d.overwrite } : {}),
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}

export function policyVersionOut(v: PolicyVersionRow) {
  return {
    id: v.id,
    policy_id: v.policy_id,
    version: v.version,
    definition: v.definition,
    comment: v.comment,
    created_by: v.created_by,
    created_at: v.created_at,
  };
}

/** The condition as given, the tree or its text form (docs/conditions.md); a syntax error is a 422 with its line and column. */
function policyCondition(given: unknown): unknown {
  const input = readCondition(given ?? null);
  if (input.syntax) {
    const { message, ...where } = input.syntax;
    refuse('enrichment.invalid_rule', [{ path: 'condition', message: `${message}${at(where)}`, ...where }]);
  }
  return input.condition;
}

export function definitionOf(input: PolicyInput, name: string): PolicyDefinition {
  const d: PolicyDefinition = {
    name,
    description: input.description ?? '',
    order: input.order ?? 100,
    condition: policyCondition(input.condition),
    key: input.key,
    lookup: input.lookup,
    output: input.output,
    on_miss: input.on_miss ?? 'continue',
  };
  if (input.defaults) d.defaults = input.defaults;
  if (input.overwrite !== undefined) d.overwrite = input.overwrite;
  return d;
}

export function createPoliciesService(deps: { store: EnrichmentStore; clock: Clock; activity: Activity }) {
  const { store, clock, activity } = deps;
  const catalog = ocsfCatalog();

  async function visible(scope: Scope, id: string): Promise<PolicyRow> {
    const row = await store.getPolicy(id);
    if (!row || !inScope(scope, row.organization_id)) throw policyNotFound();
    return row;
  }

  async function changeable(actor: Actor, id: string): Promise<PolicyRow> {
    const first = await visible(scopeOf(actor), id);
    await store.lockOrganization(first.organization_id);
    const row = await visible(scopeOf(actor), id);
    setAuditTarget({ type: 'enrichment_policies', id, organizationId: row.organization_id });
    return row;
  }

  /** Columns of what a definition looks up in, for the organization (undefined: unknown to it). */
  async function columnsResolver(organizationId: number, def: PolicyDefinition) {
    const lookup = def.lookup;
    if (lookup && 'table_id' in lookup && typeof lookup.table_id === 'string') {
      const table = (await store.tablesOf(organizationId, [lookup.table_id]))[0];
      const version = table && (await store.liveVersionMeta(table.id));
      return () => version?.columns;
    }
    if (lookup && 'source_id' in lookup && typeof lookup.source_id === 'string') {
      if (lookup.source_id === BUILTIN_GEOIP_ID) return () => GEO_COLUMNS;
      const source = await store.getSource(lookup.source_id);
      if (!source || (source.organization_id !== organizationId && !source.shared)) return () => undefined;
      if (source.kind === 'http') return () => null;
      if (source.kind === 'feed') {
        const table = source.table_id
          ? (await store.tablesOf(source.organization_id, [source.table_id]))[0]
          : undefined;
        const version = table && (await store.liveVersionMeta(table.id));
        return () => version?.columns ?? ['indicator', 'type'];
      }
      return () => GEO_COLUMNS;
    }
    return () => undefined;
  }

  /** 422 enrichment.invalid_rule listing every problem of the definition. */
  async function assertValid(organizationId: number, def: PolicyDefinition): Promise<void> {
    const columns = await columnsResolver(organizationId, def);
    const problems = checkPolicy(def, { catalog, classes: SUPPORTED_CLASS_UIDS, columnsOf: columns });
    if (problems.length > 0) refuse('enrichment.invalid_rule', problems);
  }

  async function writeVersion(
    policy: PolicyRow,
    version: number,
    def: PolicyDefinition,
    comment: string,
    actor: Actor,
  ) {
    const at = clock.now();
    const row = {
      id: newId(),
      policy_id: policy.id,
      version,
      definition: def as unknown as Record<string, unknown>,
      comment,
      created_by: createdBy(actor),
    };
    await store.insertPolicyVersion(row, at);
    await store.updatePolicy(policy.id, { name: def.name, version, definition: row.definition }, at);
    await activity({
      organization_id: policy.organization_id,
      kind: `policy.version`,
      subject_type: 'policy',
      subject_id: policy.id,
      message: `policy "${def.name}" version ${version} published${comment ? `: ${comment}` : ''}`,
      actor,
    });
    return { ...row, created_at: at };
  }

  return {
    /** 422 enrichment.invalid_rule unless the definition could be published for the organization (dry-run drafts). */
    check: assertValid,

    async list(scope: Scope, organizationId?: number) {
      return (await store.listPolicies(scope, organizationId)).map(policyOut);
    },

    async create(actor: Actor, input: PolicyInput) {
      const organizationId = await targetOrganization(store, scopeOf(actor), input.organization_id);
      await store.lockOrganization(organizationId);
      const def = definitionOf(input, cleanName(input.name));
      await assertValid(organizationId, def);
      if (await store.policyNameExists(organizationId, def.name)) throw nameTaken('policy', def.name);
      const id = newId();
      const at = clock.now();
      const row: PolicyRow = {
        id,
        organization_id: organizationId,
        name: def.name,
        enabled: true,
        version: 1,
        definition: def as unknown as Record<string, unknown>,
        created_by: createdBy(actor),
        created_at: at,
        updated_at: at,
      };
      await store.insertPolicy(row, at);
      await writeVersion(row, 1, def, input.comment?.trim() ?? '', actor);
      setAuditTarget({ type: 'enrichment_policies', id, organizationId, details: { version: 1, definition: def } });
      return policyOut(row);
    },

    async addVersion(actor: Actor, id: string, input: Omit<PolicyInput, 'organization_id'>) {
      const policy = await changeable(actor, id);
      const def = definitionOf(input, cleanName(input.name ?? policy.name));
      await assertValid(policy.organization_id, def);
      if (await store.policyNameExists(policy.organization_id, def.name, id)) throw nameTaken('policy', def.name);
      const version = await writeVersion(policy, policy.version + 1, def, input.comment?.trim() ?? '', actor);
      setAuditTarget({
        type: 'enrichment_policies',
        id,
        organizationId: policy.organization_id,
        details: { version: version.version, definition: def },
      });
      return policyVersionOut(version);
    },

    async versions(scope: Scope, id: string) {
      await visible(scope, id);
      return (await store.policyVersions(id)).map(policyVersionOut);
    },

    async version(scope: Scope, id: string, versionId: string) {
      await visible(scope, id);
      const v = await store.policyVersion(id, { id: versionId });
      if (!v) throw errors.notFound('Policy version');
      return policyVersionOut(v);
    },

    async rollback(actor: Actor, id: string, target: number, comment?: string) {
      const policy = await changeable(actor, id);
      if (target === policy.version)
        throw new AppError('enrichment.already_current', { detail: `The policy is already at version ${target}` });
      const old = await store.policyVersion(id, { version: target });
      if (!old) throw errors.notFound('Policy version');
      const def = old.definition as unknown as PolicyDefinition;
      await assertValid(policy.organization_id, def);
      if (await store.policyNameExists(policy.organization_id, def.name, id)) throw nameTaken('policy', def.name);
      const version = await writeVersion(
        policy,
        policy.version + 1,
        def,
        comment?.trim() || `rollback to version ${target}`,
        actor,
      );
      setAuditTarget({
        type: 'enrichment_policies',
        id,
        organizationId: policy.organization_id,
        details: { version: version.version, rolled_back_to: target },
      });
      return policyVersionOut(version);
    },

    async enable(actor: Actor, id: string, enabled: boolean) {
      const policy = await changeable(actor, id);
      // Enabling runs the checks again: what it looks up in may be gone since.
      if (enabled && !policy.enabled)
        await assertValid(policy.organization_id, policy.definition as unknown as PolicyDefinition);
      const at = clock.now();
      await store.updatePolicy(id, { enabled }, at);
      await activity({
        organization_id: policy.organization_id,
        kind: enabled ? 'policy.enabled' : 'policy.disabled',
        subject_type: 'policy',
        subject_id: id,
        message: `policy "${policy.name}" ${enabled ? 'enabled' : 'disabled'}`,
        actor,
      });
      setAuditTarget({ type: 'enrichment_policies', id, organizationId: policy.organization_id, details: { enabled } });
      return policyOut({ ...policy, enabled, updated_at: at });
    },
  };
}

export type PoliciesService = ReturnType<typeof createPoliciesService>;
