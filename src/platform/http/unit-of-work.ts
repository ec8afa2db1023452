// The unit of work of a state-changing operation: the handler's writes and its audit
// entry commit in one transaction, or roll back together and a `failed` entry is written
// on its own. Routes get this by declaration (route() wraps every mutating handler); no
// handler writes audit entries or opens transactions itself.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Actor } from '../../core/actor.js';
import { inTransaction, outsideTransaction } from '../db/ambient.js';
import type { DB } from '../db/index.js';
import { toAppError } from './errors.js';

export type AuditMode = 'transaction' | 'separate' | false;

/** The object an operation acted on (the audit module's entries keep it). */
export interface AuditTarget {
  type?: string;
  id?: string | number;
  organizationId?: number | null;
  /** Extra facts worth keeping (never secrets). */
  details?: Record<string, unknown>;
}

/** One audited operation, as the unit of work hands it to the audit module. */
export interface AuditEvent {
  actor: Actor | undefined;
  operationId: string;
  method: string;
  path: string;
  outcome: 'success' | 'failed' | 'denied' | 'error';
  status: number;
  errorCode?: string;
  correlationId: string;
  target: AuditTarget;
}

/** What the unit of work needs from the audit module. */
export interface AuditRecorder {
  record(e: AuditEvent): Promise<unknown>;
  /** Runs fn with a slot services may fill (setAuditTarget). */
  withTarget<T>(fn: () => Promise<T>): { slot: AuditTarget; result: Promise<T> };
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
  /**
   * A `failed` entry for an audited operation of an authenticated caller that failed before
   * its handler ran (its input broke the contract); nothing when an entry was written already.
   */
  rejected(req: FastifyRequest, op: OperationInfo, err: unknown): Promise<void>;
}

/** Requests whose audit entry is written (or owed by run()), so no error writes a second one. */
const audited = new WeakSet<FastifyRequest>();

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

function derivedTarget(req: FastifyRequest, op: OperationInfo, result: unknown, slot: AuditTarget): AuditTarget {
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

  /** A `failed` (4xx) or `error` (5xx) entry in a transaction of its own. */
  async function recordFailure(req: FastifyRequest, op: OperationInfo, err: unknown, slot: AuditTarget): Promise<void> {
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
    ).catch((auditErr: unknown) =>
      req.log.error({ err: auditErr }, 'could not record the failed operation in the audit trail'),
    );
  }

  return {
    async run(req, reply, op, fn) {
      if (op.audit === false) return fn();
      audited.add(req);
      const { slot, result } = audit.withTarget(async () => {
        if (op.audit === 'separate') return fn();
        return inTransaction(db, async () => {
          const value = await fn();
          // A reply sent from inside the transaction reaches the client before the commit:
          // the client may then read state that is not there yet. Handlers return values.
          if (reply.sent)
            req.log.error(
              { operationId: op.operationId },
              'handler sent its reply before the transaction committed; return the value instead',
            );
          await audit.record({
            ...base(req, op),
            outcome: 'success',
            status: reply.statusCode,
            target: derivedTarget(req, op, value, slot),
          });
          return value;
        });
      });
      try {
        const value = await result;
        if (op.audit === 'separate') {
          await inTransaction(db, () =>
            audit.record({
              ...base(req, op),
              outcome: 'success',
              status: reply.statusCode,
              target: derivedTarget(req, op, value, slot),
            }),
          );
        }
        return value;
      } catch (err) {
        await recordFailure(req, op, err, slot);
        throw err;
      }
    },

    async rejected(req, op, err) {
      if (op.audit === false || !req.actor || audited.has(req)) return;
      audited.add(req);
      // No service ran to name the target: the path parameter names its kind (user_id: user).
      const param = Object.keys((req.params ?? {}) as Record<string, unknown>)[0];
      const kind = param?.endsWith('_id') ? param.slice(0, -3) : undefined;
      await recordFailure(req, op, err, kind ? { type: kind === 'org' ? 'organization' : kind } : {});
    },

    async denied(req, op, status, code) {
      if (op.audit === false || !req.actor) return;
      audited.add(req);
      await inTransaction(db, () =>
        audit.record({
          ...base(req, op),
          outcome: 'denied',
          status,
          errorCode: code,
          target: derivedTarget(req, op, undefined, {}),
        }),
      );
    },
  };
}

/** The default for a route: mutating methods are audited in their transaction. */
export function defaultAuditMode(method: string): AuditMode {
  return ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method.toUpperCase()) ? 'transaction' : false;
}

/** The operation a request is routed to, as the unit of work sees it. */
export function operationOf(request: FastifyRequest): OperationInfo {
  const config = request.routeOptions.config;
  return {
    operationId: config.operationId ?? 'unknown',
    method: request.method,
    url: request.routeOptions.url ?? request.url,
    audit: config.audit ?? false,
  };
}

/** On the API scope: an operation refused before its handler (bad input) is still audited. */
export function auditRejections(app: FastifyInstance): void {
  app.addHook('onError', async (request, _reply, error) => {
    if (!request.routeOptions.config.operationId) return;
    await app.unitOfWork.rejected(request, operationOf(request), error);
  });
}
