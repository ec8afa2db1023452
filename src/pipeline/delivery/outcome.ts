// What one request's outcome does to each outbox row it carried (docs/delivery.md,
// Delivery lanes): delivered events leave the outbox, refused ones go to the DLQ (shadow
// rows: dropped and counted), retried ones stay with attempts + 1 and a backoff, and the
// part of an oversized row that was not sent stays as it was. Pure: the lane applies the
// result in one transaction, to the rows it still holds.
import { newId } from '../../core/ids.js';
import { redactAndCut, type Redactor } from '../../core/redaction.js';
import { NetError } from '../../platform/net/errors.js';
import { DeliveryError, fromNetError, type SinkResult } from '../sinks/types.js';
import { retryDelayMs } from './backoff.js';
import type { DeliveryKind, DlqRow, LedgerEntry, LineageAttemptRow, RowRewrite } from './engine-port.js';
import type { DeliverySettings } from './settings.js';
import { encodeSubset, type Part } from './sink-batch.js';

export const REASON_MAX = 1000;

export type SendOutcome = { ok: true; result: SinkResult } | { ok: false; error: DeliveryError };

interface Dead {
  index: number;
  error_kind: string;
  reason: string;
  status_code: number | null;
}

export interface RowPlan {
  part: Part;
  delivered: number[];
  dead: Dead[];
  /** Indexes that stay in the outbox; 'all': the row stays unchanged; empty: the row is deleted. */
  remain: number[] | 'all';
  attempts: number;
  delayMs: number;
  lastError: string | null;
  /** For lineage_attempts. */
  outcome: LineageAttemptRow['outcome'];
  statusCode: number | null;
}

const cap = (s: string) => (s.length > REASON_MAX ? `${s.slice(0, REASON_MAX - 1)}…` : s);
const range = (from: number, to: number) => Array.from({ length: Math.max(to - from, 0) }, (_, i) => from + i);

export function planRows(
  parts: Part[],
  sent: SendOutcome,
  settings: DeliverySettings,
  random: () => number = Math.random,
): RowPlan[] {
  if (!sent.ok) return parts.map((part) => planFailure(part, sent.error, settings, random));
  const rejected = new Map((sent.result.rejected ?? []).map((r) => [r.index, r]));
  const retry = new Map((sent.result.retry ?? []).map((r) => [r.index, r]));
  let offset = 0;
  return parts.map((part) => {
    const delivered: number[] = [];
    const dead: Dead[] = [];
    const again: number[] = [];
    let retryReason = '';
    let retryStatus: number | null = null;
    for (let i = 0; i < part.take; i++) {
      const r = rejected.get(offset + i);
      const t = r ? undefined : retry.get(offset + i);
      if (r) dead.push({ index: i, error_kind: 'rejected', reason: cap(r.reason), status_code: r.statusCode ?? null });
      else if (t) {
        again.push(i);
        retryReason = t.reason;
        retryStatus = t.statusCode ?? null;
      } else delivered.push(i);
    }
    offset += part.take;
    const untouched = range(part.take, part.lines.length);
    let attempts = part.row.attempts;
    let delayMs = 0;
    let lastError: string | null = null;
    const remain: number[] = [];
    if (again.length > 0) {
      attempts += 1;
      lastError = cap(retryReason);
      if (attempts >= settings.max_attempts) {
        for (const index of again)
          dead.push({ index, error_kind: 'retries_exhausted', reason: lastError, status_code: retryStatus });
        dead.sort((a, b) => a.index - b.index);
      } else {
        remain.push(...again);
        delayMs = retryDelayMs(settings, attempts, undefined, random);
      }
    }
    remain.push(...untouched);
    const retried = remain.length - untouched.length;
    let outcome: RowPlan['outcome'] = 'partial';
    if (dead.length === 0 && retried === 0) outcome = 'delivered';
    else if (delivered.length === 0 && retried === 0) outcome = 'dead_lettered';
    else if (delivered.length === 0 && dead.length === 0) outcome = 'retry';
    const statusCode = dead[0]?.status_code ?? retryStatus;
    return {
      part,
      delivered,
      dead,
      remain: remain.length === part.lines.length ? 'all' : remain,
      attempts,
      delayMs,
      lastError,
      outcome,
      statusCode,
    };
  });
}

function planFailure(part: Part, error: DeliveryError, settings: DeliverySettings, random: () => number): RowPlan {
  const attempts = part.row.attempts + 1;
  const reason = cap(error.message);
  const statusCode = error.statusCode ?? null;
  const base = { part, delivered: [], attempts, lastError: reason, statusCode };
  const all = range(0, part.lines.length);
  if (error.retryable && attempts < settings.max_attempts) {
    return {
      ...base,
      dead: [],
      remain: 'all',
      delayMs: retryDelayMs(settings, attempts, error.retryAfterMs, random),
      outcome: 'retry',
    };
  }
  const kind = error.retryable ? 'retries_exhausted' : error.kind;
  return {
    ...base,
    dead: all.map((index) => ({ index, error_kind: kind, reason, status_code: statusCode })),
    remain: [],
    delayMs: 0,
    outcome: 'dead_lettered',
  };
}

