// Push source: turns a request body (raw bytes, already decompressed) into events.
//
// The format is decided from the content, never from Content-Type, so that nothing is lost
// silently: when the body (after leading whitespace) is ONE balanced JSON object or array
// with nothing after it, it is one document (an object is one event; an array's elements
// are events). Anything else is NDJSON: each non-blank line is one JSON value. Indented
// (pretty-printed) JSON is therefore one document, not a series of broken lines. A sender
// may insist on one reading (format json or ndjson, PushFormatChoice).
//
// Every event must be a JSON object. Each one that is not is reported as {line, reason}
// (line: the 1-based physical line of NDJSON, or the 1-based element index of an array);
// reasons never echo the content. The work is done on the bytes: event boundaries are found
// first (NDJSON lines natively; a document's elements by one string-aware scan), then each
// event alone is decoded and parsed, so the body is never copied as a whole and each
// event's size as received is known exactly. This is the hot path of ingestion: checks
// that can be decided once for the whole body natively are (UTF-8, escapes, poisoning).
import { isUtf8 } from 'node:buffer';
import sjson from 'secure-json-parse';

export interface PushLineError {
  line: number;
  reason: string;
}

/** `not_a_document`: format json was asked for and the body is not one JSON document (nothing parsed). */
export type PushFormat = 'empty' | 'object' | 'array' | 'ndjson' | 'not_a_document' | 'text';

/**
 * What the sender declared (the `format` query parameter). auto: one document when the body
 * is one, else NDJSON; json: the body must be one document; ndjson: every line is an event,
 * even when the whole body would also read as one document.
 */
export type PushFormatChoice = 'auto' | 'json' | 'ndjson';
export const PUSH_FORMAT_CHOICES: readonly PushFormatChoice[] = ['auto', 'json', 'ndjson'];

export interface ParsedPush {
  format: PushFormat;
  /** The JSON text of each accepted event, as received: what is queued (the one pass parses it again, nothing re-encodes it). */
  texts: string[];
  /** Line (NDJSON) or element index (array) of each accepted event, 1-based. */
  lines: number[];
  /** Bytes of each accepted event as received. */
  sizes: number[];
  errors: PushLineError[];
}

export interface PushParseOptions {
  /** Deepest nesting of one event (the API's JSON depth limit). */
  maxDepth: number;
  /** Default auto. */
  format?: PushFormatChoice;
}

/** Safe stream names: they become queue payload fields, mapping keys and metric labels. */
export const STREAM_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';
/** STREAM_NAME_PATTERN in words, for validation answers (platform/validation-issues.ts). */
export const STREAM_NAME_RULE = {
  pattern: 'must be 1 to 64 letters, digits, "_", "." or "-", starting with a letter or a digit',
};
const STREAM_NAME_RE = new RegExp(STREAM_NAME_PATTERN);

export function isStreamName(value: string): boolean {
  return STREAM_NAME_RE.test(value);
}

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const isSpace = (c: number | undefined) => c === SPACE || c === LF || c === CR || c === TAB;

/** [start, end) of one event in the body, with its deepest nesting. */
interface Span {
  start: number;
  end: number;
  depth: number;
  line: number;
}

function trimmed(buf: Buffer, start: number, end: number): [number, number] {
  while (start < end && isSpace(buf[start])) start++;
  while (end > start && isSpace(buf[end - 1])) end--;
  return [start, end];
}

/**
 * The balanced structure that opens at `start`: its end and, for an array, the spans of its
 * top-level elements. undefined when it never closes (then the body is not one document).
 */
