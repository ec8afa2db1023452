// Audit entries are written by one mechanism (platform/http/unit-of-work.ts) for every
// state-changing operation; services only name their target when the route's params and
// result do not say it (setAuditTarget). verify() walks the chain and says where it breaks.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { csvChunks, type CsvValue } from '../../core/csv.js';
import type { OffsetPage } from '../../core/paging.js';
import { escapeDeep, escapeText } from '../../core/text.js';
import { GLOBAL_SCOPE, scopeOf, type Scope } from '../../core/scope.js';
import type { AuditEvent, AuditTarget } from '../../platform/http/unit-of-work.js';
import { entryHash, GENESIS_HASH, type AuditFilter, type AuditRow, type AuditStore } from './store.js';

const targets = new AsyncLocalStorage<AuditTarget>();

/** Runs fn with a target slot that services fill in with setAuditTarget. */
export function withAuditTarget<T>(fn: () => Promise<T>): { slot: AuditTarget; result: Promise<T> } {
  const slot: AuditTarget = {};
  return { slot, result: targets.run(slot, fn) };
}

/** Names the object the current operation acted on (merged over what the route derived). */
export function setAuditTarget(target: AuditTarget): void {
  const slot = targets.getStore();
  if (slot) Object.assign(slot, target);
}

/** The columns of an entry, in the order of the CSV export. */
export const CSV_COLUMNS = [
  'seq',
  'at',
  'actor_kind',
  'actor_id',
  'actor_name',
  'organization_id',
  'operation_id',
  'method',
  'path',
  'target_type',
  'target_id',
  'outcome',
  'status',
  'error_code',
  'correlation_id',
  'details',
  'hash',
  'prev_hash',
] as const satisfies readonly (keyof AuditRow)[];

export interface ChainReport {
  ok: boolean;
  entries: number;
  headSeq: number;
  /** The first entry whose content, link or sequence does not hold. */
  brokenAt?: number;
  reason?: string;
}

/** An organization id the column can hold (a 32-bit positive integer), or null. */
function storableId(id: number | null | undefined): number | null | undefined {
  if (id === null || id === undefined) return id;
  return Number.isInteger(id) && id > 0 && id <= 2_147_483_647 ? id : null;
}

const clip = (s: string, max: number) => (s.length > max ? `${s.slice(0, max)}…` : s);

export function createAuditService(deps: { store: AuditStore; clock: Clock }) {
  const { store, clock } = deps;
  return {
    async record(e: AuditEvent): Promise<AuditRow> {
      const a = e.actor;
      return store.append({
        at: clock.now(),
        actor_kind: a ? a.kind : 'anonymous',
        actor_id: a ? a.id : null,
        actor_name: a ? a.name : null,
        organization_id:
          storableId(e.target.organizationId) ??
          (a && !a.global && a.organizationIds.length === 1 ? (a.organizationIds[0] ?? null) : null),
        operation_id: e.operationId,
        method: e.method,
        // A failed operation is recorded even when its input was bad: what it named is kept,
        // escaped and cut to a bounded length, never dropped because it cannot be stored.
        path: clip(escapeText(e.path), 2048),
        target_type: e.target.type ?? null,
        target_id: e.target.id === undefined ? null : clip(escapeText(String(e.target.id)), 512),
        outcome: e.outcome,
        status: e.status,
        error_code: e.errorCode ?? null,
        correlation_id: e.correlationId,
        details: escapeDeep(e.target.details ?? {}) as Record<string, unknown>,
      });
    },

    list: (scope: Scope, f: AuditFilter, page: OffsetPage) => store.list(scope, f, page),
    scan: (scope: Scope, f: AuditFilter) => store.scan(scope, f),

    /**
     * GET /api/history/: a caller who manages users sees every entry of its scope; anyone
     * else sees only what they did themselves (in any organization: it is their own record).
     */
    history(actor: Actor, f: Pick<AuditFilter, 'from' | 'to' | 'operationId' | 'outcome'>, page: OffsetPage) {
      if (actor.permissions.has('user.manage')) return store.list(scopeOf(actor), f, page);
      return store.list(GLOBAL_SCOPE, { ...f, actorKind: actor.kind, actorId: actor.id }, page);
    },

    /** The trail as CSV text chunks, read from the store in batches (never buffered whole). */
    csv(scope: Scope, f: AuditFilter): AsyncGenerator<string> {
      return csvChunks(CSV_COLUMNS, store.scan(scope, f), (row) =>
        CSV_COLUMNS.map((c) => (c === 'details' ? JSON.stringify(row.details) : (row[c] as CsvValue))),
      );
    },

    async verify(): Promise<ChainReport> {
      let prev = GENESIS_HASH;
      let expected = 1;
      let entries = 0;
      for await (const row of store.scan(GLOBAL_SCOPE, {})) {
        const seq = Number(row.seq);
        const { hash, prev_hash, ...content } = row;
        if (seq !== expected)
          return {
            ok: false,
            entries,
            headSeq: (await store.head()).seq,
            brokenAt: expected,
            reason: `entry ${expected} is missing`,
          };
        if (prev_hash !== prev)
          return {
            ok: false,
            entries,
            headSeq: (await store.head()).seq,
            brokenAt: seq,
            reason: 'link to the previous entry does not match',
          };
        if (entryHash(prev, { ...content, seq }) !== hash)
          return {
            ok: false,
            entries,
            headSeq: (await store.head()).seq,
            brokenAt: seq,
            reason: 'content does not match its hash',
          };
        prev = hash;
        expected++;
        entries++;
      }
      const head = await store.head();
      if (head.seq !== entries || head.hash !== prev) {
        return {
          ok: false,
          entries,
          headSeq: head.seq,
          brokenAt: entries + 1,
          reason: 'entries after the last one found were removed',
        };
      }
      return { ok: true, entries, headSeq: head.seq };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
