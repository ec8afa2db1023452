// Destination type `event_store`: Weir's own searchable store of an organization's normalized
// events (docs/search.md). The one pass writes its copies itself, in the batch's transaction
// (pipeline/delivery/routing-write.ts INLINE_TYPES), so they count delivered at once; this sink is the
// path of copies that reach the outbox anyway (batches routed by the dispatcher's routing
// stage, replays), and it replaces rows by event id so a resent batch is not stored twice.
import { Type } from 'typebox';
import { storedCopies } from '../../delivery/routing-write.js';
import type { StoredCopies } from '../../delivery/engine-port.js';
import { DeliveryError, type Sink, type SinkContext, type SinkType } from '../types.js';

export const EVENT_STORE_TYPE = 'event_store';

/** What the sink needs of the store (modules/search/event-store/postgres-table.ts). */
export interface EventStorePort {
  replace(stored: StoredCopies): Promise<void>;
  /** Throws when the store cannot be written (the destination test). */
  check(): Promise<void>;
}

export const EventStoreConfigSchema = Type.Object(
  {},
  {
    additionalProperties: false,
    description:
      "The event store takes no settings: it keeps the organization's events for the organization's retention (/api/organizations/{org_id}/retention)",
  },
);

export function eventStoreSinkType(port: EventStorePort): SinkType {
  return {
    type: EVENT_STORE_TYPE,
    title: 'Event store (search)',
    description:
      "Weir's own store of the organization's normalized events, searched with POST /api/search and replayed to other destinations. " +
      "Kept for the organization's retention; one per organization, created with it along with a route that sends it every event.",
    configSchema: EventStoreConfigSchema,
    credentialSchema: null,
    credentialRequired: false,
    create(ctx: SinkContext): Sink {
      return {
        async send(batch) {
          if (ctx.organizationId === null)
            throw new DeliveryError('config', 'the event store belongs to an organization');
          const events = batch.events();
          const received = Date.now();
          // Copies of one outbox row share their origin.
          const first = batch.meta[0];
          if (!first) return {};
          const byOrigin = new Map<string, number[]>();
          batch.meta.forEach((m, i) => {
            const key = `${m.organization_id}\u0000${m.integration_id}\u0000${m.stream}`;
            const list = byOrigin.get(key);
            if (list) list.push(i);
            else byOrigin.set(key, [i]);
          });
          for (const indexes of byOrigin.values()) {
            const m = batch.meta[indexes[0]!]!;
            const rows = storedCopies(
              ctx.destinationId,
              m,
              indexes.map((i) => batch.lines[i]!),
              (k) => ({ id: batch.ids[indexes[k]!]!, received, ocsf: events[indexes[k]!]! }),
            );
            try {
              await port.replace(rows);
            } catch (err) {
              throw new DeliveryError(
                'protocol',
                `the event store refused the batch: ${err instanceof Error ? err.message : String(err)}`,
                { retryable: true, cause: err },
              );
            }
          }
          return {};
        },
        async test() {
          const started = Date.now();
          try {
            await port.check();
            return {
              ok: true,
              detail: 'the event store table can be read and written',
              latency_ms: Date.now() - started,
            };
          } catch (err) {
            return {
              ok: false,
              detail: `the event store cannot be used: ${err instanceof Error ? err.message : String(err)}`,
              latency_ms: Date.now() - started,
              error_kind: 'connection',
            };
          }
        },
        async close() {},
      };
    },
  };
}
