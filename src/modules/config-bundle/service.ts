// Export and import of the configuration bundle. Import plans first (create, update,
// unchanged, conflict by name), then applies through each module's own service (their
// validators, their versions) inside the request's one transaction: all or nothing. A dry
// run applies the same way and rolls back to a savepoint, so it reports what the apply
// would refuse (docs/decisions/0033-configuration-bundle.md).
import type { Actor } from '../../core/actor.js';
import { AppError, isAppError } from '../../core/errors.js';
import { scopeOf, targetOrganization } from '../../core/scope.js';
import { setAuditTarget } from '../audit/service.js';
import { checkDocument } from './document.js';
import { planContext, type Json, type Step } from './plan.js';
import { planCollectorSettings, planIntegrations, planMappings } from './plan-collection.js';
import { planDestinations, planRoutes } from './plan-delivery.js';
import { planPolicies, planSources, planTables } from './plan-enrichment.js';
import { planRules, planSavedQueries, planSchedules } from './plan-analytics.js';
import type { ConfigBundle, ImportResult } from './schema.js';
import { snapshot, type BundlePorts, type Current } from './snapshot.js';

export interface ImportInput {
  document: Json;
  dry_run?: boolean;
  secrets?: Record<string, string>;
}

export interface BundleDeps extends BundlePorts {
  organizationExists(id: number): Promise<boolean>;
  organizationIds(limit: number): Promise<number[]>;
  /** Runs fn and rolls back what it wrote (a savepoint of the open transaction). */
  rolledBack<T>(fn: () => Promise<T>): Promise<T>;
}

export function createBundleService(deps: BundleDeps) {
  async function organization(actor: Actor, requested: number | undefined) {
    // Export (GET) and import (its body is the bundle) both take organization_id in the query.
    return targetOrganization(deps, scopeOf(actor), requested, 'query/organization_id');
  }

  function plan(
    actor: Actor,
    organizationId: number,
    doc: ConfigBundle,
    current: Current,
    secrets: Record<string, string>,
  ): Step[] {
    const steps: Step[] = [];
    const ctx = planContext(deps, actor, organizationId, doc, current, secrets, steps);
    // The apply runs in this order, so an object exists before another refers to it by name.
    planDestinations(ctx);
    planIntegrations(ctx);
    planMappings(ctx);
    planTables(ctx);
    planSources(ctx);
    planRoutes(ctx);
    planPolicies(ctx);
    planRules(ctx);
    planSavedQueries(ctx);
    planSchedules(ctx);
    planCollectorSettings(ctx);
    return steps;
  }

  function result(steps: Step[], dryRun: boolean, applied: boolean): ImportResult {
    const summary = { create: 0, update: 0, unchanged: 0, conflict: 0 };
    for (const s of steps) summary[s.item.action] += 1;
    return { dry_run: dryRun, applied, summary, items: steps.map((s) => s.item) };
  }

  /** Runs every step in order; an item's refusal (its module's validator) names the item. */
  async function run(steps: Step[], keepIds: boolean): Promise<void> {
    for (const s of steps) {
      if (!s.apply) continue;
      try {
        const id = await s.apply();
        if (keepIds && id !== undefined) s.item.id = id;
      } catch (err) {
        if (!isAppError(err)) throw err;
        throw new AppError(err.code, {
          status: err.status,
          detail: `${s.item.kind} "${s.item.name}": ${err.message}`,
          details: { ...err.details, kind: s.item.kind, name: s.item.name },
        });
      }
    }
  }

  return {
    async export(actor: Actor, requested: number | undefined) {
      const organizationId = await organization(actor, requested);
      const { bundle } = await snapshot(deps, scopeOf(actor), organizationId);
      return bundle;
    },

    async import(actor: Actor, requested: number | undefined, input: ImportInput): Promise<ImportResult> {
      const organizationId = await organization(actor, requested);
      const doc = checkDocument(input.document);
      const dryRun = input.dry_run ?? false;
      const current = await snapshot(deps, scopeOf(actor), organizationId);
      const steps = plan(actor, organizationId, doc, current, input.secrets ?? {});
      const out = () => result(steps, dryRun, !dryRun);
      const conflicts = steps.filter((s) => s.item.action === 'conflict');
      if (conflicts.length && !dryRun) {
        const r = { ...out(), applied: false };
        throw new AppError('config_bundle.conflict', {
          detail: `${conflicts.length} item(s) in conflict, nothing applied: ${conflicts
            .slice(0, 3)
            .map((c) => `${c.item.kind} "${c.item.name}": ${c.item.reason}`)
            .join('; ')}`,
          details: r,
        });
      }
      if (dryRun) {
        // The same writes, undone: a dry run refuses what the apply would refuse.
        if (!conflicts.length) await deps.rolledBack(() => run(steps, false));
        setAuditTarget({
          type: 'config_bundle',
          id: organizationId,
          organizationId,
          details: { dry_run: true, summary: out().summary },
        });
        return out();
      }
      await run(steps, true);
      setAuditTarget({
        type: 'config_bundle',
        id: organizationId,
        organizationId,
        details: {
          dry_run: false,
          summary: out().summary,
          items: steps
            .filter((s) => s.apply)
            .map((s) => ({
              kind: s.item.kind,
              name: s.item.name,
              action: s.item.action,
              ...(s.item.changes ? { changes: s.item.changes } : {}),
            })),
        },
      });
      return out();
    },
  };
}

export type BundleService = ReturnType<typeof createBundleService>;
