// The dead-letter queue: listing dead letters (masked unless the caller may reprocess them) and
// sending them back to the outbox as new delivery batches, with the ledger moved in step.
import { errors } from '../../core/errors.js';
import { isUuid, newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { encodeRecords } from '../../pipeline/batch-codec.js';
import { deliverySettings, type DeliverySettingsInput } from '../../pipeline/delivery/settings.js';
import { maskEvent } from '../../pipeline/mask.js';
import { redactSecrets } from '../../pipeline/sinks/types.js';
import { setAuditTarget } from '../audit/service.js';
import type { LedgerDelta } from '../delivery/ledger.js';
import { MAX_REPROCESS_ALL } from './schema.js';
import type { DeliveryStatusDeps } from './service.js';
import type { DestinationRow, DlqFilter, DlqRow, NewDeliveryBatch } from './store.js';

export interface ReprocessRequest {
  ids?: string[];
  all?: boolean;
  error_kind?: string;
}

function parseEvent(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { unparsed: text };
  }
}

/** One NDJSON line per event, whatever whitespace the stored text has. */
const asLine = (text: string) => (text.includes('\n') || text.includes('\r') ? JSON.stringify(JSON.parse(text)) : text);

/** One organization named in the audit entry when the rows all belong to it. */
function soleOrganization(rows: { organization_id: number }[]): number | undefined {
  const orgs = new Set(rows.map((r) => r.organization_id));
  return orgs.size === 1 ? [...orgs][0] : undefined;
}

/** The DLQ operations of the service; `visible` is its destination check (404 outside the scope). */
export function dlqOperations(
  deps: Pick<DeliveryStatusDeps, 'store' | 'clock' | 'lineageEnabled'>,
  visible: (scope: Scope, id: string) => Promise<DestinationRow>,
) {
  const { store, clock, lineageEnabled } = deps;

  /** Outbox rows for dead letters: per organization, integration and stream, cut to the destination's batch limits. */
  async function reprocessBatches(dest: DestinationRow, rows: DlqRow[], now: Date): Promise<NewDeliveryBatch[]> {
    const settings = deliverySettings(dest.delivery as DeliverySettingsInput);
    const groups = new Map<string, DlqRow[]>();
    for (const r of [...rows].sort(
      (a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id),
    )) {
      const key = `${r.organization_id}\u0000${r.integration_id}\u0000${r.stream}`;
      const g = groups.get(key);
      if (g) g.push(r);
      else groups.set(key, [r]);
    }
    const out: NewDeliveryBatch[] = [];
    for (const group of groups.values()) {
      let chunk: { row: DlqRow; line: string; bytes: number }[] = [];
      let bytes = 0;
      const flush = async () => {
        if (chunk.length === 0) return;
        const first = chunk[0]!.row;
        out.push({
          id: newId(),
          destination_id: dest.id,
          organization_id: first.organization_id,
          integration_id: first.integration_id,
          stream: first.stream,
          source_batch_id: newId(),
          event_count: chunk.length,
          bytes,
          event_ids: chunk.map((c) => c.row.event_id).join(','),
          events: await encodeRecords(chunk.map((c) => c.line).join('\n')),
          next_attempt_at: now,
        });
        chunk = [];
        bytes = 0;
      };
      for (const row of group) {
        const line = asLine(row.event);
        const size = Buffer.byteLength(line);
        if (chunk.length > 0 && (chunk.length >= settings.max_events || bytes + size > settings.max_bytes))
          await flush();
        chunk.push({ row, line, bytes: size });
        bytes += size;
      }
      await flush();
    }
    return out;
  }

  return {
    async dlqList(scope: Scope, destinationId: string, f: DlqFilter, page: OffsetPage, unmasked: boolean) {
      const dest = await visible(scope, destinationId);
      const { items, total } = await store.dlqList(scope, dest.id, f, page);
      return {
        total,
        items: items.map((r) => {
          const event = parseEvent(r.event);
          return {
            id: r.id,
            event_id: r.event_id,
            organization_id: r.organization_id,
            integration_id: r.integration_id,
            stream: r.stream,
            error_kind: r.error_kind,
            reason: redactSecrets(r.reason),
            status_code: r.status_code,
            attempts: r.attempts,
            status: r.status,
            created_at: r.created_at,
            reprocessed_at: r.reprocessed_at,
            event: unmasked ? event : maskEvent(event),
            event_masked: !unmasked,
          };
        }),
      };
    },

    /**
     * Sends dead letters back to the outbox, in the route's transaction: new `reprocess`
     * delivery batches, the rows marked reprocessed and `dlq_reprocessed` in the ledger
     * commit together, so the ledger balances at every moment.
     */
    async reprocess(scope: Scope, destinationId: string, req: ReprocessRequest) {
      // A destination outside the scope is 404 whatever the body says.
      const dest = await visible(scope, destinationId);
      if ((req.ids === undefined) === (req.all !== true)) {
        throw errors.validation('Give either ids (1 to 500 dead-letter ids) or all: true, not both and not neither');
      }
      if (req.error_kind !== undefined && req.all !== true)
        throw errors.validation('error_kind filters all: true; with ids, name the events instead');
      const now = clock.now();
      let todo: DlqRow[];
      let missing: string[] = [];
      let already: DlqRow[] = [];
      if (req.ids !== undefined) {
        const distinct = [...new Set(req.ids.map((id) => id.toLowerCase()))];
        const rows = await store.lockDlq(scope, dest.id, distinct.filter(isUuid));
        const found = new Set(rows.map((r) => r.id));
        missing = distinct.filter((id) => !found.has(id));
        already = rows.filter((r) => r.status !== 'dead');
        todo = rows.filter((r) => r.status === 'dead');
      } else {
        todo = await store.lockDead(scope, dest.id, req.error_kind, MAX_REPROCESS_ALL);
      }
      const batches = await reprocessBatches(dest, todo, now);
      await store.insertBatches(batches);
      await store.markReprocessed(
        todo.map((r) => r.id),
        now,
      );
      const deltas: LedgerDelta[] = todo.map((r) => ({
        organization_id: r.organization_id,
        integration_id: r.integration_id,
        stream: r.stream,
        outcome: 'dlq_reprocessed',
        destination_id: dest.id,
        reason: r.error_kind,
        count: 1,
      }));
      await store.addLedger(deltas, now);
      if (lineageEnabled) {
        const copies = batches.flatMap((b) =>
          b.event_ids.split(',').map((event_id) => ({ event_id, destination_id: dest.id, delivery_batch_id: b.id })),
        );
        await store.addLineageCopies(copies, now);
      }
      const remaining = req.all === true ? await store.countDead(scope, dest.id, req.error_kind) : 0;
      const errs = [
        ...missing.map((id) => ({ id, reason: 'not_found' as const })),
        ...already.map((r) => ({ id: r.id, reason: 'already_reprocessed' as const })),
      ];
      setAuditTarget({
        type: 'destination',
        id: dest.id,
        organizationId: dest.organization_id ?? soleOrganization(todo) ?? null,
        details: {
          action: 'dlq_reprocess',
          selection: req.all === true ? 'all' : 'ids',
          ...(req.error_kind !== undefined ? { error_kind: req.error_kind } : {}),
          reprocessed: todo.length,
          batches: batches.length,
          not_found: missing.length,
          already_reprocessed: already.length,
          remaining,
        },
      });
      return {
        reprocessed: todo.length,
        batches: batches.length,
        errors: errs,
        remaining,
        destination_enabled: dest.enabled,
      };
    },
  };
}
