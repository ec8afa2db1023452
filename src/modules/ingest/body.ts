// Reading a push body: raw bytes whatever the Content-Type, `Content-Encoding: gzip`
// decompressed as it streams in, with two bounds (bytes as sent, bytes decompressed) that
// stop reading at once when crossed, so a small zip bomb never expands in memory. Each
// decoded chunk is offered to `admit` first (the in-flight byte budget).
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { AppError } from '../../core/errors.js';

export type BodyEncoding = 'identity' | 'gzip';

export interface BodyLimits {
  /** Bytes as sent. */
  maxBodyBytes: number;
  /** Bytes after decompression. */
  maxDecodedBytes: number;
  /** Events one request may carry (WEIR_INGEST_MAX_EVENTS_PER_REQUEST). */
  maxEventsPerRequest: number;
}

export interface ReadBodyOptions extends BodyLimits {
  encoding: BodyEncoding;
  /** Declared Content-Length, when sent: refused before reading when already too large. */
  contentLength?: number | undefined;
  /** Called with each decoded chunk's size before it is kept; throws to stop reading. */
  admit(bytes: number): void;
  /** A text stream: every line is an event, whatever its first character. */
  text?: boolean;
  /**
   * Lines are not events (a protocol's envelope, a binary body such as OTLP protobuf): no
   * count while reading; the caller counts the events it decodes.
   */
  linesAreNotEvents?: boolean;
}

