// The quarantine rules: events that failed normalization wait here until someone discards
// them or reprocesses them with the current live mapping. Ids outside the caller's scope
// are "not found", in bulk calls too (never 403). Every mutating operation runs inside the
// route's unit of work, so the rows change in the same transaction as the audit entry.
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import type { QuarantineKind } from '../../pipeline/envelope.js';
import { MAX_BULK_IDS } from '../../platform/http/schemas.js';
import { setAuditTarget } from '../audit/service.js';
import type { ReprocessItem } from '../normalization/index.js';
import type { AttemptOutcome, QuarantineEntryRow, QuarantineFilter, QuarantineRow, QuarantineStore } from './store.js';

export type { ReprocessItem };

/** How one event went; error_kind and error_detail say why when ok is false. */
export interface ReprocessOutcome extends AttemptOutcome {
  error_kind?: QuarantineKind;
}

/**
 * What the quarantine needs from normalization (implemented by the normalization module):
 * normalize with the current live mapping, send the successes on down the pipeline inside
 * the caller's transaction, and say per event how it went. It never touches quarantine rows.
 */
export interface Reprocessor {
  reprocess(items: ReprocessItem[]): Promise<ReprocessOutcome[]>;
}

export interface BulkError {
  id: string;
  code: 'resource.not_found' | 'quarantine.already_reprocessed';
  detail: string;
}

export interface QuarantineDeps {
  store: QuarantineStore;
  reprocessor: Reprocessor;
  clock: Clock;
}

const notFound = () => errors.notFound('Quarantined event');
const notFoundError = (id: string): BulkError => ({ id, code: 'resource.not_found', detail: 'not found' });

/** One organization named in the audit entry when the rows all belong to it. */
function auditOrganization(rows: { organization_id: number }[]): { organizationId?: number } {
  const orgs = new Set(rows.map((r) => r.organization_id));
  return orgs.size === 1 ? { organizationId: [...orgs][0] } : {};
}

export function createQuarantineService(deps: QuarantineDeps) {
  const { store, reprocessor, clock } = deps;

  /** Locks the rows of the distinct ids in scope; the others are reported as not found. */
  async function lockRows(
    scope: Scope,
    ids: string[],
  ): Promise<{ rows: QuarantineRow[]; missing: string[]; requested: number }> {
    const distinct = [...new Set(ids.map((id) => id.toLowerCase()))];
    const rows = await store.lock(scope, distinct.filter(isUuid));
    const found = new Set(rows.map((r) => r.id));
    return { rows, missing: distinct.filter((id) => !found.has(id)), requested: distinct.length };
  }

  async function attempt(rows: QuarantineRow[]): Promise<ReprocessOutcome[]> {
    if (rows.length === 0) return [];
    const items = rows.map((r) => ({
      id: r.id,
      organization_id: r.organization_id,
      integration_id: r.integration_id,
      stream: r.stream,
      received_at: r.received_at,
      raw: r.raw as Record<string, unknown>,
    }));
    const outcomes = await reprocessor.reprocess(items);
    const byId = new Map(outcomes.map((o) => [o.id, o]));
    const ordered = rows.flatMap((r) => byId.get(r.id) ?? []);
    // A row the reprocessor did not answer for would otherwise stay silently as it was.
    if (ordered.length !== rows.length) {
      throw new Error(`Normalization returned no outcome for ${rows.length - ordered.length} reprocessed event(s)`);
    }
    await store.recordAttempts(ordered, clock.now());
    return ordered;
  }

  return {
    list(scope: Scope, f: QuarantineFilter, page: OffsetPage): Promise<{ items: QuarantineEntryRow[]; total: number }> {
      return store.list(scope, f, page);
    },

    async ids(scope: Scope, f: QuarantineFilter) {
      const { ids, total } = await store.ids(scope, f, MAX_BULK_IDS);
      return { ids, total, truncated: total > ids.length };
    },

    async get(scope: Scope, id: string): Promise<QuarantineEntryRow & { raw: Record<string, unknown> }> {
      const row = isUuid(id) ? await store.get(scope, id.toLowerCase()) : undefined;
      if (!row) throw notFound();
      return { ...row, raw: row.raw as Record<string, unknown> };
    },

    async discard(scope: Scope, id: string): Promise<void> {
      const { rows } = await lockRows(scope, isUuid(id) ? [id] : []);
      const row = rows[0];
      if (!row) throw notFound();
      await store.remove([row.id]);
      setAuditTarget({
        type: 'quarantine_event',
        id: row.id,
        organizationId: row.organization_id,
        details: { integration_id: row.integration_id, stream: row.stream, error_kind: row.error_kind },
      });
    },

    async bulkDiscard(scope: Scope, ids: string[]) {
      const { rows, missing, requested } = await lockRows(scope, ids);
      const discarded = await store.remove(rows.map((r) => r.id));
      setAuditTarget({
        type: 'quarantine_event',
        ...auditOrganization(rows),
        details: { discarded: discarded, ids: rows.map((r) => r.id), not_found: missing },
      });
      return { requested, discarded, errors: missing.map(notFoundError) };
    },

    async reprocess(scope: Scope, id: string): Promise<QuarantineEntryRow> {
      const { rows } = await lockRows(scope, isUuid(id) ? [id] : []);
      const row = rows[0];
      if (!row) throw notFound();
      if (row.status === 'reprocessed') {
        throw new AppError('quarantine.already_reprocessed', {
          detail: `Event ${row.id} was already reprocessed at ${row.reprocessed_at?.toISOString() ?? 'an earlier time'}`,
          details: { id: row.id },
        });
      }
      const [outcome] = await attempt([row]);
      setAuditTarget({
        type: 'quarantine_event',
        id: row.id,
        organizationId: row.organization_id,
        details: { ok: outcome?.ok, error_kind: outcome?.ok ? undefined : outcome?.error_kind },
      });
      const updated = await store.getEntry(scope, row.id);
      if (!updated) throw notFound();
      return updated;
    },

    async bulkReprocess(scope: Scope, ids: string[]) {
      const { rows, missing, requested } = await lockRows(scope, ids);
      const pending = rows.filter((r) => r.status === 'quarantined');
      const already = rows.filter((r) => r.status !== 'quarantined');
      const outcomes = await attempt(pending);
      const before = new Map(pending.map((r) => [r.id, r]));
      const failures = outcomes
        .filter((o) => !o.ok)
        .map((o) => ({
          id: o.id,
          error_kind: o.error_kind ?? before.get(o.id)?.error_kind ?? '',
          error_detail: o.error_detail ?? before.get(o.id)?.error_detail ?? '',
          mapping_version_id: o.mapping_version_id,
        }));
      const reprocessed = outcomes.length - failures.length;
      const errs: BulkError[] = [
        ...missing.map(notFoundError),
        ...already.map((r): BulkError => ({
          id: r.id,
          code: 'quarantine.already_reprocessed',
          detail: 'already reprocessed',
        })),
      ];
      setAuditTarget({
        type: 'quarantine_event',
        ...auditOrganization(rows),
        details: {
          reprocessed,
          failed: failures.length,
          ids: pending.map((r) => r.id),
          not_found: missing,
          already_reprocessed: already.map((r) => r.id),
        },
      });
      return { requested, reprocessed, failed: failures.length, failures, errors: errs };
    },
  };
}

export type QuarantineService = ReturnType<typeof createQuarantineService>;
