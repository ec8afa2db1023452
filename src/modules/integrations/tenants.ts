// Managed-provider tenants. A parent integration (config.partner: true on a platform whose
// connector discovers tenants) lists the customer tenants its vendor account manages.
// partner-tenants asks the vendor live and stores nothing; sync-tenants stores the discovery
// (present flag), selects new tenants the auto-approve policy accepts, and on Enterprise
// materializes every selected tenant as a child integration: same organization and platform,
// parent_id = the parent, external_tenant_id = the tenant, config {collect: true}; the
// credentials stay the parent's (collectTarget merges them). On Community the discovery and
// the selections are stored and nothing is materialized (a warning says so).
import type { Actor } from '../../core/actor.js';
import type { SizedPage } from '../../core/paging.js';
import { pageBody, pageToOffset } from '../../core/paging.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import { callVendor, type VendorFailure } from '../../connectors/call.js';
import type { TenantInfo } from '../../connectors/sdk.js';
import { setAuditTarget } from '../audit/service.js';
import { findIntegration, nameMatcher, policyOf, requireManagedProvider, type OpsDeps } from './collection-settings.js';
import type { IntegrationRow } from './store.js';
import type { TenantFilter, TenantRow } from './tenant-store.js';

export const COMMUNITY_WARNING =
  'Materializing tenants as child integrations needs the Enterprise edition: the discovery and the selections are stored, no child integration was created';
/** Most tenants one discovery keeps (a vendor answering more is refused as invalid). */
export const MAX_DISCOVERED = 10_000;
const NAME_MAX = 200;

function tenantView(t: TenantRow) {
  return {
    external_id: t.external_id,
    name: t.name,
    domain: t.domain,
    details: t.details ?? {},
    selected: t.selected,
    selected_at: t.selected_at,
    child_integration_id: t.child_integration_id,
    present: t.present,
    first_seen_at: t.first_seen_at,
    last_seen_at: t.last_seen_at,
  };
}

/** What the vendor said, made storable: one entry per id, names bounded. */
function cleanDiscovery(list: TenantInfo[]): TenantInfo[] | VendorFailure {
  if (!Array.isArray(list))
    return { kind: 'invalid_response', message: 'the connector did not return a list of tenants', status: null };
  if (list.length > MAX_DISCOVERED)
    return { kind: 'invalid_response', message: `the vendor lists more than ${MAX_DISCOVERED} tenants`, status: null };
  const byId = new Map<string, TenantInfo>();
  for (const t of list) {
    if (typeof t?.external_id !== 'string' || t.external_id === '' || t.external_id.length > NAME_MAX) continue;
    const name = typeof t.name === 'string' && t.name.trim() ? t.name.trim().slice(0, NAME_MAX) : t.external_id;
    byId.set(t.external_id, {
      external_id: t.external_id,
      name,
      domain: typeof t.domain === 'string' ? t.domain.slice(0, NAME_MAX) : null,
      details: t.details ?? {},
    });
  }
  return [...byId.values()];
}

function childNames(parent: IntegrationRow, t: TenantRow): string[] {
  const base = `${parent.name} / ${t.name}`.slice(0, NAME_MAX);
  const withId = `${parent.name.slice(0, 80)} / ${t.name.slice(0, 60)} (${t.external_id.slice(0, 50)})`;
  return [base, withId, ...[2, 3, 4, 5].map((n) => `${withId.slice(0, NAME_MAX - 4)} #${n}`)];
}

