// Organizations: the tenants. Creation respects the edition's ceiling; deleting an
// organization's data is irreversible, confirmed by an exact text, and runs as a job
// (jobs.ts). Everything outside the caller's scope reads as not found.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { pageToOffset, type SizedPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { setAuditTarget } from '../audit/service.js';
import type { EditionState } from '../licenses/service.js';
import type { OrganizationRow, OrganizationStore } from './store.js';

export const CASE_MANAGEMENT_NOT_CONFIGURED = 'case management is not configured';

export interface OrganizationServiceDeps {
  store: OrganizationStore;
  clock: Clock;
  editions: { current(): Promise<EditionState> };
  /** Queues the data-deletion job of a recorded request. */
  enqueueDeletion(deletionId: string): Promise<void>;
  /** Drops cached credentials of a principal whose organization is going away. */
  invalidateOwner(owner: { kind: 'user' | 'service_account'; id: number }): Promise<void>;
  /** The case-management system's customer of an organization; undefined when none is configured. */
  caseCustomers?: {
    resolveCustomer(org: {
      id: number;
      name: string;
      case_customer_id: string | null;
    }): Promise<
      | { action: 'verified' | 'found_by_name' | 'created'; customer: { id: string; name: string }; replaced?: string }
      | undefined
    >;
  };
}

/** What a module sets up in every new organization (the event store and its route), as the creator; returns what to audit. */
export type OrganizationProvisioner = (
  org: { id: number; name: string },
  actor: Actor,
) => Promise<Record<string, unknown>>;

export function confirmationText(name: string): string {
  return `DELETE ${name}`;
}

/** What the event store's retention removed of an organization's events. */
function removedOf(org: OrganizationRow): { removed: number; last_removed_at: string | null } {
  return {
    removed: Number(org.store_removed),
    last_removed_at: org.store_removed_at ? new Date(org.store_removed_at).toISOString() : null,
  };
}

