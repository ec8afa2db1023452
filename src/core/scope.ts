// Which organizations a caller may touch. Every store query takes a Scope and filters by
// it through one helper (platform/db/scope.ts); no handler filters by hand.
import type { Actor } from './actor.js';

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
