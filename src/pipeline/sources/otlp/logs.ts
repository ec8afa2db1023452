// OTLP logs in: an ExportLogsServiceRequest (protobuf or OTLP/JSON) becomes one Weir event per
// LogRecord, a JSON object (docs/inputs-otlp.md, "The event"):
//   {time, time_unix_nano, observed_time_unix_nano, severity_number, severity_text, body,
//    attributes, event_name, trace_id, span_id, flags, dropped_attributes_count,
//    resource: {attributes, dropped_attributes_count, schema_url},
//    scope: {name, version, attributes, dropped_attributes_count, schema_url}}
// Unset fields are left out; attributes are always objects. Both encodings are read by one
// walker: protobufjs messages and OTLP/JSON share the lowerCamelCase field names and differ
// only in how 64-bit integers, bytes and the AnyValue oneof are written.
import { AppError } from '../../../core/errors.js';
import { isStreamName } from '../push.js';
import { ExportLogsServiceRequest, SEVERITY_NUMBERS } from './messages.js';

type Json = Record<string, unknown>;

/** One decoded log record: the stream it goes to and its JSON text. */
export interface OtlpLogEvent {
  stream: string;
  text: string;
  bytes: number;
}

export interface OtlpLogs {
  events: OtlpLogEvent[];
  /** Records refused for what they hold (reported as partial_success, not retried). */
  rejected: number;
  /** Why, for partial_success.error_message ('' when none was refused). */
  errorMessage: string;
}

export interface OtlpDecodeOptions {
  /** Deepest nesting of a body or attribute value, as for a pushed JSON event. */
  maxDepth: number;
}

/** The attribute that names the stream of a record (log attributes first, then the resource's). */
export const STREAM_ATTRIBUTE = 'weir.stream';
/** The stream of records with neither weir.stream nor a service.name that makes a stream name. */
export const DEFAULT_STREAM = 'otlp';

/** A stream name from an attribute: characters outside [A-Za-z0-9_.-] become "_", cut at 64. */
export function streamNameOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const name = value
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64);
  return isStreamName(name) ? name : undefined;
}

/** A problem of one record: it is refused, the others go on. */
class RecordError extends Error {}

function invalid(path: string, what: string): AppError {
  return new AppError('request.invalid', {
    detail: `The body is not a valid OTLP/JSON ExportLogsServiceRequest: ${path} ${what}`,
  });
}

interface Walker {
  json: boolean;
  maxDepth: number;
}

function list(v: unknown, path: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  throw invalid(path, 'must be an array');
}

function object(v: unknown, path: string): Json | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'object' && !Array.isArray(v)) return v as Json;
  throw invalid(path, 'must be an object');
}

function text(v: unknown, path: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  throw invalid(path, 'must be a string');
}

/** A 32-bit integer or enum (OTLP/JSON may write it as a string, an enum by name). */
function int(v: unknown, path: string, names?: Readonly<Record<string, number>>): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v);
  if (typeof v === 'string' && names && names[v] !== undefined) return names[v]!;
  throw invalid(path, 'must be an integer');
}

/** A 64-bit integer as decimal digits: protobufjs gives a Long, OTLP/JSON a string (or a number). */
function int64(v: unknown, path: string): string {
  if (v === undefined || v === null) return '0';
  if (typeof v === 'string') {
    if (/^-?\d+$/.test(v)) return v;
    throw invalid(path, 'must be an integer (a decimal string)');
  }
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  if (typeof v === 'object' && 'low' in v && 'high' in v) return String(v);
  throw invalid(path, 'must be an integer (a decimal string)');
}

/** An int64 value as a JSON number when exact, else its decimal string. */
function int64Value(v: unknown, path: string): number | string {
  const digits = int64(v, path);
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : digits;
}

function double(v: unknown, path: string): number | string {
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  // Proto JSON writes the non-finite doubles as strings; JSON has no number for them, nor does the event.
  if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  throw invalid(path, 'must be a number');
}

function base64(w: Walker, v: unknown, path: string): string {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  if (w.json && typeof v === 'string' && /^[A-Za-z0-9+/_-]*={0,2}$/.test(v)) return v;
  throw invalid(path, 'must be base64 bytes');
}

/** A trace or span id as lower-case hex ('' when unset); a wrong length refuses the record. */
function id(w: Walker, v: unknown, bytes: number, name: string): string {
  // protobufjs leaves an unset bytes field at its default, an empty array.
  if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) return '';
  if (v instanceof Uint8Array) {
    if (v.byteLength === 0) return '';
    if (v.byteLength === bytes) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
    throw new RecordError(`${name} has ${v.byteLength} bytes, not ${bytes}`);
  }
  if (w.json && typeof v === 'string') {
    if (v === '') return '';
    if (v.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(v)) return v.toLowerCase();
    throw new RecordError(`${name} is not ${bytes * 2} hexadecimal digits`);
  }
  throw new RecordError(`${name} is not ${w.json ? 'a hexadecimal string' : 'bytes'}`);
}

