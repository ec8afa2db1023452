// The Elasticsearch `_bulk` input, without HTTP: the credential an Elasticsearch client
// carries, the stream an index name goes to, the NDJSON action/source pairs read into
// events, and the per-item answer in Elasticsearch's own shape. Beats, Logstash, Fluent Bit
// and Vector read that answer to decide which documents to send again.
import { randomBytes } from 'node:crypto';
import { AppError } from '../../core/errors.js';
import type { ProtocolEvent } from './service.js';

/** The version Weir answers as: Beats 8 and Logstash 8 check the major, the official clients need 8.x for their headers. */
export const ES_VERSION = '8.17.0';
/** Where an index name gives no stream (no `_index` anywhere, or nothing left after sanitizing). */
export const ES_DEFAULT_STREAM = 'elasticsearch';

/**
 * The ingestion token from an Elasticsearch client's credential: the password of Basic
 * (any user), an ApiKey (the token itself, or base64 of "id:token" as Beats and Logstash
 * send an `id:key` api_key), or Bearer.
 */
export function esToken(authorization: string | undefined): string | undefined {
  const m = /^\s*(basic|apikey|bearer)\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!m) return undefined;
  const scheme = m[1]!.toLowerCase();
  const value = m[2]!;
  if (scheme === 'bearer') return value;
  if (scheme === 'apikey' && value.startsWith('svcik_')) return value;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return scheme === 'apikey' ? value : undefined;
  return decoded.slice(colon + 1) || undefined;
}

/**
 * An index name as a Weir stream: lowercased, a trailing date (`-2026.11.29`, `-2026.11`,
 * `-2026-11-29`) and then a trailing shipper version (`-8.15.0`) removed, any other
 * character than letters, digits, "_", "." and "-" replaced by "_", leading punctuation
 * dropped, at most 64 characters; ES_DEFAULT_STREAM when nothing is left.
 * `filebeat-8.15.0-2026.11.29` → `filebeat`, `logs-generic-default` → `logs-generic-default`.
 */
export function streamOfIndex(index: string | undefined): string {
  if (!index) return ES_DEFAULT_STREAM;
  const name = index
    .toLowerCase()
    .replace(/[-_.]\d{4}[.-]\d{2}(?:[.-]\d{2})?$/, '')
    .replace(/-\d+\.\d+\.\d+(?:-[a-z0-9]+)?$/, '')
    .replace(/[^a-z0-9_.-]/g, '_')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64);
  return name || ES_DEFAULT_STREAM;
}

type ActionName = 'index' | 'create' | 'update' | 'delete';

/** One item of a bulk request, in order: an event to accept, or an answer already decided. */
export interface BulkItem {
  action: ActionName | string;
  index: string;
  id: string;
  /** Position in the events handed to receive; undefined when the item is answered as an error. */
  event?: number;
  error?: { status: number; type: string; reason: string };
}

/** An item answered 400 with Elasticsearch's error `type` and `reason`, its event not taken. */
function refusedItem(action: string, index: string, id: string, type: string, reason: string): BulkItem {
  return { action, index, id, error: { status: 400, type, reason } };
}

export interface ParsedBulk {
  items: BulkItem[];
  events: ProtocolEvent[];
}

/** Elasticsearch's error body, with Weir's `detail` beside it (clients read `error`, and ignore the rest). */
export function esErrorBody(status: number, type: string, reason: string): Record<string, unknown> {
  return { error: { root_cause: [{ type, reason }], type, reason }, status, detail: reason };
}

function requestError(reason: string): AppError {
  return new AppError('request.invalid', {
    detail: reason,
    details: { es_type: 'illegal_argument_exception' },
  });
}

/** A document id like the ones Elasticsearch generates (20 URL-safe base64 characters). */
function generatedId(): string {
  return randomBytes(15).toString('base64url');
}

const ACTIONS = new Set(['index', 'create', 'update', 'delete']);

