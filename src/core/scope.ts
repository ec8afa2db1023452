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

/**
 * The organization a new object (or a dry run) is for: the one given (404 outside scope or
 * unknown), else the caller's only organization; a platform caller or one with several must say.
 */
export async function targetOrganization(
  store: { organizationExists(id: number): Promise<boolean> },
  scope: Scope,
  requested: number | undefined,
): Promise<number> {
  if (requested !== undefined) {
    if (!inScope(scope, requested) || !(await store.organizationExists(requested)))
      throw errors.notFound('Organization');
    return requested;
  }
  const only = scope.organizationIds[0];
  if (!scope.global && scope.organizationIds.length === 1 && only !== undefined) return only;
  const message = scope.global
    ? 'organization_id is required with platform scope'
    : 'organization_id is required: you belong to several organizations';
  throw errors.validation(message, { errors: [{ location: 'body/organization_id', message: 'is required' }] });
}