const ANY_KINDS = [
  'stringValue',
  'boolValue',
  'intValue',
  'doubleValue',
  'arrayValue',
  'kvlistValue',
  'bytesValue',
  'stringValueStrindex',
] as const;

/** Which AnyValue field is set: protobufjs names it in the oneof's virtual field, OTLP/JSON by its key. */
function anyKind(w: Walker, v: Json): string | undefined {
  if (!w.json) return typeof v.value === 'string' ? v.value : undefined;
  return ANY_KINDS.find((k) => v[k] !== undefined && v[k] !== null);
}

/** An AnyValue as a JSON value: string, boolean, number, array, object; bytes as base64. */
function anyValue(w: Walker, raw: unknown, depth: number, path: string): unknown {
  const v = object(raw, path);
  if (!v) return null;
  if (depth > w.maxDepth) throw new RecordError(`${path} is nested deeper than ${w.maxDepth} levels`);
  switch (anyKind(w, v)) {
    case 'stringValue':
      return text(v.stringValue, `${path}.stringValue`);
    case 'boolValue':
      if (typeof v.boolValue !== 'boolean') throw invalid(`${path}.boolValue`, 'must be a boolean');
      return v.boolValue;
    case 'intValue':
      return int64Value(v.intValue, `${path}.intValue`);
    case 'doubleValue':
      return double(v.doubleValue, `${path}.doubleValue`);
    case 'arrayValue': {
      const values = list(object(v.arrayValue, `${path}.arrayValue`)?.values, `${path}.arrayValue.values`);
      return values.map((x, i) => anyValue(w, x, depth + 1, `${path}.arrayValue.values[${i}]`));
    }
    case 'kvlistValue':
      return keyValues(w, object(v.kvlistValue, `${path}.kvlistValue`)?.values, depth + 1, `${path}.kvlistValue`);
    case 'bytesValue':
      return base64(w, v.bytesValue, `${path}.bytesValue`);
    default:
      // Unset, or string_value_strindex, which only OTLP profiles (with their dictionary) use.
      return null;
  }
}

/** A repeated KeyValue as an object; a key given twice keeps its last value. */
function keyValues(w: Walker, raw: unknown, depth: number, path: string): Json {
  const out: Json = {};
  const items = list(raw, `${path}.values`);
  for (let i = 0; i < items.length; i++) {
    const kv = object(items[i], `${path}.values[${i}]`) ?? {};
    out[text(kv.key, `${path}.values[${i}].key`)] = anyValue(w, kv.value, depth, `${path}.values[${i}].value`);
  }
  return out;
}

/** RFC 3339 time (milliseconds) of a nanosecond timestamp; undefined for 0 or out of range. */
function isoTime(nanos: string): string | undefined {
  if (nanos === '0' || nanos.length <= 6) return undefined;
  const ms = Number(nanos.slice(0, -6));
  return ms > 0 && ms <= 8.64e15 ? new Date(ms).toISOString() : undefined;
}

function put(out: Json, key: string, value: unknown, unset: unknown): void {
  if (value !== unset) out[key] = value;
}

function logRecord(w: Walker, r: Json, path: string): Json {
  const time = int64(r.timeUnixNano, `${path}.timeUnixNano`);
  const observed = int64(r.observedTimeUnixNano, `${path}.observedTimeUnixNano`);
  const event: Json = {};
  put(event, 'time', isoTime(time !== '0' ? time : observed), undefined);
  put(event, 'time_unix_nano', time, '0');
  put(event, 'observed_time_unix_nano', observed, '0');
  put(event, 'severity_number', int(r.severityNumber, `${path}.severityNumber`, SEVERITY_NUMBERS), 0);
  put(event, 'severity_text', text(r.severityText, `${path}.severityText`), '');
  put(event, 'body', anyValue(w, r.body, 1, `${path}.body`), null);
  event.attributes = keyValues(w, r.attributes, 1, `${path}.attributes`);
  put(event, 'event_name', text(r.eventName, `${path}.eventName`), '');
  put(event, 'trace_id', id(w, r.traceId, 16, 'trace_id'), '');
  put(event, 'span_id', id(w, r.spanId, 8, 'span_id'), '');
  put(event, 'flags', int(r.flags, `${path}.flags`), 0);
  put(event, 'dropped_attributes_count', int(r.droppedAttributesCount, `${path}.droppedAttributesCount`), 0);
  return event;
}

