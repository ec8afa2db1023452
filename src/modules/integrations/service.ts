// Integration rules: the platform decides what config is valid; names are unique per
// organization (case-insensitive); parent/child is one level deep and stays inside one
// organization; a parent with active children is removed only on request (cascade);
// removals are limited per user. Anything outside the caller's scope is "not found".
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import type { OffsetPage } from '../../core/paging.js';
import { scopeOf, targetOrganization, type Scope } from '../../core/scope.js';
import { rateLimited } from '../../platform/ratelimit/headers.js';
import type { RateLimiterPort } from '../../platform/ratelimit/port.js';
import { setAuditTarget } from '../audit/service.js';
import { keepSecrets, maskSecrets, type Platform, type PlatformRegistry } from './platforms.js';
import type { IntegrationSecrets } from './secrets.js';
import type { IntegrationFilter, IntegrationRow, IntegrationStore } from './store.js';

export const DELETE_LIMIT = 5;
export const DELETE_WINDOW_MS = 60_000;

export interface CreateInput {
  name: string;
  platform: string;
  organization_id?: number;
  config?: Record<string, unknown>;
  parent_id?: number | null;
  is_active?: boolean;
}

export interface UpdateInput {
  name?: string;
  config?: Record<string, unknown>;
  is_active?: boolean;
  parent_id?: number | null;
}

export interface BulkOutcome {
  requested: number;
  deactivated: number;
  unchanged: number;
  not_found: number;
  errors: { id: number; code: string; detail: string }[];
}

export interface IntegrationDeps {
  store: IntegrationStore;
  platforms: PlatformRegistry;
  secrets: IntegrationSecrets;
  rateLimiter: RateLimiterPort;
  clock: Clock;
}

const notFound = () => errors.notFound('Integration');

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed)
    throw errors.validation('body/name must not be blank', {
      errors: [{ location: 'body/name', message: 'must not be blank' }],
    });
  return trimmed;
}

