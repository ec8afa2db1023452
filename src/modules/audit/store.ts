// The audit trail: an append-only, hash-chained log. Each entry's hash covers its content
// and the previous entry's hash; `seq` is gapless, assigned under a lock on the chain head
// in the writer's own transaction. Editing, deleting or reordering a row breaks the chain.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../core/canonical.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';
import { sql, type Kysely, type Selectable, type SqlBool } from 'kysely';
import type { AuditLogTable } from '../../platform/db/schema.js';

export type AuditRow = Selectable<AuditLogTable>;
export type AuditInput = Omit<AuditRow, 'seq' | 'prev_hash' | 'hash'>;

export const GENESIS_HASH = '0'.repeat(64);

export function entryHash(prevHash: string, entry: Omit<AuditRow, 'hash' | 'prev_hash'>): string {
  const content = canonicalJson({ ...entry, at: entry.at.toISOString() });
  return createHash('sha256').update(prevHash).update('\n').update(content).digest('hex');
}

export interface AuditFilter {
  from?: Date;
  to?: Date;
  actorKind?: string;
  actorId?: number;
  operationId?: string;
  organizationId?: number;
  outcome?: string;
  targetType?: string;
  targetId?: string;
  /** With a non-global scope, also the entries without an organization (platform entries). */
  withPlatformEntries?: boolean;
}

export function createAuditStore(db: Kysely<DB>) {
  function filtered(scope: Scope, f: AuditFilter) {
    let q = executor(db).selectFrom('audit_log');
    // Platform entries (no organization) are visible only to a global scope, unless the
    // caller asks for them about an object it may see (a built-in mapping's history).
    if (!scope.global) {
      q = f.withPlatformEntries
        ? q.where(sql<SqlBool>`(audit_log.organization_id is null or ${scoped(scope, 'audit_log.organization_id')})`)
        : q.where(scoped(scope, 'audit_log.organization_id'));
    }
    if (f.from) q = q.where('at', '>=', f.from);
    if (f.to) q = q.where('at', '<', f.to);
    if (f.actorKind) q = q.where('actor_kind', '=', f.actorKind);
    if (f.actorId !== undefined) q = q.where('actor_id', '=', f.actorId);
    if (f.operationId) q = q.where('operation_id', '=', f.operationId);
    if (f.organizationId !== undefined) q = q.where('organization_id', '=', f.organizationId);
    if (f.outcome) q = q.where('outcome', '=', f.outcome);
    if (f.targetType) q = q.where('target_type', '=', f.targetType);
    if (f.targetId !== undefined) q = q.where('target_id', '=', f.targetId);
    return q;
  }

  return {
    /** Appends in the current transaction (the caller's unit of work). */
    async append(input: AuditInput): Promise<AuditRow> {
      const q = executor(db);
      const head = await q
        .selectFrom('audit_chain_head')
        .select(['seq', 'hash'])
        .where('id', '=', 1)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const seq = Number(head.seq) + 1;
      const body = { ...input, seq };
      const hash = entryHash(head.hash, body);
      const row: AuditRow = { ...body, prev_hash: head.hash, hash };
      await q
        .insertInto('audit_log')
        .values({ ...row, details: JSON.stringify(row.details) })
        .execute();
      await q.updateTable('audit_chain_head').set({ seq, hash }).where('id', '=', 1).execute();
      return row;
    },

    async list(
      scope: Scope,
      f: AuditFilter,
      page: { limit: number; offset: number },
    ): Promise<{ items: AuditRow[]; total: number }> {
      const [items, count] = await Promise.all([
        filtered(scope, f).selectAll().orderBy('seq', 'desc').limit(page.limit).offset(page.offset).execute(),
        filtered(scope, f)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(count.n) };
    },

    /** Rows in ascending seq, in batches: callers stream them without buffering the table. */
    async *scan(scope: Scope, f: AuditFilter, batch = 500): AsyncGenerator<AuditRow> {
      let after = 0;
      for (;;) {
        const rows = await filtered(scope, f)
          .selectAll()
          .where('seq', '>', after)
          .orderBy('seq')
          .limit(batch)
          .execute();
        for (const r of rows) yield r;
        if (rows.length < batch) return;
        after = Number(rows[rows.length - 1]?.seq);
      }
    },

    async head(): Promise<{ seq: number; hash: string }> {
      const h = await executor(db)
        .selectFrom('audit_chain_head')
        .select(['seq', 'hash'])
        .where('id', '=', 1)
        .executeTakeFirstOrThrow();
      return { seq: Number(h.seq), hash: h.hash };
    },
  };
}

export type AuditStore = ReturnType<typeof createAuditStore>;