/** The resource or scope part every record of it shares. */
function context(w: Walker, raw: unknown, schemaUrl: unknown, path: string, named: boolean): Json {
  const v = object(raw, path) ?? {};
  const out: Json = {};
  if (named) {
    put(out, 'name', text(v.name, `${path}.name`), '');
    put(out, 'version', text(v.version, `${path}.version`), '');
  }
  out.attributes = keyValues(w, v.attributes, 1, `${path}.attributes`);
  put(out, 'dropped_attributes_count', int(v.droppedAttributesCount, `${path}.droppedAttributesCount`), 0);
  put(out, 'schema_url', text(schemaUrl, `${path}.schemaUrl`), '');
  return out;
}

function walk(w: Walker, request: Json): OtlpLogs {
  const events: OtlpLogEvent[] = [];
  let rejected = 0;
  let firstReason = '';
  const resourceLogs = list(request.resourceLogs, 'resourceLogs');
  for (let i = 0; i < resourceLogs.length; i++) {
    const rl = object(resourceLogs[i], `resourceLogs[${i}]`) ?? {};
    let resource: Json;
    let scopeLogs: unknown[];
    try {
      resource = context(w, rl.resource, rl.schemaUrl, `resourceLogs[${i}].resource`, false);
      scopeLogs = list(rl.scopeLogs, `resourceLogs[${i}].scopeLogs`);
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      // A resource too deep to keep: every record under it goes with it.
      const count = countRecords(rl);
      rejected += count;
      firstReason ||= err.message;
      continue;
    }
    const attrs = resource.attributes as Json;
    const resourceStream =
      streamNameOf(attrs[STREAM_ATTRIBUTE]) ?? streamNameOf(attrs['service.name']) ?? DEFAULT_STREAM;
    for (let j = 0; j < scopeLogs.length; j++) {
      const path = `resourceLogs[${i}].scopeLogs[${j}]`;
      const sl = object(scopeLogs[j], path) ?? {};
      const records = list(sl.logRecords, `${path}.logRecords`);
      let scope: Json;
      try {
        scope = context(w, sl.scope, sl.schemaUrl, `${path}.scope`, true);
      } catch (err) {
        if (!(err instanceof RecordError)) throw err;
        rejected += records.length;
        firstReason ||= err.message;
        continue;
      }
      for (let k = 0; k < records.length; k++) {
        const rpath = `${path}.logRecords[${k}]`;
        try {
          const event = logRecord(w, object(records[k], rpath) ?? {}, rpath);
          event.resource = resource;
          event.scope = scope;
          const stream = streamNameOf((event.attributes as Json)[STREAM_ATTRIBUTE]) ?? resourceStream;
          const json = JSON.stringify(event);
          events.push({ stream, text: json, bytes: Buffer.byteLength(json) });
        } catch (err) {
          if (!(err instanceof RecordError)) throw err;
          rejected++;
          firstReason ||= `${rpath}: ${err.message}`;
        }
      }
    }
  }
  const errorMessage = rejected
    ? `${rejected} log record${rejected === 1 ? ' was' : 's were'} refused (first: ${firstReason})`
    : '';
  return { events, rejected, errorMessage };
}

function countRecords(rl: Json): number {
  let n = 0;
  for (const sl of Array.isArray(rl.scopeLogs) ? rl.scopeLogs : []) {
    const records = (sl as Json | null)?.logRecords;
    if (Array.isArray(records)) n += records.length;
  }
  return n;
}

/** Decodes a protobuf ExportLogsServiceRequest; 400 when the bytes are not one. */
export function decodeLogsProtobuf(body: Buffer, options: OtlpDecodeOptions): OtlpLogs {
  let request: Json;
  try {
    request = ExportLogsServiceRequest.decode(body) as unknown as Json;
  } catch (err) {
    // protobufjs names the fault (index out of range, invalid wire type); a deep nesting overflows the stack.
    const why = err instanceof RangeError && /call stack/i.test(err.message) ? 'nested too deeply' : String(err);
    throw new AppError('request.invalid', {
      detail: `The body is not a valid protobuf ExportLogsServiceRequest: ${why.slice(0, 200)}`,
    });
  }
  return walk({ json: false, maxDepth: options.maxDepth }, request);
}

/** Decodes an OTLP/JSON ExportLogsServiceRequest; 400 when the text is not one. */
export function decodeLogsJson(body: Buffer, options: OtlpDecodeOptions): OtlpLogs {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new AppError('request.invalid', {
      detail: `The body is not valid JSON (OTLP/JSON ExportLogsServiceRequest): ${String((err as Error).message).slice(0, 200)}`,
    });
  }
  const w = { json: true, maxDepth: options.maxDepth };
  const request = object(parsed, 'the body');
  if (!request) throw invalid('the body', 'must be an object');
  return walk(w, request);
}
