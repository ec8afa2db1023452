// OCSF events as an OTLP ExportLogsServiceRequest (docs/destinations-otlp.md): one
// resource (service.name and the configured attributes), one scope ("weir"), one log record
// per event with the event as its body, its time, a severity from severity_id and ocsf.*
// attributes.
import { ExportLogsServiceRequest } from '../../sources/otlp/messages.js';
import type { SinkBatch } from '../types.js';

type Json = Record<string, unknown>;

/** OCSF severity_id → OTLP SeverityNumber and the caption used when the event has no `severity`. */
export const OCSF_SEVERITY: Readonly<Record<number, { number: number; text: string }>> = {
  0: { number: 0, text: 'Unknown' },
  1: { number: 9, text: 'Informational' }, // INFO
  2: { number: 13, text: 'Low' }, // WARN
  3: { number: 15, text: 'Medium' }, // WARN3
  4: { number: 17, text: 'High' }, // ERROR
  5: { number: 21, text: 'Critical' }, // FATAL
  6: { number: 23, text: 'Fatal' }, // FATAL3
  99: { number: 0, text: 'Other' },
};

export interface RecordSettings {
  body: 'kvlist' | 'json';
  serviceName: string;
  resourceAttributes: Record<string, string>;
}

/** A JSON value as an OTLP AnyValue (protobufjs object form). */
export function anyValue(v: unknown): Json {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isSafeInteger(v) ? { intValue: v } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  if (v && typeof v === 'object') return { kvlistValue: { values: keyValues(v as Json) } };
  return {}; // null: an AnyValue with nothing set
}

function keyValues(o: Json): Json[] {
  const out: Json[] = [];
  for (const key of Object.keys(o)) if (o[key] !== undefined) out.push({ key, value: anyValue(o[key]) });
  return out;
}

/** Epoch milliseconds as nanoseconds in decimal (exact: past 2^53 a number would round). */
function nanos(ms: number): string {
  return (BigInt(Math.trunc(ms)) * 1_000_000n).toString();
}

function logRecord(event: Json, line: string, id: string, settings: RecordSettings, observed: string): Json {
  const attributes: Json = { 'weir.event_id': id };
  if (typeof event.class_uid === 'number') attributes['ocsf.class_uid'] = event.class_uid;
  if (typeof event.class_name === 'string') attributes['ocsf.class_name'] = event.class_name;
  if (typeof event.category_uid === 'number') attributes['ocsf.category_uid'] = event.category_uid;
  const uid = (event.metadata as Json | undefined)?.uid;
  if (typeof uid === 'string') attributes['ocsf.metadata.uid'] = uid;
  const sev = typeof event.severity_id === 'number' ? OCSF_SEVERITY[event.severity_id] : undefined;
  const record: Json = {
    observedTimeUnixNano: observed,
    body: settings.body === 'json' ? { stringValue: line } : anyValue(event),
    attributes: keyValues(attributes),
  };
  if (typeof event.time === 'number' && Number.isFinite(event.time) && event.time > 0)
    record.timeUnixNano = nanos(event.time);
  if (sev) {
    record.severityNumber = sev.number;
    record.severityText = typeof event.severity === 'string' ? event.severity : sev.text;
  }
  return record;
}

/** The batch as one protobuf ExportLogsServiceRequest; records in the batch's order. */
export function encodeLogs(batch: SinkBatch, settings: RecordSettings, nowMs: number): Uint8Array {
  const events = batch.events();
  const observed = nanos(nowMs);
  const logRecords = new Array<Json>(batch.lines.length);
  for (let i = 0; i < batch.lines.length; i++)
    logRecords[i] = logRecord(events[i] ?? {}, batch.lines[i]!, batch.ids[i]!, settings, observed);
  const request = {
    resourceLogs: [
      {
        resource: {
          attributes: keyValues({ ...settings.resourceAttributes, 'service.name': settings.serviceName }),
        },
        scopeLogs: [{ scope: { name: 'weir' }, logRecords }],
      },
    ],
  };
  return ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject(request)).finish();
}

/** An empty request: what test() sends to check the endpoint and the credential without delivering. */
export function emptyLogsRequest(): Uint8Array {
  return ExportLogsServiceRequest.encode(ExportLogsServiceRequest.create({})).finish();
}
