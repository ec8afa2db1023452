// Splunk HEC bodies into Weir events (docs/inputs-splunk-hec.md, "What an HEC event becomes").
// /event: concatenated JSON envelopes {time?, host?, source?, sourcetype?, index?, fields?,
// event}, whitespace between them optional. An object `event` is the Weir event; any other
// `event` (a string, a number...) becomes {"message": <text>}, as a line of a text stream does.
// The envelope's metadata is kept under the key `hec` (not added when the event has a key of
// that name). The stream is the sourcetype, made a stream name. HEC stops at the first bad
// envelope: the events before it are accepted, it and the rest are not (code 6, 12, 13 or 15
// with invalid-event-number). /raw: one event per non-blank line, metadata from the query.
import { isStreamName, parsePushBody } from '../../pipeline/sources/push.js';
import { parseTextBody } from '../../pipeline/sources/text.js';
import type { ProtocolEvent } from '../ingest/service.js';
import type { HecCode } from './answers.js';

/** The stream of events whose sourcetype is absent or has nothing a stream name can keep. */
export const DEFAULT_STREAM = 'hec';
/** The key under which an event keeps its HEC metadata. */
export const META_KEY = 'hec';

/** The metadata of a request (query parameters) that events without their own take. */
export interface HecDefaults {
  sourcetype?: string;
  source?: string;
  host?: string;
  index?: string;
}

/** Why decoding stopped: HEC's code, and the 0-based number of the event at fault. */
export interface HecProblem {
  code: HecCode;
  at: number;
  reason: string;
}

export interface Decoded {
  /** The events before the first problem, in order. */
  events: ProtocolEvent[];
  problem?: HecProblem;
}

/**
 * A sourcetype as a stream name: each run of characters a stream name cannot hold becomes "_"
 * ("aws:cloudtrail" is stream "aws_cloudtrail"), leading ones are dropped ("_json" is "json"),
 * cut at 64; DEFAULT_STREAM when nothing is left.
 */
export function streamOf(sourcetype: string | undefined): string {
  if (!sourcetype) return DEFAULT_STREAM;
  const name = sourcetype
    .replace(/[^A-Za-z0-9_.-]+/g, '_')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64);
  return isStreamName(name) ? name : DEFAULT_STREAM;
}

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** [start, end) of each top-level JSON object; `bad` is where something else begins (or one never closes). */
export function envelopeSpans(buf: Buffer): { spans: [number, number][]; bad: boolean } {
  const spans: [number, number][] = [];
  let i = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  while (i < buf.length) {
    if (SPACE.has(buf[i]!)) {
      i++;
      continue;
    }
    if (buf[i] !== 0x7b) return { spans, bad: true };
    let depth = 0;
    let inString = false;
    let j = i;
    for (; j < buf.length; j++) {
      const c = buf[j];
      if (inString) {
        if (c === 0x5c) j++;
        else if (c === 0x22) inString = false;
      } else if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        if (--depth === 0) break;
      }
    }
    if (j >= buf.length) return { spans, bad: true };
    spans.push([i, j + 1]);
    i = j + 1;
  }
  return { spans, bad: false };
}

const isText = (v: unknown): v is string => typeof v === 'string';

/** An indexed field's value: a string or number, or a list of them (HEC code 15 otherwise). */
function indexedValue(v: unknown): boolean {
  if (isText(v) || typeof v === 'number') return true;
  return Array.isArray(v) && v.every((x) => isText(x) || typeof x === 'number');
}

type Envelope = Record<string, unknown>;

