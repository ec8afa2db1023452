// The Amazon Data Firehose HTTP endpoint input, without HTTP: a delivery request
// ({requestId, timestamp, records: [{data: base64}]}) read into events. A record's data is a
// JSON object, NDJSON, text lines, or a CloudWatch Logs subscription message (gzip'd
// {"messageType":"DATA_MESSAGE","logEvents":[...]}), unpacked to one event per log event.
import { gunzipSync } from 'node:zlib';
import { AppError } from '../../core/errors.js';
import { isStreamName } from '../../pipeline/sources/push.js';
import type { ProtocolEvent } from './service.js';

/** The most one record may unpack to (a Firehose record is at most 1,000 KiB before compression). */
const MAX_RECORD_BYTES = 16 * 1_048_576;

function invalid(detail: string): AppError {
  return new AppError('request.invalid', { detail });
}

/** The stream of the path, checked like a push's (400 otherwise). */
export function firehoseStream(stream: string): string {
  if (!isStreamName(stream)) {
    throw invalid(
      `The stream "${stream.slice(0, 80)}" must be 1 to 64 letters, digits, "_", "." or "-", starting with a letter or a digit`,
    );
  }
  return stream;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function event(stream: string, text: string): ProtocolEvent {
  return { stream, text, bytes: Buffer.byteLength(text) };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  const t = text.trim();
  if (!t.startsWith('{')) return undefined;
  try {
    const v: unknown = JSON.parse(t);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A CloudWatch Logs subscription message as events: a log event whose message is a JSON
 * object is that object (CloudTrail, VPC flow logs in JSON); any other is
 * {message, timestamp, id, log_group, log_stream, owner}. CONTROL_MESSAGE (the health check
 * CloudWatch Logs sends) gives none.
 */
function cloudWatchEvents(stream: string, msg: Record<string, unknown>, out: ProtocolEvent[]): void {
  if (msg.messageType !== 'DATA_MESSAGE' || !Array.isArray(msg.logEvents)) return;
  for (const le of msg.logEvents as unknown[]) {
    if (!isObject(le) || typeof le.message !== 'string') continue;
    const inner = parseObject(le.message);
    const text = inner
      ? le.message.trim()
      : JSON.stringify({
          message: le.message,
          timestamp: le.timestamp,
          id: le.id,
          log_group: msg.logGroup,
          log_stream: msg.logStream,
          owner: msg.owner,
        });
    out.push(event(stream, text));
  }
}

/** One record's data (already base64-decoded) as events. */
export function recordEvents(stream: string, data: Buffer, out: ProtocolEvent[]): void {
  let bytes = data;
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes, { maxOutputLength: MAX_RECORD_BYTES });
    } catch {
      throw invalid('A record starts like gzip data but does not decompress (or unpacks to more than 16 MiB)');
    }
  }
  const text = bytes.toString('utf8');
  const whole = parseObject(text);
  if (whole && typeof whole.messageType === 'string' && 'logEvents' in whole) {
    cloudWatchEvents(stream, whole, out);
    return;
  }
  if (whole) {
    out.push(event(stream, text.trim()));
    return;
  }
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    out.push(event(stream, parseObject(line) ? line : JSON.stringify({ message: line })));
  }
}

export interface FirehoseRequest {
  requestId: string | undefined;
  events: ProtocolEvent[];
}

/** A delivery request's body as events; 400 when it is not one. */
export function parseFirehose(body: Buffer, stream: string): FirehoseRequest {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    throw invalid('The body is not JSON: expected {"requestId", "timestamp", "records": [{"data": base64}]}');
  }
  if (!isObject(doc) || !Array.isArray(doc.records)) {
    throw invalid(
      'The body has no "records" array: expected {"requestId", "timestamp", "records": [{"data": base64}]}',
    );
  }
  const requestId = typeof doc.requestId === 'string' ? doc.requestId : undefined;
  const events: ProtocolEvent[] = [];
  doc.records.forEach((r: unknown, i: number) => {
    if (!isObject(r) || typeof r.data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(r.data)) {
      throw invalid(`records[${i}].data is not a base64 string`);
    }
    recordEvents(stream, Buffer.from(r.data, 'base64'), events);
  });
  return { requestId, events };
}