export function createIntegrationService(deps: IntegrationDeps) {
  const { store, platforms, rateLimiter, clock, secrets } = deps;

  function platformOf(name: string): Platform {
    const platform = platforms.get(name);
    if (!platform) {
      throw new AppError('integration.unknown_platform', {
        detail: `Unknown platform "${name}"; GET /api/integrations/platforms lists them`,
        details: { platform: name, known: platforms.list().map((p) => p.name) },
      });
    }
    return platform;
  }

  /** The config to store: placeholders resolved against what is stored, then validated. */
  /** inherited: a managed-provider child's credentials come from its parent, so it is validated with them. */
  function checkedConfig(
    platform: Platform,
    incoming: Record<string, unknown>,
    stored: Record<string, unknown>,
    inherited: Record<string, unknown> = {},
  ): Record<string, unknown> {
    const { config, unresolved } = keepSecrets(platform, incoming, stored);
    const effective: Record<string, unknown> = { ...inherited, ...config };
    // The parent is a partner; the child collects one tenant.
    if (Object.keys(inherited).length > 0 && !('partner' in config)) delete effective.partner;
    const issues = [
      ...unresolved.map((f) => ({
        location: `body/config/${f.replace(/\./g, '/')}`,
        message: 'is a secret with no stored value to keep; send the value',
      })),
      ...(unresolved.length ? [] : platform.validate(effective)),
    ];
    const first = issues[0];
    if (first) {
      throw new AppError('integration.invalid_config', {
        detail: `${first.location} ${first.message}`,
        details: { platform: platform.name, errors: issues },
      });
    }
    return config;
  }

  /** The platform's own checks (platforms.ts ConfigCheck), after the schema's. */
  async function checkedAgainstDeployment(
    platform: Platform,
    config: Record<string, unknown>,
    self: Parameters<NonNullable<Platform['check']>>[1],
  ): Promise<void> {
    const [first, ...rest] = platform.check ? await platform.check(config, self) : [];
    if (first) {
      throw new AppError('integration.invalid_config', {
        detail: `${first.location} ${first.message}`,
        details: { platform: platform.name, errors: [first, ...rest] },
      });
    }
  }

  async function checkedParent(
    scope: Scope,
    parentId: number,
    organizationId: number,
    selfId?: number,
  ): Promise<number> {
    const invalid = (detail: string) =>
      new AppError('integration.invalid_parent', { detail, details: { parent_id: parentId } });
    if (parentId === selfId) throw invalid('An integration cannot be its own parent');
    const parent = await store.get(scope, parentId, 'share');
    // Not found and another organization read the same: the answer confirms nothing.
    if (!parent || parent.organization_id !== organizationId)
      throw invalid('parent_id must name an integration of the same organization');
    if (parent.parent_id !== null)
      throw invalid('parent_id must name a top-level integration: children cannot have children');
    if (selfId !== undefined && (await store.hasChildren(selfId))) {
      throw invalid('An integration that has children cannot become a child');
    }
    return parent.id;
  }

  function represent(row: IntegrationRow) {
    return { ...row, config: maskSecrets(platforms.get(row.platform), row.config ?? {}) };
  }

  function listEntry(row: IntegrationRow) {
    const { config: _config, ...entry } = row;
    return entry;
  }

  return {
    platforms: () =>
      platforms.list().map((p) => ({
        name: p.name,
        display_name: p.display_name,
        kind: p.kind,
        description: p.description,
        config_schema: p.config_schema,
        secret_fields: p.secretFields,
      })),

    /**
     * What a connector needs to call the vendor for this integration: the config with its
     * secrets decrypted, the secret values (to redact from errors), and for a child of a
     * managed-provider parent, the parent's credentials and the customer tenant id.
     * Never return or log the result.
     */
    async collectTarget(
      row: IntegrationRow,
    ): Promise<{ config: Record<string, unknown>; secrets: string[]; tenantId: string | null }> {
      let config = secrets.resolve(row);
      let opened = Object.values(secrets.open(row));
      if (row.parent_id !== null && row.external_tenant_id) {
        // A managed-provider child collects its customer tenant with the parent's credentials;
        // what the child sets itself (collect, interval, filters of its own) wins.
        const parent = await store.byId(row.parent_id);
        if (parent) {
          const own = Object.fromEntries(
            Object.entries(config).filter(
              ([, v]) => !(typeof v === 'object' && v !== null && (v as { configured?: unknown }).configured === true),
            ),
          );
          config = { ...secrets.resolve(parent), partner: false, ...own };
          opened = [...opened, ...Object.values(secrets.open(parent))];
        }
      }
      return { config, secrets: opened, tenantId: row.external_tenant_id ?? null };
    },

    /** For other modules: the row in scope, or undefined (secret fields read as the placeholder; collectTarget opens them). */
    find: (scope: Scope, id: number) => store.get(scope, id),

    async list(scope: Scope, f: IntegrationFilter, page: OffsetPage) {
      const { items, total } = await store.list(scope, f, page);
      return { items: items.map(listEntry), total };
    },

    async get(scope: Scope, id: number) {
      const row = await store.get(scope, id);
      if (!row) throw notFound();
      return represent(row);
    },

    async create(actor: Actor, input: CreateInput) {
      const scope = scopeOf(actor);
      const platform = platformOf(input.platform);
      const organizationId = await targetOrganization(store, scope, input.organization_id);
      const config = checkedConfig(platform, input.config ?? {}, {});
      await checkedAgainstDeployment(platform, config, { organizationId, active: input.is_active ?? true });
      const parentId = input.parent_id == null ? null : await checkedParent(scope, input.parent_id, organizationId);
      const name = cleanName(input.name);
      if (await store.nameExists(organizationId, name)) {
        throw new AppError('integration.name_taken', {
          detail: `An integration named "${name}" already exists in this organization`,
          details: { field: 'name' },
        });
      }
      const { plain, secrets: values } = secrets.split(platform, config);
      const row = await store.insert(
        {
          organization_id: organizationId,
          name,
          platform: platform.name,
          is_active: input.is_active ?? true,
          parent_id: parentId,
          config: plain,
        },
        clock.now(),
      );
      // Sealed after the insert: the row id is the ciphertext's associated data.
      if (Object.keys(values).length > 0) await store.setSecrets(row.id, secrets.seal(row.id, values));
      setAuditTarget({ details: { name, platform: platform.name, parent_id: parentId } });
      return represent(row);
    },

    async update(scope: Scope, id: number, input: UpdateInput) {
      const row = await store.get(scope, id, 'update');
      if (!row) throw notFound();
      const patch: Parameters<IntegrationStore['update']>[1] = { updated_at: clock.now() };
      if (input.name !== undefined) {
        const name = cleanName(input.name);
        if (await store.nameExists(row.organization_id, name, id)) {
          throw new AppError('integration.name_taken', {
            detail: `An integration named "${name}" already exists in this organization`,
            details: { field: 'name' },
          });
        }
        patch.name = name;
      }
      if (input.config !== undefined) {
        const platform = platformOf(row.platform);
        const parent = row.parent_id !== null && row.external_tenant_id ? await store.byId(row.parent_id) : undefined;
        const inherited = parent ? secrets.resolve(parent) : {};
        const { plain, secrets: values } = secrets.split(
          platform,
          checkedConfig(platform, input.config, secrets.resolve(row), inherited),
        );
        patch.config = plain;
        await store.setSecrets(id, secrets.seal(id, values));
      }
      if (input.is_active !== undefined) patch.is_active = input.is_active;
      if (input.config !== undefined || input.is_active === true) {
        await checkedAgainstDeployment(platformOf(row.platform), patch.config ?? row.config ?? {}, {
          integrationId: id,
          organizationId: row.organization_id,
          active: patch.is_active ?? row.is_active,
        });
      }
      if (input.parent_id !== undefined) {
        patch.parent_id =
          input.parent_id === null ? null : await checkedParent(scope, input.parent_id, row.organization_id, id);
      }
      const updated = await store.update(id, patch);
      // Names of the fields changed, never their values (config may hold secrets).
      setAuditTarget({ details: { changed: Object.keys(input).sort() } });
      return represent(updated);
    },

    async remove(actor: Actor, id: number, cascade: boolean): Promise<void> {
      const decision = await rateLimiter.hit(
        `integration-delete:${actor.kind}:${actor.id}`,
        DELETE_LIMIT,
        DELETE_WINDOW_MS,
      );
      if (!decision.allowed)
        throw rateLimited(
          decision,
          (seconds) => `Integration deletion is limited to ${DELETE_LIMIT} per minute; retry in ${seconds} s`,
        );
      const row = await store.get(scopeOf(actor), id, 'update');
      if (!row) throw notFound();
      const children = await store.children(id);
      const active = children.filter((c) => c.is_active).map((c) => c.id);
      setAuditTarget({
        organizationId: row.organization_id,
        details: { name: row.name, platform: row.platform, cascade },
      });
      if (active.length > 0 && !cascade) {
        throw new AppError('integration.has_active_children', {
          detail: `Integration ${id} has ${active.length} active child integration(s); deactivate them or delete with ?cascade=true`,
          details: { active_children: active },
        });
      }
      await store.remove(id);
      setAuditTarget({
        details: { name: row.name, platform: row.platform, cascade, removed_children: children.map((c) => c.id) },
      });
    },

    async bulkDeactivate(scope: Scope, ids: number[]): Promise<BulkOutcome> {
      const distinct = [...new Set(ids)];
      const found = await store.findInScope(scope, distinct);
      const foundIds = new Set(found.map((r) => r.id));
      const missing = distinct.filter((id) => !foundIds.has(id));
      const toDeactivate = found.filter((r) => r.is_active).map((r) => r.id);
      const deactivated = await store.deactivate(toDeactivate, clock.now());
      const orgs = [...new Set(found.map((r) => r.organization_id))];
      setAuditTarget({
        ...(orgs.length === 1 ? { organizationId: orgs[0] } : {}),
        details: { deactivated: toDeactivate, not_found: missing },
      });
      return {
        requested: distinct.length,
        deactivated,
        unchanged: found.length - deactivated,
        not_found: missing.length,
        errors: missing.map((id) => ({ id, code: 'resource.not_found', detail: 'Integration not found' })),
      };
    },
  };
}

export type IntegrationService = ReturnType<typeof createIntegrationService>;
