// Drift review: a new field is ignored (not wanted) or marked mapped (handled by a mapping
// change), one at a time or in bulk; deleting a field forgets it, so it comes back as new
// if the worker sees it again. Ids outside the caller's scope are "not found" (never 403).
import type { Clock } from '../../core/clock.js';
import { errors } from '../../core/errors.js';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { setAuditTarget } from '../audit/service.js';
import type { DriftFilter, DriftRow, DriftStatus, DriftStore } from './store.js';

export interface DriftDeps {
  store: DriftStore;
  clock: Clock;
}

const notFound = () => errors.notFound('Drift field');

function auditOrganization(rows: { organization_id: number }[]): { organizationId?: number } {
  const orgs = new Set(rows.map((r) => r.organization_id));
  return orgs.size === 1 ? { organizationId: [...orgs][0] } : {};
}

export function createDriftService(deps: DriftDeps) {
  const { store, clock } = deps;

  async function setOne(scope: Scope, id: string, status: DriftStatus): Promise<DriftRow> {
    const [row] = await store.lock(scope, [id]);
    if (!row) throw notFound();
    const [updated] = await store.setStatus([row.id], status, clock.now());
    setAuditTarget({
      type: 'drift_field',
      id: row.id,
      organizationId: row.organization_id,
      details: { path: row.path, stream: row.stream, integration_id: row.integration_id, from: row.status, to: status },
    });
    return updated ?? row;
  }

  async function setMany(scope: Scope, ids: string[], status: DriftStatus) {
    const distinct = [...new Set(ids)];
    const rows = await store.lock(scope, distinct);
    const found = new Set(rows.map((r) => r.id));
    const missing = distinct.filter((id) => !found.has(id));
    const updated = await store.setStatus([...found], status, clock.now());
    setAuditTarget({
      type: 'drift_field',
      ...auditOrganization(rows),
      details: { status, ids: [...found], not_found: missing },
    });
    return {
      requested: distinct.length,
      updated: updated.length,
      errors: missing.map((id) => ({ id, code: 'resource.not_found', detail: 'not found' })),
    };
  }

  return {
    list(scope: Scope, f: DriftFilter, page: OffsetPage): Promise<{ items: DriftRow[]; total: number }> {
      return store.list(scope, f, page);
    },
    ignore: (scope: Scope, id: string) => setOne(scope, id, 'ignored'),
    markMapped: (scope: Scope, id: string) => setOne(scope, id, 'mapped'),
    bulkIgnore: (scope: Scope, ids: string[]) => setMany(scope, ids, 'ignored'),
    bulkMarkMapped: (scope: Scope, ids: string[]) => setMany(scope, ids, 'mapped'),

    async remove(scope: Scope, id: string): Promise<void> {
      const [row] = await store.lock(scope, [id]);
      if (!row) throw notFound();
      await store.remove([row.id]);
      setAuditTarget({
        type: 'drift_field',
        id: row.id,
        organizationId: row.organization_id,
        details: { path: row.path, stream: row.stream, integration_id: row.integration_id, status: row.status },
      });
    },
  };
}

export type DriftService = ReturnType<typeof createDriftService>;
