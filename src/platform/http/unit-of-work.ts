// The unit of work of a state-changing operation: the handler's writes and its audit
// entry commit in one transaction, or roll back together and a `failed` entry is written
// on its own. Routes get this by declaration (route() wraps every mutating handler); no
// handler writes audit entries or opens transactions itself.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Actor } from '../../core/actor.js';
import { inTransaction, outsideTransaction } from '../db/ambient.js';
import type { DB } from '../db/index.js';
import { toAppError } from './errors.js';

export type AuditMode = 'transaction' | 'separate' | false;

export interface AuditTargetLike {
  type?: string;
  id?: string | number;
  organizationId?: number | null;
  details?: Record<string, unknown>;
}

/** What the unit of work needs from the audit module. */
export interface AuditRecorder {
  record(e: {
    actor: Actor | undefined;
    operationId: string;
    method: string;
    path: string;
    outcome: 'success' | 'failed' | 'denied' | 'error';
    status: number;
    errorCode?: string;
    correlationId: string;
    target: AuditTargetLike;
  }): Promise<unknown>;
  /** Runs fn with a slot services may fill (setAuditTarget). */
  withTarget<T>(fn: () => Promise<T>): { slot: AuditTargetLike; result: Promise<T> };
}

export interface OperationInfo {
  operationId: string;
  method: string;
  url: string;
  audit: AuditMode;
}

export interface UnitOfWork {
  run<T>(req: FastifyRequest, reply: FastifyReply, op: OperationInfo, fn: () => Promise<T>): Promise<T>;
  denied(req: FastifyRequest, op: OperationInfo, status: number, code: string): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    unitOfWork: UnitOfWork;
  }
}

function firstParam(params: unknown): string | undefined {
  const values = Object.values((params ?? {}) as Record<string, unknown>);
  return values.length ? String(values[0]) : undefined;
}

function orgFrom(params: unknown, result: unknown): number | undefined {
  const p = (params ?? {}) as Record<string, unknown>;
  const r = (result ?? {}) as Record<string, unknown>;
  const v = p.org_id ?? p.organization_id ?? r.organization_id;
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) ? n : undefined;
}

function derivedTarget(req: FastifyRequest, op: OperationInfo, result: unknown, slot: AuditTargetLike): AuditTargetLike {
  const r = (result ?? {}) as Record<string, unknown>;
  const nested = (r.api_token ?? {}) as Record<string, unknown>;
  const id = firstParam(req.params) ?? (r.id as string | number | undefined) ?? (nested.id as number | undefined);
  return {
    type: op.operationId.split('.')[0],
    ...(id !== undefined ? { id } : {}),
    organizationId: orgFrom(req.params, result) ?? null,
    ...Object.fromEntries(Object.entries(slot).filter(([, v]) => v !== undefined)),
  };
}

export function createUnitOfWork(deps: { db: Kysely<DB>; audit: AuditRecorder }): UnitOfWork {
  const { db, audit } = deps;
  const path = (req: FastifyRequest) => req.url.split('?')[0] ?? req.url;
  const base = (req: FastifyRequest, op: OperationInfo) => ({
    actor: req.actor,
    operationId: op.operationId,
    method: op.method,
    path: path(req),
    correlationId: req.id,
  });

  return {
    async run(req, reply, op, fn) {
      if (op.audit === false) return fn();
      const { slot, result } = audit.withTarget(async () => {
        if (op.audit === 'separate') return fn();
        return inTransaction(db, async () => {
          const value = await fn();
          // A reply sent from inside the transaction reaches the client before the commit:
          // the client may then read state that is not there yet. Handlers return values.
          if (reply.sent) req.log.error({ operationId: op.operationId }, 'handler sent its reply before the transaction committed; return the value instead');
          await audit.record({ ...base(req, op), outcome: 'success', status: reply.statusCode, target: derivedTarget(req, op, value, slot) });
          return value;
        });
      });
      try {
        const value = await result;
        if (op.audit === 'separate') {
          await inTransaction(db, () =>
            audit.record({ ...base(req, op), outcome: 'success', status: reply.statusCode, target: derivedTarget(req, op, value, slot) }),
          );
        }
        return value;
      } catch (err) {
        const e = toAppError(err);
        await outsideTransaction(() =>
          inTransaction(db, () =>
            audit.record({
              ...base(req, op),
              outcome: e.status >= 500 ? 'error' : 'failed',
              status: e.status,
              errorCode: e.code,
              target: derivedTarget(req, op, undefined, slot),
            }),
          ),
        ).catch((auditErr: unknown) => req.log.error({ err: auditErr }, 'could not record the failed operation in the audit trail'));
        throw err;
      }
    },

    async denied(req, op, status, code) {
      if (op.audit === false || !req.actor) return;
      await inTransaction(db, () =>
        audit.record({ ...base(req, op), outcome: 'denied', status, errorCode: code, target: derivedTarget(req, op, undefined, {}) }),
      );
    },
  };
}

/** The default for a route: mutating methods are audited in their transaction. */
export function defaultAuditMode(method: string): AuditMode {
  return ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method.toUpperCase()) ? 'transaction' : false;
}
