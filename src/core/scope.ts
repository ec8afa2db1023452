// Which organizations a caller may touch. Every store query takes a Scope and filters by
// it through one helper (platform/db/scope.ts); no handler filters by hand.
import type { Actor } from './actor.js';
import { errors } from './errors.js';

export interface Scope {
  /** Platform scope: every organization. */
  global: boolean;
  /** Organizations in scope when not global (may be empty: sees nothing). */
  organizationIds: readonly number[];
}

export const GLOBAL_SCOPE: Scope = Object.freeze({ global: true, organizationIds: [] });

export function scopeOf(actor: Actor): Scope {
  return { global: actor.global, organizationIds: actor.organizationIds };
}

export function inScope(scope: Scope, organizationId: number | null): boolean {
  if (scope.global) return true;
  return organizationId !== null && scope.organizationIds.includes(organizationId);
}

/** What targetOrganization reads: whether an organization exists, and the first few. */
export interface OrganizationLookup {
  organizationExists(id: number): Promise<boolean>;
  /** Up to `limit` organization ids, lowest first. */
  organizationIds(limit: number): Promise<number[]>;
}

/**
 * The organization a new object (or a search, a dry run, an export) is for: the one given
 * (404 outside scope or unknown), else the caller's only organization: a caller of one
 * organization, or a platform (global) caller while exactly one organization exists. Otherwise
 * 422 naming `location`, where the operation takes the field (docs/permissions.md): the body
 * for operations that take one, the query string for those that do not.
 */
export async function targetOrganization(
  store: OrganizationLookup,
  scope: Scope,
  requested: number | undefined,
  location = 'body/organization_id',
): Promise<number> {
  if (requested !== undefined) {
    if (!inScope(scope, requested) || !(await store.organizationExists(requested)))
      throw errors.notFound('Organization');
    return requested;
  }
  if (!scope.global) {
    const only = scope.organizationIds[0];
    if (scope.organizationIds.length === 1 && only !== undefined) return only;
    throw errors.validation(`${location} is required: you belong to several organizations`, {
      errors: [{ location, message: 'is required: you belong to several organizations' }],
    });
  }
  const ids = await store.organizationIds(2);
  const [first] = ids;
  if (ids.length === 1 && first !== undefined) return first;
  const why = ids.length === 0 ? 'no organization exists yet: create one first' : 'there are several organizations';
  throw errors.validation(`${location} is required with platform scope: ${why}`, {
    errors: [{ location, message: `is required: ${why}` }],
  });
}