export function createOrganizationService(deps: OrganizationServiceDeps) {
  const { store, clock } = deps;
  const provisioners: OrganizationProvisioner[] = [];

  /** Drops the cached token verifications of an organization's users and service accounts. */
  async function dropCredentials(id: number): Promise<{ users: number[]; serviceAccounts: number[] }> {
    const principals = await store.principalsOf(id);
    for (const uid of principals.users) await deps.invalidateOwner({ kind: 'user', id: uid });
    for (const sid of principals.serviceAccounts) await deps.invalidateOwner({ kind: 'service_account', id: sid });
    return principals;
  }

  async function mustGet(scope: Scope, id: number): Promise<OrganizationRow> {
    const org = await store.get(scope, id);
    if (!org) throw errors.notFound('Organization');
    return org;
  }

  function cleanName(name: string): string {
    const trimmed = name.trim();
    if (!trimmed) throw errors.validation('name must not be blank', { field: 'name' });
    return trimmed;
  }

  const nameTaken = (name: string) =>
    errors.conflict(`An organization named "${name}" already exists`, { field: 'name' });

  async function guardName<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken(name);
      throw err;
    }
  }

  return {
    async list(scope: Scope, page: SizedPage) {
      return store.list(scope, pageToOffset(page));
    },

    get: mustGet,

    /** Adds what every new organization gets (call at wiring time); runs in the creation's transaction. */
    addProvisioner(p: OrganizationProvisioner): void {
      provisioners.push(p);
    },

    /** Creates an organization; with the creator, what every organization starts with is set up too (provisioners). */
    async create(input: { name: string }, actor?: Actor): Promise<OrganizationRow> {
      const name = cleanName(input.name);
      await store.lockCreation();
      if (await store.nameExists(name)) throw nameTaken(name);
      const edition = await deps.editions.current();
      const count = await store.count();
      if (count >= edition.orgLimit) {
        const plan = edition.edition === 'enterprise' ? 'The Enterprise license' : 'The Community edition';
        throw new AppError('edition.org_limit_reached', {
          detail: `${plan} allows at most ${edition.orgLimit} organizations and ${count} exist`,
          details: { edition: edition.edition, org_limit: edition.orgLimit, organizations: count },
        });
      }
      const org = await guardName(name, () => store.insert(name, clock.now()));
      const provisioned: Record<string, unknown> = {};
      if (actor) for (const p of provisioners) Object.assign(provisioned, await p(org, actor));
      if (Object.keys(provisioned).length > 0)
        setAuditTarget({
          type: 'organization',
          id: org.id,
          organizationId: org.id,
          details: { name: org.name, ...provisioned },
        });
      return org;
    },

    async update(scope: Scope, id: number, patch: { name?: string; is_active?: boolean }): Promise<OrganizationRow> {
      const org = await mustGet(scope, id);
      const name = patch.name === undefined ? undefined : cleanName(patch.name);
      if (name !== undefined && name.toLowerCase() !== org.name.toLowerCase() && (await store.nameExists(name, id)))
        throw nameTaken(name);
      const updated = await guardName(name ?? org.name, () =>
        store.update(id, {
          ...(name !== undefined ? { name } : {}),
          ...(patch.is_active !== undefined ? { is_active: patch.is_active } : {}),
          updated_at: clock.now(),
        }),
      );
      if (!updated) throw errors.notFound('Organization');
      if (patch.is_active !== undefined && patch.is_active !== org.is_active) await dropCredentials(id);
      return updated;
    },

    async remove(scope: Scope, id: number): Promise<void> {
      const org = await mustGet(scope, id);
      // Their rows go by cascade; their cached token verifications must go now.
      const { users, serviceAccounts } = await dropCredentials(id);
      await store.delete(id);
      setAuditTarget({
        type: 'organization',
        id,
        organizationId: id,
        details: { name: org.name, users: users.length, service_accounts: serviceAccounts.length },
      });
    },

    async bulkDeactivate(scope: Scope, ids: number[]) {
      const distinct = [...new Set(ids)];
      const found = await store.findInScope(scope, distinct);
      const byId = new Map(found.map((o) => [o.id, o]));
      const toDeactivate = found.filter((o) => o.is_active).map((o) => o.id);
      const deactivated = await store.deactivate(toDeactivate, clock.now());
      for (const orgId of toDeactivate) await dropCredentials(orgId);
      const switched = new Set(toDeactivate);
      const missing = distinct.filter((id) => !byId.has(id));
      setAuditTarget({ type: 'organization', details: { deactivated: toDeactivate, not_found: missing } });
      return {
        requested: distinct.length,
        deactivated,
        unchanged: found.length - deactivated,
        not_found: missing.length,
        results: distinct.map((id) => ({
          id,
          result: !byId.has(id)
            ? ('not_found' as const)
            : switched.has(id)
              ? ('deactivated' as const)
              : ('unchanged' as const),
        })),
        errors: missing.map((id) => ({ id, code: 'resource.not_found', detail: 'Organization not found' })),
      };
    },

    async retention(scope: Scope, id: number) {
      const org = await mustGet(scope, id);
      return { organization_id: org.id, retention_days: org.retention_days, event_store: removedOf(org) };
    },

    async setRetention(scope: Scope, id: number, days: number) {
      const org = await mustGet(scope, id);
      await store.update(id, { retention_days: days, updated_at: clock.now() });
      setAuditTarget({
        type: 'organization',
        id,
        organizationId: id,
        details: { retention_days: { from: org.retention_days, to: days } },
      });
      return { organization_id: id, retention_days: days, event_store: removedOf(org) };
    },

    /**
     * Records the request and queues the job. Runs outside a request transaction (the
     * route is audited separately) so the job cannot start before its row exists.
     */
    async requestDataDeletion(actor: Actor, scope: Scope, id: number, confirm: string) {
      const org = await mustGet(scope, id);
      const expected = confirmationText(org.name);
      if (confirm !== expected) {
        throw errors.invalid(
          `Deleting this organization's data is irreversible; confirm with the exact text "${expected}"`,
          {
            field: 'confirm',
            expected,
          },
        );
      }
      const deletionId = newId();
      await store.insertDeletion({
        id: deletionId,
        organization_id: id,
        requested_by: actor.kind === 'user' ? actor.id : null,
        now: clock.now(),
      });
      setAuditTarget({ type: 'organization', id, organizationId: id, details: { deletion_id: deletionId } });
      try {
        await deps.enqueueDeletion(deletionId);
      } catch (err) {
        await store.updateDeletion(deletionId, {
          state: 'failed',
          detail: { error: 'could not be queued' },
          finished_at: clock.now(),
        });
        throw new AppError('dependency.unavailable', {
          detail: 'Dependency unavailable: job queue',
          details: { dependency: 'queue' },
          cause: err,
        });
      }
      return { deletion_id: deletionId, organization_id: id, state: 'queued' as const };
    },

    async customerMappings(scope: Scope, id: number) {
      const org = await mustGet(scope, id);
      return {
        organization_id: org.id,
        case_customer_id: org.case_customer_id,
        partner_tenant_ids: org.partner_tenant_ids,
      };
    },

    /**
     * Resolves the organization's customer in the case-management system (by its stored id,
     * else by name, else created) and stores its id. Not configured: 200 {synced: false}.
     */
    async syncCaseCustomer(scope: Scope, id: number) {
      const org = await mustGet(scope, id);
      const resolved = await deps.caseCustomers?.resolveCustomer(org);
      if (!resolved)
        return { synced: false, reason: CASE_MANAGEMENT_NOT_CONFIGURED, case_customer_id: org.case_customer_id };
      const previous = org.case_customer_id;
      if (resolved.customer.id !== previous)
        await store.update(id, { case_customer_id: resolved.customer.id, updated_at: clock.now() });
      setAuditTarget({
        type: 'organization',
        id,
        organizationId: id,
        details: {
          case_customer_id: { from: previous, to: resolved.customer.id },
          action: resolved.action,
          system: 'dfir-iris',
        },
      });
      return {
        synced: true,
        action: resolved.action,
        system: 'dfir-iris' as const,
        case_customer_id: resolved.customer.id,
        customer_name: resolved.customer.name,
        ...(resolved.replaced ? { reason: resolved.replaced } : {}),
      };
    },

    /** Tenant lookups of the internal endpoints. */
    tenants: {
      byId: (scope: Scope, id: number) => store.get(scope, id),
      byCaseCustomer: (scope: Scope, caseCustomerId: string) => store.byCaseCustomer(scope, caseCustomerId),
      byPartnerTenant: (scope: Scope, externalId: string) => store.byPartnerTenant(scope, externalId),
    },
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