function scanDocument(buf: Buffer, start: number): { end: number; depth: number; elements: Span[] } | undefined {
  const isArray = buf[start] === OPEN_BRACKET;
  const elements: Span[] = [];
  let depth = 0;
  let max = 0;
  let inString = false;
  let elementStart = start + 1;
  let elementDepth = 0;
  const closeElement = (end: number, last: boolean) => {
    const [s, e] = trimmed(buf, elementStart, end);
    // `[]` and `[ ]` hold no element; a blank one between commas is reported.
    if (s === e && last && elements.length === 0) return;
    elements.push({ start: s, end: e, depth: elementDepth, line: elements.length + 1 });
  };
  for (let i = start; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth > max) max = depth;
      if (depth - 1 > elementDepth) elementDepth = depth - 1;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) {
        if (isArray) closeElement(i, true);
        return { end: i + 1, depth: max, elements };
      }
    } else if (c === COMMA && depth === 1 && isArray) {
      closeElement(i, false);
      elementStart = i + 1;
      elementDepth = 0;
    }
  }
  return undefined;
}

/** NDJSON: every non-blank line with its physical line number (depth measured later). */
function splitLines(buf: Buffer, start: number): Span[] {
  const spans: Span[] = [];
  let line = 1;
  let lineStart = start;
  // A raw line break cannot be inside a valid JSON string: every LF ends a line.
  for (;;) {
    const lf = buf.indexOf(LF, lineStart);
    const [s, e] = trimmed(buf, lineStart, lf < 0 ? buf.length : lf);
    if (s < e) spans.push({ start: s, end: e, depth: UNMEASURED, line });
    if (lf < 0) return spans;
    line++;
    lineStart = lf + 1;
  }
}

const UNMEASURED = -1;

/**
 * Nesting depth of [start, end), exact when it may exceed `max`. Counting the opening
 * brackets natively bounds the depth from above; only a line with more of them than `max`
 * (rare) is scanned byte by byte, strings excluded.
 */
function depthOf(buf: Buffer, start: number, end: number, max: number): number {
  const text = buf.subarray(start, end);
  let opens = 0;
  for (const bracket of [OPEN_BRACE, OPEN_BRACKET]) {
    for (let i = text.indexOf(bracket); i >= 0 && opens <= max; i = text.indexOf(bracket, i + 1)) opens++;
  }
  if (opens <= max) return opens;
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > deepest) deepest = depth;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return deepest;
}

const UNICODE_ESCAPE = '\\u';

function hexAt(buf: Buffer, i: number): number {
  const text = buf.toString('latin1', i, i + 4);
  return /^[0-9a-fA-F]{4}$/.test(text) ? parseInt(text, 16) : -1;
}

/**
 * False when a string holds \u0000 or a surrogate escape without its pair: valid JSON, but
 * PostgreSQL (queue, quarantine, samples) cannot store it, so the event is refused here
 * with a reason rather than failing later where the sender never hears of it.
 */