export function createTenantService(deps: OpsDeps) {
  const { tenants, clock, connectorFor, integrations, runtime, editions, transaction } = deps;

  async function parentOf(scope: Scope, id: number) {
    const row = await findIntegration(deps, scope, id);
    return { row, connector: requireManagedProvider(row, connectorFor(row.platform)) };
  }

  async function discover(row: IntegrationRow, connector: Awaited<ReturnType<typeof parentOf>>['connector']) {
    const target = await integrations.collectTarget(row);
    const outcome = await callVendor(
      runtime,
      { key: row.id, config: target.config, secrets: target.secrets, tenantId: null },
      (ctx) => connector.tenants.discover(ctx),
      {
        timeoutMs: 60_000,
        maxRetryWaitMs: 5_000,
      },
    );
    if (!outcome.ok) return outcome;
    const cleaned = cleanDiscovery(outcome.value);
    return Array.isArray(cleaned)
      ? { ...outcome, value: cleaned }
      : { ok: false as const, error: cleaned, latencyMs: outcome.latencyMs };
  }

  /**
   * Creates the missing child integration of every selected, present tenant in `candidates`
   * (and switches back on the inactive children of `reactivate`). Runs under the parent's lock.
   */
  async function materialize(
    parent: IntegrationRow,
    candidates: TenantRow[],
    now: Date,
    reactivate = false,
  ): Promise<{ created: number[]; reactivated: number }> {
    const created: number[] = [];
    for (const t of candidates) {
      if (!t.selected || !t.present || t.child_integration_id !== null) continue;
      const childId = await tenants.insertChild(
        {
          organization_id: parent.organization_id,
          parent_id: parent.id,
          platform: parent.platform,
          external_tenant_id: t.external_id,
          config: { collect: true },
          names: childNames(parent, t),
        },
        now,
      );
      if (childId === undefined) continue; // every candidate name taken: left for the next sync
      await tenants.linkChild(parent.id, t.external_id, childId);
      created.push(childId);
    }
    const existing = candidates
      .filter((t) => t.selected && t.present && t.child_integration_id !== null)
      .map((t) => t.child_integration_id!);
    const reactivated = reactivate ? await tenants.setChildrenActive(parent.id, existing, true, now) : 0;
    return { created, reactivated };
  }

  return {
    async partnerTenants(scope: Scope, id: number) {
      const { row, connector } = await parentOf(scope, id);
      const outcome = await discover(row, connector);
      const fetchedAt = clock.now();
      if (!outcome.ok)
        return {
          ok: false,
          error: outcome.error,
          fetched_at: fetchedAt,
          latency_ms: outcome.latencyMs,
          total: 0,
          tenants: [],
        };
      const stored = new Map(
        (
          await tenants.byIds(
            row.id,
            outcome.value.map((t) => t.external_id),
          )
        ).map((t) => [t.external_id, t]),
      );
      const list = outcome.value.map((t) => {
        const known = stored.get(t.external_id);
        return {
          external_id: t.external_id,
          name: t.name,
          domain: t.domain ?? null,
          details: t.details ?? {},
          stored: Boolean(known),
          selected: known?.selected ?? false,
          child_integration_id: known?.child_integration_id ?? null,
        };
      });
      return {
        ok: true,
        error: null,
        fetched_at: fetchedAt,
        latency_ms: outcome.latencyMs,
        total: list.length,
        tenants: list,
      };
    },

    async sync(actor: Actor, id: number) {
      const { row, connector } = await parentOf(scopeOf(actor), id);
      const outcome = await discover(row, connector);
      const enterprise = await editions.isEnterprise();
      const now = clock.now();
      const base = { edition: enterprise ? 'enterprise' : 'community', synced_at: now, latency_ms: outcome.latencyMs };
      if (!outcome.ok) {
        await transaction(() =>
          tenants.recordSync({
            integration_id: row.id,
            organization_id: row.organization_id,
            status: 'failed',
            discovered: 0,
            materialized: 0,
            error: `${outcome.error.kind}: ${outcome.error.message}`,
            warning: null,
            synced_at: now,
          }),
        );
        setAuditTarget({ organizationId: row.organization_id, details: { ok: false, error_kind: outcome.error.kind } });
        return {
          ok: false,
          error: outcome.error,
          ...base,
          discovered: 0,
          added: 0,
          gone: 0,
          auto_selected: 0,
          selected: 0,
          materialized: 0,
          warning: null,
        };
      }
      const result = await transaction(async () => {
        await tenants.lockParent(row.id);
        const { added, gone } = await tenants.recordDiscovery(row.id, row.organization_id, outcome.value, now);
        // The policy as stored now (it may have changed while the vendor answered).
        const fresh = (await integrations.find(scopeOf(actor), row.id)) ?? row;
        const policy = policyOf(fresh);
        let autoSelected: string[] = [];
        if (policy.enabled && added.length > 0) {
          const matches = nameMatcher(policy.name_pattern);
          const names = new Map(outcome.value.map((t) => [t.external_id, t.name]));
          autoSelected = added.filter((x) => matches(names.get(x) ?? x));
          if (policy.max_tenants !== null)
            autoSelected = autoSelected.slice(
              0,
              Math.max(0, policy.max_tenants - (await tenants.countSelected(row.id))),
            );
          await tenants.setSelected(row.id, autoSelected, true, now);
        }
        const created = enterprise ? (await materialize(row, await tenants.all(row.id), now)).created : [];
        const selected = await tenants.countSelected(row.id);
        const warning = enterprise ? null : COMMUNITY_WARNING;
        await tenants.recordSync({
          integration_id: row.id,
          organization_id: row.organization_id,
          status: 'succeeded',
          discovered: outcome.value.length,
          materialized: created.length,
          error: null,
          warning,
          synced_at: now,
        });
        return {
          added: added.length,
          gone,
          auto_selected: autoSelected.length,
          selected,
          materialized: created.length,
          children: created,
          warning,
        };
      });
      setAuditTarget({
        organizationId: row.organization_id,
        details: {
          ok: true,
          discovered: outcome.value.length,
          added: result.added,
          auto_selected: result.auto_selected,
          materialized: result.children,
        },
      });
      const { children: _children, ...counts } = result;
      return { ok: true, error: null, ...base, discovered: outcome.value.length, ...counts };
    },

    async list(scope: Scope, id: number, f: TenantFilter, page: SizedPage) {
      const row = await findIntegration(deps, scope, id);
      const { items, total } = await tenants.list(row.id, f, pageToOffset(page));
      return pageBody(items.map(tenantView), total, page);
    },

    async select(scope: Scope, id: number, externalIds: string[], selected: boolean) {
      const { row } = await parentOf(scope, id);
      const distinct = [...new Set(externalIds)];
      const now = clock.now();
      await tenants.lockParent(row.id);
      const found = await tenants.byIds(row.id, distinct);
      const known = new Set(found.map((t) => t.external_id));
      const missing = distinct.filter((x) => !known.has(x));
      const updated = await tenants.setSelected(row.id, [...known], selected, now);
      const enterprise = await editions.isEnterprise();
      let materialized: number[] = [];
      let reactivated = 0;
      let deactivated = 0;
      if (enterprise && selected) {
        const fresh = await tenants.byIds(row.id, [...known]);
        ({ created: materialized, reactivated } = await materialize(row, fresh, now, true));
      } else if (enterprise) {
        // Deselected: its child stops collecting but keeps its history (delete it to remove it).
        deactivated = await tenants.setChildrenActive(
          row.id,
          found.flatMap((t) => (t.child_integration_id !== null ? [t.child_integration_id] : [])),
          false,
          now,
        );
      }
      const notPresent = found.filter((t) => !t.present).length;
      setAuditTarget({
        organizationId: row.organization_id,
        details: { selected, external_ids: [...known], not_found: missing, materialized, deactivated },
      });
      return {
        requested: distinct.length,
        selected,
        updated,
        unchanged: found.length - updated,
        not_found: missing.length,
        materialized: materialized.length,
        reactivated,
        deactivated,
        not_present: notPresent,
        warning: enterprise ? null : COMMUNITY_WARNING,
        errors: missing.map((external_id) => ({
          external_id,
          code: 'integration.unknown_tenant',
          detail: 'The tenant was not discovered for this integration (POST sync-tenants discovers them)',
        })),
      };
    },
  };
}

export type TenantService = ReturnType<typeof createTenantService>;
