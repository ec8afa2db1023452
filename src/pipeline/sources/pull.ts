// Pulled pages enter the data plane like pushes: one accepted ingest batch per page (its
// ledger row and normalize job: AcceptBatch). The collection engine advances its cursor
// only after this resolves. Each event keeps its vendor key, so the normalization stage can drop
// what was already collected (a page re-fetched after a crash, a cursor reset, a backfill
// overlapping live collection).
import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { AcceptBatch, IngestBatch } from '../envelope.js';

export interface PulledEvents {
  organizationId: number;
  integrationId: number;
  platform: string;
  stream: string;
  events: Record<string, unknown>[];
  keys: string[];
}

export interface Accepted {
  batchIds: string[];
  events: number;
  bytes: number;
}

/** Accepts the events in batches of at most maxEvents; throws when a batch is refused (nothing from it on is accepted). */
export async function acceptPulled(
  accept: AcceptBatch,
  clock: Clock,
  pulled: PulledEvents,
  maxEvents = 1000,
  /** W3C trace context of the collection cycle (telemetry on), so normalization joins its trace. */
  trace?: Record<string, string>,
): Promise<Accepted> {
  if (pulled.keys.length !== pulled.events.length) throw new Error('acceptPulled: keys and events differ in length');
  const receivedAt = clock.now().toISOString();
  const out: Accepted = { batchIds: [], events: 0, bytes: 0 };
  for (let start = 0; start < pulled.events.length; start += maxEvents) {
    const events = pulled.events.slice(start, start + maxEvents);
    const bytes = events.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)), 0);
    const batch: IngestBatch = {
      id: newId(),
      organization_id: pulled.organizationId,
      integration_id: pulled.integrationId,
      platform: pulled.platform,
      stream: pulled.stream,
      received_at: receivedAt,
      source: 'pull',
      ids: events.map(() => newId()),
      events,
      bytes,
      keys: pulled.keys.slice(start, start + maxEvents),
      ...(trace && Object.keys(trace).length > 0 ? { trace } : {}),
    };
    await accept(batch);
    out.batchIds.push(batch.id);
    out.events += events.length;
    out.bytes += bytes;
  }
  return out;
}