/** The event's text, or the problem with its envelope. */
function fromEnvelope(env: Envelope, defaults: HecDefaults): { text: string; stream: string } | Omit<HecProblem, 'at'> {
  if (!('event' in env)) return { code: 12, reason: 'the envelope has no "event" field' };
  const event = env.event;
  if (event === null || (isText(event) && event.trim() === ''))
    return { code: 13, reason: 'the "event" field is blank' };
  const time = env.time;
  if (
    time !== undefined &&
    !(typeof time === 'number' || (isText(time) && time.trim() !== '' && isFinite(Number(time))))
  )
    return { code: 6, reason: '"time" is not epoch seconds' };
  for (const key of ['host', 'source', 'sourcetype', 'index'] as const) {
    if (env[key] !== undefined && !isText(env[key])) return { code: 6, reason: `"${key}" is not a string` };
  }
  const fields = env.fields;
  if (
    fields !== undefined &&
    (fields === null ||
      typeof fields !== 'object' ||
      Array.isArray(fields) ||
      !Object.values(fields).every(indexedValue))
  )
    return { code: 15, reason: '"fields" must be an object of strings, numbers or lists of them' };

  const meta: Record<string, unknown> = {};
  if (time !== undefined) meta.time = Number(time);
  for (const key of ['host', 'source', 'sourcetype', 'index'] as const) {
    const v = (env[key] as string | undefined) ?? defaults[key];
    if (v !== undefined) meta[key] = v;
  }
  if (fields !== undefined) meta.fields = fields;
  const sourcetype = meta.sourcetype as string | undefined;
  const body: Record<string, unknown> =
    typeof event === 'object' && !Array.isArray(event)
      ? (event as Record<string, unknown>)
      : { message: isText(event) ? event : JSON.stringify(event) };
  const text =
    Object.keys(meta).length === 0 || META_KEY in body
      ? JSON.stringify(body)
      : JSON.stringify({ ...body, [META_KEY]: meta });
  return { text, stream: streamOf(sourcetype) };
}

/** /services/collector/event: the events before the first bad envelope, and what was wrong with it. */
export function decodeEvents(buf: Buffer, defaults: HecDefaults, maxDepth: number): Decoded {
  const { spans, bad } = envelopeSpans(buf);
  const events: ProtocolEvent[] = [];
  if (spans.length === 0 && !bad) return { events, problem: { code: 5, at: 0, reason: 'the body holds no event' } };
  for (const [start, end] of spans) {
    const parsed = parsePushBody(buf.subarray(start, end), { maxDepth, format: 'json' });
    const text = parsed.texts[0];
    if (text === undefined) {
      const reason = parsed.errors[0]?.reason ?? 'not one JSON object';
      return { events, problem: { code: 6, at: events.length, reason } };
    }
    const out = fromEnvelope(JSON.parse(text) as Envelope, defaults);
    if ('code' in out) return { events, problem: { ...out, at: events.length } };
    events.push({ stream: out.stream, text: out.text, bytes: end - start });
  }
  if (bad)
    return { events, problem: { code: 6, at: events.length, reason: 'not a JSON object where an event should begin' } };
  return { events };
}

/** /services/collector/raw: each non-blank line is {"message": line, "hec": {metadata from the query}}. */
export function decodeRaw(buf: Buffer, defaults: HecDefaults): Decoded {
  const parsed = parseTextBody(buf);
  const meta: Record<string, string> = {};
  for (const key of ['host', 'source', 'sourcetype', 'index'] as const) {
    const v = defaults[key];
    if (v !== undefined) meta[key] = v;
  }
  // textEvent's {"message":...} with the metadata added as its last key.
  const suffix = Object.keys(meta).length ? `,${JSON.stringify(META_KEY)}:${JSON.stringify(meta)}}` : '}';
  const stream = streamOf(defaults.sourcetype);
  const firstBad = parsed.errors[0];
  const events: ProtocolEvent[] = [];
  for (let i = 0; i < parsed.texts.length; i++) {
    if (firstBad && parsed.lines[i]! > firstBad.line) break;
    const text = parsed.texts[i]!;
    events.push({ stream, text: text.slice(0, -1) + suffix, bytes: parsed.sizes[i]! });
  }
  if (firstBad)
    return { events, problem: { code: 6, at: events.length, reason: `line ${firstBad.line}: ${firstBad.reason}` } };
  if (events.length === 0) return { events, problem: { code: 5, at: 0, reason: 'the body holds no event' } };
  return { events };
}
