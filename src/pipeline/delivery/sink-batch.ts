// The SinkBatch of one request, built from claimed outbox rows: each row's events are
// decoded once, their ids split from event_ids, and one EventMeta object is shared by every
// event of a row (no per-event allocation beyond the line itself).
import { decodeLines, encodeRecords } from '../batch-codec.js';
import type { EventMeta, SinkBatch } from '../sinks/types.js';
import type { OutboxRow } from './engine-port.js';

/** A claimed row with its events decoded; `take` of them (from the start) go in this request. */
export interface Part {
  row: OutboxRow;
  lines: string[];
  ids: string[];
  take: number;
  /** Bytes of the taken events, set by buildSinkBatch. */
  takeBytes?: number;
}

export async function decodeRow(row: OutboxRow): Promise<{ lines: string[]; ids: string[] }> {
  const lines = await decodeLines(row.events);
  const ids = row.event_ids === '' ? [] : row.event_ids.split(',');
  if (lines.length !== ids.length)
    throw new Error(`delivery batch ${row.id}: ${lines.length} events but ${ids.length} ids`);
  return { lines, ids };
}

/**
 * How many events of a row fit the remaining budget, at least one: a row larger than the
 * destination's max_events or max_bytes is sent in slices, the rest stays in the outbox.
 */
export function sliceLength(lines: string[], maxEvents: number, maxBytes: number): number {
  const n = Math.min(lines.length, maxEvents);
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    bytes += Buffer.byteLength(lines[i]!);
    if (bytes > maxBytes) return Math.max(i, 1);
  }
  return n;
}

export function buildSinkBatch(parts: Part[]): SinkBatch {
  const ids: string[] = [];
  const lines: string[] = [];
  const meta: EventMeta[] = [];
  let bytes = 0;
  for (const p of parts) {
    const shared: EventMeta = {
      organization_id: p.row.organization_id,
      integration_id: p.row.integration_id,
      stream: p.row.stream,
    };
    let partBytes = 0;
    for (let i = 0; i < p.take; i++) {
      const line = p.lines[i]!;
      ids.push(p.ids[i]!);
      lines.push(line);
      meta.push(shared);
      partBytes += Buffer.byteLength(line);
    }
    p.takeBytes = partBytes;
    bytes += partBytes;
  }
  let parsed: Record<string, unknown>[] | undefined;
  return {
    ids,
    lines,
    meta,
    bytes,
    events: () => (parsed ??= lines.map((l) => JSON.parse(l) as Record<string, unknown>)),
  };
}

/** Stored form of a subset of a row's events (the ones left after a partial request). */
export async function encodeSubset(lines: string[], ids: string[], indexes: number[]) {
  const kept = indexes.map((i) => lines[i]!);
  const ndjson = kept.join('\n');
  return {
    event_count: kept.length,
    bytes: Buffer.byteLength(ndjson) - Math.max(kept.length - 1, 0),
    event_ids: indexes.map((i) => ids[i]!).join(','),
    events: await encodeRecords(ndjson),
  };
}
