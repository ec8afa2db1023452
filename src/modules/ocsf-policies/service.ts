// OCSF output policy per organization (strict: invalid output is quarantined, the default;
// lenient: delivered and flagged) and the conformance report built from the worker's
// daily counters. Organizations outside the caller's scope are "not found".
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { errors } from '../../core/errors.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import { setAuditTarget } from '../audit/service.js';
import type { ComplianceRow, OcsfPolicyStore, PolicyMode, PolicyRow } from './store.js';

export const DEFAULT_MODE: PolicyMode = 'strict';

export interface OcsfPolicyDeps {
  store: OcsfPolicyStore;
  clock: Clock;
  /** The caption of an OCSF class, or null when the catalog does not know it. */
  className: (classUid: number) => string | null;
}

export interface ComplianceQuery {
  days: number;
  organizationId?: number;
  integrationId?: number;
}

const rate = (valid: number, invalid: number) => (valid + invalid === 0 ? null : valid / (valid + invalid));

function represent(row: PolicyRow) {
  return {
    organization_id: row.organization_id,
    organization_name: row.organization_name,
    mode: row.mode ?? DEFAULT_MODE,
    is_default: row.mode === null,
    updated_at: row.updated_at,
  };
}

/** The UTC day `days - 1` days before now: a window of `days` days, today included. */
export function windowStart(now: Date, days: number): string {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1)));
  return start.toISOString().slice(0, 10);
}

export function createOcsfPolicyService(deps: OcsfPolicyDeps) {
  const { store, clock, className } = deps;

  function entry(row: ComplianceRow) {
    return { ...row, class_name: className(row.class_uid), compliance_rate: rate(row.valid, row.invalid) };
  }

  return {
    async list(scope: Scope) {
      return { items: (await store.list(scope)).map(represent) };
    },

    async set(actor: Actor, organizationId: number, mode: PolicyMode) {
      const scope = scopeOf(actor);
      const before = await store.get(scope, organizationId);
      if (!before) throw errors.notFound('Organization');
      await store.upsert(organizationId, mode, actor.kind === 'user' ? actor.id : null);
      const after = await store.get(scope, organizationId);
      if (!after) throw errors.notFound('Organization');
      setAuditTarget({
        type: 'ocsf_policy',
        id: organizationId,
        organizationId,
        details: { from: before.mode ?? DEFAULT_MODE, to: mode },
      });
      return represent(after);
    },

    async compliance(scope: Scope, query: ComplianceQuery) {
      const sinceDay = windowStart(clock.now(), query.days);
      const rows = await store.compliance(scope, {
        sinceDay,
        organizationId: query.organizationId,
        integrationId: query.integrationId,
      });
      const items = rows.map(entry);
      const valid = items.reduce((n, i) => n + i.valid, 0);
      const invalid = items.reduce((n, i) => n + i.invalid, 0);
      return {
        window_days: query.days,
        since_day: sinceDay,
        items,
        totals: { valid, invalid, compliance_rate: rate(valid, invalid) },
      };
    },
  };
}

export type OcsfPolicyService = ReturnType<typeof createOcsfPolicyService>;
