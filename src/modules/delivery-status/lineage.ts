// Lineage records (docs/delivery.md, Lineage): an event with the routes it matched and every
// copy made of it, each copy with its delivery attempts and whether it waits in a
// dead-letter queue. Built from a page of events in three batched reads, never per event.
import type { Static } from 'typebox';
import { redactSecrets } from '../../pipeline/sinks/types.js';
import type { LineageRecord as LineageRecordSchema } from './schema.js';
import type { DeliveryStatusStore, LineageEventRow } from './store.js';

export type LineageRecord = Static<typeof LineageRecordSchema>;

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

export async function assembleLineage(store: DeliveryStatusStore, events: LineageEventRow[]): Promise<LineageRecord[]> {
  const eventIds = events.map((e) => e.event_id);
  const copies = await store.lineageCopies(eventIds);
  const [attempts, dead] = await Promise.all([
    store.lineageAttempts([...new Set(copies.map((c) => c.delivery_batch_id))]),
    store.deadPairs(eventIds),
  ]);
  const attemptsOf = groupBy(attempts, (a) => a.delivery_batch_id);
  const copiesOf = groupBy(copies, (c) => c.event_id);
  const deadSet = new Set(dead.map((d) => `${d.event_id}\u0000${d.destination_id}`));
  return events.map((e) => ({
    event_id: e.event_id,
    organization_id: e.organization_id,
    integration_id: e.integration_id,
    stream: e.stream,
    mapping_version_id: e.mapping_version_id,
    received_at: e.received_at,
    routes: Array.isArray(e.routes) ? e.routes.map(String) : [],
    filtered: e.filtered,
    copies: (copiesOf.get(e.event_id) ?? []).map((c) => ({
      destination_id: c.destination_id,
      route_id: c.route_id,
      kind: c.kind,
      delivery_batch_id: c.delivery_batch_id,
      attempts: (attemptsOf.get(c.delivery_batch_id) ?? []).map((a) => ({
        attempt: a.attempt,
        outcome: a.outcome,
        status_code: a.status_code,
        error: a.error === null ? null : redactSecrets(a.error),
        duration_ms: a.duration_ms,
        at: a.at,
      })),
      dead_lettered: deadSet.has(`${e.event_id}\u0000${c.destination_id}`),
    })),
  }));
}