/**
 * Reads a `_bulk` body. A malformed action line fails the whole request (400, as
 * Elasticsearch does); a source that is not a JSON object, an action without an index, and
 * the update and delete actions (Weir appends events, it keeps no documents to change) are
 * answered per item. `pathIndex` is the index of `/{index}/_bulk`.
 */
export function parseBulk(body: Buffer, pathIndex: string | undefined): ParsedBulk {
  const text = body.toString('utf8');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const items: BulkItem[] = [];
  const events: ProtocolEvent[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    let action: unknown;
    try {
      action = JSON.parse(line);
    } catch {
      throw requestError(`Malformed action/metadata line [${i + 1}], expected a JSON object`);
    }
    const keys = action && typeof action === 'object' && !Array.isArray(action) ? Object.keys(action) : [];
    if (keys.length !== 1) {
      throw requestError(
        `Malformed action/metadata line [${i + 1}], expected one action (index, create, update, delete)`,
      );
    }
    const name = keys[0]!;
    if (!ACTIONS.has(name)) {
      throw requestError(`Malformed action/metadata line [${i + 1}], unknown action [${name}]`);
    }
    const meta = (action as Record<string, unknown>)[name];
    const m = meta && typeof meta === 'object' && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {};
    const index = typeof m._index === 'string' && m._index ? m._index : (pathIndex ?? '');
    const id = typeof m._id === 'string' && m._id ? m._id : typeof m._id === 'number' ? String(m._id) : '';
    // delete has no source line; update's source line is read and answered.
    const source = name === 'delete' ? undefined : lines[++i];
    if (name !== 'delete' && source === undefined) {
      throw requestError(`The bulk request must be terminated by a newline [\\n]: action line [${i}] has no source`);
    }
    if (name === 'update' || name === 'delete') {
      items.push(
        refusedItem(
          name,
          index,
          id,
          'illegal_argument_exception',
          `Weir accepts index and create actions only: [${name}] is not supported (events are appended, not changed)`,
        ),
      );
      continue;
    }
    if (!index) {
      items.push(
        refusedItem(name, index, id, 'action_request_validation_exception', 'Validation Failed: 1: index is missing;'),
      );
      continue;
    }
    const doc = source!.trim();
    let parsed: unknown;
    try {
      parsed = JSON.parse(doc);
    } catch {
      parsed = undefined;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      items.push(
        refusedItem(
          name,
          index,
          id || generatedId(),
          'document_parsing_exception',
          `[1:1] failed to parse: the source of item ${items.length + 1} is not a JSON object`,
        ),
      );
      continue;
    }
    items.push({ action: name, index, id: id || generatedId(), event: events.length });
    events.push({ stream: streamOfIndex(index), text: doc, bytes: Buffer.byteLength(doc) });
  }
  return { items, events };
}

/** The `_bulk` answer: 201 created for accepted items, 429 for those Weir could not take now (to resend), the parse errors as they were. */
export function bulkAnswer(parsed: ParsedBulk, accepted: readonly boolean[], tookMs: number): Record<string, unknown> {
  let errors = false;
  const items = parsed.items.map((item) => {
    let error = item.error;
    if (!error && item.event !== undefined && !accepted[item.event]) {
      error = {
        status: 429,
        type: 'es_rejected_execution_exception',
        reason: 'Weir could not accept this document now (the pipeline is saturated); resend it',
      };
    }
    const head = { _index: item.index, _id: item.id };
    if (error) {
      errors = true;
      return {
        [item.action]: { ...head, status: error.status, error: { type: error.type, reason: error.reason } },
      };
    }
    return {
      [item.action]: {
        ...head,
        _version: 1,
        result: 'created',
        _shards: { total: 1, successful: 1, failed: 0 },
        _seq_no: 0,
        _primary_term: 1,
        status: 201,
      },
    };
  });
  return { took: tookMs, errors, items };
}