function storableEscapes(buf: Buffer, start: number, end: number): boolean {
  let i = buf.indexOf(BACKSLASH, start);
  while (i >= 0 && i < end) {
    if (buf[i + 1] === 0x75 /* u */) {
      const code = hexAt(buf, i + 2);
      if (code === 0) return false;
      if (code >= 0xdc00 && code <= 0xdfff) return false;
      if (code >= 0xd800 && code <= 0xdbff) {
        const low = buf[i + 6] === BACKSLASH && buf[i + 7] === 0x75 ? hexAt(buf, i + 8) : -1;
        if (low < 0xdc00 || low > 0xdfff) return false;
        i += 6; // the low half is checked as part of its pair
      }
      i = buf.indexOf(BACKSLASH, i + 6);
    } else {
      i = buf.indexOf(BACKSLASH, i + 2); // an escaped character, possibly a backslash
    }
  }
  return true;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Leading whitespace and a UTF-8 byte order mark are not content. */
function contentStart(buf: Buffer): number {
  let i = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  while (i < buf.length && isSpace(buf[i])) i++;
  return i;
}

function onlySpaceFrom(buf: Buffer, i: number): boolean {
  while (i < buf.length && isSpace(buf[i])) i++;
  return i === buf.length;
}

export function parsePushBody(buf: Buffer, options: PushParseOptions): ParsedPush {
  const out: ParsedPush = { format: 'empty', texts: [], lines: [], sizes: [], errors: [] };
  const start = contentStart(buf);
  if (start >= buf.length) return out;

  let spans: Span[] | undefined;
  const first = buf[start];
  const choice = options.format ?? 'auto';
  if (choice !== 'ndjson' && (first === OPEN_BRACE || first === OPEN_BRACKET)) {
    const doc = scanDocument(buf, start);
    if (doc && onlySpaceFrom(buf, doc.end)) {
      out.format = first === OPEN_BRACE ? 'object' : 'array';
      spans = first === OPEN_BRACE ? [{ start, end: doc.end, depth: doc.depth, line: 1 }] : doc.elements;
    }
  }
  if (!spans && choice === 'json') {
    out.format = 'not_a_document';
    return out;
  }
  if (!spans) {
    out.format = 'ndjson';
    spans = splitLines(buf, start);
  }

  // Checked once for the whole body (natively); per event only when the body has something
  // to look at. Without "__proto__", "constructor" or any \u escape (which could spell
  // them) anywhere, the plain JSON.parse is safe and the poisoning checks are skipped.
  const escapes = buf.indexOf(UNICODE_ESCAPE) >= 0;
  const checks: BodyChecks = {
    utf8: isUtf8(buf),
    escapes,
    poisonable: escapes || buf.indexOf('__proto__') >= 0 || buf.indexOf('constructor') >= 0,
  };
  const { maxDepth } = options;
  for (const span of spans) {
    const reason = parseSpan(buf, span, maxDepth, checks, out);
    if (reason) out.errors.push({ line: span.line, reason });
  }
  return out;
}

/** Adds the span's event to `out`, or returns why it is refused. */
interface BodyChecks {
  utf8: boolean;
  escapes: boolean;
  poisonable: boolean;
}

function parseSpan(buf: Buffer, span: Span, maxDepth: number, body: BodyChecks, out: ParsedPush): string | undefined {
  if (span.start === span.end) return 'empty element';
  const depth = span.depth === UNMEASURED ? depthOf(buf, span.start, span.end, maxDepth) : span.depth;
  if (depth > maxDepth) return `nested deeper than ${maxDepth} levels`;
  if (!body.utf8 && !isUtf8(buf.subarray(span.start, span.end))) return 'not valid UTF-8';
  if (body.escapes && !storableEscapes(buf, span.start, span.end))
    return 'contains \\u0000 or an unpaired surrogate escape, which cannot be stored';
  let value: unknown;
  const text = buf.toString('utf8', span.start, span.end);
  try {
    value = body.poisonable
      ? sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
      : JSON.parse(text);
  } catch (err) {
    const forbidden = err instanceof Error && /forbidden/.test(err.message);
    return forbidden ? 'forbidden key (__proto__ or constructor.prototype)' : 'invalid JSON';
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return `not a JSON object (${kindOf(value)})`;
  // A line break in valid JSON is whitespace (strings cannot hold one raw): one line per event queues without escaping.
  out.texts.push(text.includes('\n') || text.includes('\r') ? text.replace(/[\r\n]+/g, ' ') : text);
  out.lines.push(span.line);
  out.sizes.push(span.end - span.start);
  return undefined;
}

export interface PushChunk {
  /** Index of the first event of the chunk in ParsedPush.events. */
  start: number;
  /** One past the last. */
  end: number;
  /** Bytes of the chunk's events as received. */
  bytes: number;
}

/**
 * Splits accepted events into queue batches of at most `maxEvents` events and about
 * `maxBytes` bytes (a single event larger than that gets a chunk of its own).
 */
export function chunkEvents(sizes: readonly number[], maxEvents: number, maxBytes: number): PushChunk[] {
  const chunks: PushChunk[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < sizes.length; i++) {
    const size = sizes[i] as number;
    const count = i - start;
    if (count > 0 && (count >= maxEvents || bytes + size > maxBytes)) {
      chunks.push({ start, end: i, bytes });
      start = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (sizes.length > start) chunks.push({ start, end: sizes.length, bytes });
  return chunks;
}