/** The body's encoding from Content-Encoding; 415 for anything but gzip and identity. */
export function bodyEncoding(header: string | undefined): BodyEncoding {
  const codings = (header ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return 'identity';
  if (codings.length === 1 && (codings[0] === 'gzip' || codings[0] === 'x-gzip')) return 'gzip';
  throw new AppError('ingest.unsupported_encoding', {
    detail: `Content-Encoding "${String(header).slice(0, 64)}" is not supported; send gzip or identity`,
    details: { supported: ['gzip', 'identity'] },
  });
}

/**
 * Media types a push may declare. The format is still decided from the content (one JSON
 * document, else NDJSON); the type only has to say "JSON text". curl's default for
 * -d/--data-binary (application/x-www-form-urlencoded) is accepted because most pushes
 * written by hand send it unawares; the body is never form-decoded.
 */
export const ACCEPTED_MEDIA_TYPES = [
  'application/json',
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/x-jsonlines',
  'text/plain',
  'application/x-www-form-urlencoded',
] as const;
const ACCEPTED = new Set<string>(ACCEPTED_MEDIA_TYPES);
/** Events are UTF-8 (RFC 8259); ASCII is a subset of it. */
const UTF8_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii']);
const GZIP_TYPES = new Set(['application/gzip', 'application/x-gzip']);
const ACCEPTED_TEXT = `${ACCEPTED_MEDIA_TYPES.join(', ')} or any application/*+json type, optionally with charset=utf-8`;

function unsupportedMedia(header: string, reason: string): AppError {
  return new AppError('request.unsupported_media_type', {
    detail: `Content-Type "${header.slice(0, 100)}" ${reason}; send one of ${ACCEPTED_TEXT} (or no Content-Type)`,
    details: { content_type: header.slice(0, 100), accepted: [...ACCEPTED_MEDIA_TYPES, 'application/*+json'] },
  });
}

/** 415 unless the declared Content-Type (case and parameters aside) is one a push may carry. */
export function checkMediaType(header: string | undefined): void {
  if (header === undefined || header.trim() === '') return;
  const [essence = '', ...params] = header.split(';');
  const type = essence.trim().toLowerCase();
  if (GZIP_TYPES.has(type))
    throw unsupportedMedia(
      header,
      "names a compressed file: declare the events' type and send the compression as Content-Encoding: gzip",
    );
  if (!ACCEPTED.has(type) && !/^application\/[a-z0-9!#$&^_.+-]+\+json$/.test(type))
    throw unsupportedMedia(header, 'is not accepted for events');
  for (const param of params) {
    const [name = '', value = ''] = param.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    const charset = value
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (!UTF8_CHARSETS.has(charset))
      throw unsupportedMedia(header, 'declares a character set other than UTF-8, which events must be in');
  }
}

/** The gzip magic number (RFC 1952): a compressed body whose Content-Encoding was not declared. */
export function looksLikeGzip(body: Buffer): boolean {
  return body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b;
}

/** 413 naming the per-request event limit; `counted` says how the count was taken. */
export const tooManyEvents = (limit: number, counted: 'lines' | 'events') =>
  new AppError('request.too_many_events', {
    detail: `The request holds more than ${limit} events (${counted === 'lines' ? 'counted by line while it was read' : 'after parsing'}), the limit of one request (WEIR_INGEST_MAX_EVENTS_PER_REQUEST); send them in several requests`,
    details: { limit_events: limit, measured: counted === 'lines' ? 'lines while reading' : 'events after parsing' },
    headers: { connection: 'close' },
  });

// The rest of an oversized body is not read: the connection closes after the answer.
const tooLarge = (what: 'body' | 'decompressed body', limit: number) =>
  new AppError('request.body_too_large', {
    detail: `The ${what} is larger than the limit of ${limit} bytes; send smaller batches`,
    details: { limit_bytes: limit, measured: what === 'body' ? 'as sent' : 'after decompression' },
    headers: { connection: 'close' },
  });

function readFailure(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code.startsWith('Z_')) {
    return new AppError('request.invalid', { detail: 'The body is not valid gzip data (Content-Encoding: gzip)' });
  }
  return new AppError('request.invalid', {
    detail: 'The request body ended before it was complete',
    headers: { connection: 'close' },
  });
}

function firstNonSpace(chunk: Buffer): number | undefined {
  for (const b of chunk) if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return b;
  return undefined;
}

/**
 * The decoded body; an empty Buffer when there is none. The source is read through its
 * events and never destroyed: destroying a request would reset the connection before the
 * 413 or 429 answer reaches the client.
 */
export function readBody(source: Readable | undefined, options: ReadBodyOptions): Promise<Buffer> {
  const { encoding, maxBodyBytes, maxDecodedBytes, maxEventsPerRequest, contentLength, admit, text } = options;
  const countLines = !options.linesAreNotEvents;
  if (contentLength !== undefined && contentLength > maxBodyBytes)
    return Promise.reject(tooLarge('body', maxBodyBytes));
  if (!source) return Promise.resolve(Buffer.alloc(0));
  const input: Readable = source;
  const decodedLimit = encoding === 'identity' ? Math.min(maxBodyBytes, maxDecodedBytes) : maxDecodedBytes;
  const decodedWhat = encoding === 'identity' && decodedLimit === maxBodyBytes ? 'body' : 'decompressed body';

  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let sent = 0;
    let decoded = 0;
    // Lines seen so far: NDJSON and text carry one event per line, so a body with more lines
    // than the limit is refused while it streams in. A JSON document (its first byte '[' or
    // '{' followed by a line break inside) is counted after parsing instead (pretty-printed
    // arrays have many lines per event); its size is bounded by maxDecodedBytes meanwhile.
    let lines = 0;
    let firstByte: number | undefined;
    let ended = false;
    let settled = false;
    const gunzip = encoding === 'gzip' ? createGunzip() : undefined;

    const detach = () => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', fail);
      input.off('close', onClose);
    };
    function fail(err: unknown) {
      if (settled) return;
      settled = true;
      detach();
      gunzip?.destroy();
      // Whatever is still arriving is read and dropped, so the client can read the answer.
      input.resume();
      reject(readFailure(err));
    }
    function finish() {
      if (settled) return;
      settled = true;
      detach();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, decoded));
    }
    function keep(chunk: Buffer) {
      decoded += chunk.length;
      if (decoded > decodedLimit) throw tooLarge(decodedWhat, decodedLimit);
      if (firstByte === undefined) firstByte = firstNonSpace(chunk);
      if (countLines && (text || firstByte !== 0x5b)) {
        for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines++;
        if (lines > maxEventsPerRequest) throw tooManyEvents(maxEventsPerRequest, 'lines');
      }
      admit(chunk.length);
      chunks.push(chunk);
    }
    function onData(chunk: Buffer) {
      try {
        sent += chunk.length;
        if (sent > maxBodyBytes) throw tooLarge('body', maxBodyBytes);
        if (!gunzip) keep(chunk);
        else if (!gunzip.write(chunk)) {
          input.pause();
          gunzip.once('drain', () => !settled && input.resume());
        }
      } catch (err) {
        fail(err);
      }
    }
    function onEnd() {
      ended = true;
      if (gunzip) gunzip.end();
      else finish();
    }
    function onClose() {
      if (!ended) fail(new Error('premature close'));
    }

    if (gunzip) {
      gunzip.on('data', (chunk: Buffer) => {
        if (settled) return;
        try {
          keep(chunk);
        } catch (err) {
          fail(err);
        }
      });
      gunzip.once('end', finish);
      gunzip.once('error', fail);
    }
    input.on('data', onData);
    input.once('end', onEnd);
    input.once('error', fail);
    input.once('close', onClose);
  });
}