/** What one row's plan writes; combined across the rows the lane still holds. */
export interface RowSettlement {
  rowId: string;
  kind: DeliveryKind;
  remove: boolean;
  rewrite: RowRewrite | null;
  dlq: DlqRow[];
  ledger: LedgerEntry[];
  delivered: number;
  deliveredBytes: number;
  deadLettered: number;
  /** Per error kind, events dead-lettered (primary and reprocess rows). */
  dlqKinds: Map<string, number>;
  deliveredLines: string[];
  attempt: LineageAttemptRow;
}

export async function settleRow(plan: RowPlan, durationMs: number, tapWanted: boolean): Promise<RowSettlement> {
  const { part } = plan;
  const row = part.row;
  const shadow = row.kind === 'shadow';
  const origin = { organization_id: row.organization_id, integration_id: row.integration_id, stream: row.stream };
  const ledger: LedgerEntry[] = [];
  const dlq: DlqRow[] = [];
  const dlqKinds = new Map<string, number>();
  if (plan.delivered.length > 0) {
    ledger.push({
      ...origin,
      outcome: shadow ? 'shadow_delivered' : 'delivered',
      destination_id: row.destination_id,
      count: plan.delivered.length,
    });
  }
  for (const d of plan.dead) {
    dlqKinds.set(d.error_kind, (dlqKinds.get(d.error_kind) ?? 0) + 1);
    if (shadow) continue;
    dlq.push({
      id: newId(),
      destination_id: row.destination_id,
      ...origin,
      event_id: part.ids[d.index]!,
      delivery_batch_id: row.id,
      event: part.lines[d.index]!,
      error_kind: d.error_kind,
      reason: d.reason,
      status_code: d.status_code,
      attempts: plan.attempts,
    });
  }
  // Shadow copies are never dead-lettered: dropped, counted with the reason.
  for (const [kind, count] of dlqKinds) {
    ledger.push({
      ...origin,
      outcome: shadow ? 'shadow_dropped' : 'dead_lettered',
      destination_id: row.destination_id,
      reason: kind,
      count,
    });
  }
  let rewrite: RowRewrite | null = null;
  if (plan.remain === 'all') {
    rewrite = {
      id: row.id,
      attempts: plan.attempts,
      delay_ms: plan.delayMs,
      last_error: plan.lastError,
      content: null,
    };
  } else if (plan.remain.length > 0) {
    rewrite = {
      id: row.id,
      attempts: plan.attempts,
      delay_ms: plan.delayMs,
      last_error: plan.lastError,
      content: await encodeSubset(part.lines, part.ids, plan.remain),
    };
  }
  const allTaken = plan.delivered.length === part.take;
  let deliveredBytes = 0;
  if (allTaken) deliveredBytes = part.takeBytes ?? 0;
  else for (const i of plan.delivered) deliveredBytes += Buffer.byteLength(part.lines[i]!);
  return {
    rowId: row.id,
    kind: row.kind,
    remove: rewrite === null,
    rewrite,
    dlq,
    ledger,
    delivered: plan.delivered.length,
    deliveredBytes,
    deadLettered: shadow ? 0 : plan.dead.length,
    dlqKinds: shadow ? new Map() : dlqKinds,
    deliveredLines: tapWanted ? plan.delivered.map((i) => part.lines[i]!) : [],
    attempt: {
      id: newId(),
      delivery_batch_id: row.id,
      destination_id: row.destination_id,
      attempt: row.attempts + 1,
      outcome: plan.outcome,
      status_code: plan.statusCode,
      error: plan.lastError ?? plan.dead[0]?.reason ?? null,
      duration_ms: Math.round(durationMs),
    },
  };
}

/** Any failure of a whole request as a DeliveryError (a sink bug becomes a retryable protocol error). */
export function asDeliveryError(err: unknown): DeliveryError {
  if (err instanceof DeliveryError) return err;
  if (err instanceof NetError) return fromNetError(err);
  const message = err instanceof Error ? err.message : String(err);
  return new DeliveryError('protocol', `the sink failed: ${message}`, { retryable: true, cause: err });
}

/**
 * The outcome with every text the engine stores (last_error, dead-letter reasons, lineage
 * attempts) or logs passed through the destination's redactor, whole, before any cut. The
 * error's cause is dropped: nothing downstream can log the unredacted original.
 */
export function redactOutcome(sent: SendOutcome, redact: Redactor): SendOutcome {
  if (!sent.ok) {
    const e = sent.error;
    const message = redactAndCut(redact, e.message, REASON_MAX);
    return {
      ok: false,
      error: new DeliveryError(e.kind, message, {
        retryable: e.retryable,
        statusCode: e.statusCode,
        retryAfterMs: e.retryAfterMs,
      }),
    };
  }
  const { rejected, retry } = sent.result;
  if (!rejected?.length && !retry?.length) return sent;
  // The items of one request often share a reason (one mapping conflict for the whole batch).
  const seen = new Map<string, string>();
  const clean = <T extends { reason: string }>(item: T): T => {
    let reason = seen.get(item.reason);
    if (reason === undefined) seen.set(item.reason, (reason = redactAndCut(redact, item.reason, REASON_MAX)));
    return { ...item, reason };
  };
  return {
    ok: true,
    result: { ...(rejected ? { rejected: rejected.map(clean) } : {}), ...(retry ? { retry: retry.map(clean) } : {}) },
  };
}
