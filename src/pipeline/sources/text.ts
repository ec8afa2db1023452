// Text source: a body (or a syslog frame) whose every non-blank line is one event, the raw
// message a mapping's `parse` steps read (docs/mappings.md, Parsing text). Each line is queued
// as the JSON text of `{"message": "<line>"}`: the queue, the quarantine (which stores and
// reprocesses raw events), samples and drift all keep handling JSON objects, and the one pass
// parses each line once.
import { isUtf8 } from 'node:buffer';
import type { ParsedPush } from './push.js';

/** Longest line accepted as one event, in bytes: what the longest `parse` step may read (1 MiB). */
export const MAX_TEXT_LINE_BYTES = 1_048_576;

const LF = 0x0a;
const CR = 0x0d;

/**
 * Why a line cannot be an event, or undefined when it can. NUL cannot be stored by
 * PostgreSQL (queue, quarantine, samples): refused with a reason here rather than failing
 * later where the sender never hears of it.
 */
export function textLineProblem(line: string, bytes: number): string | undefined {
  if (bytes > MAX_TEXT_LINE_BYTES) return `longer than ${MAX_TEXT_LINE_BYTES} bytes`;
  if (line.includes('\u0000')) return 'contains a NUL character, which cannot be stored';
  return undefined;
}

/** The queued text of one text event. */
export function textEvent(line: string): string {
  return JSON.stringify({ message: line });
}

/** Every non-blank line of a text body is one event (LF or CRLF line ends; a UTF-8 BOM is skipped). */
export function parseTextBody(buf: Buffer): ParsedPush {
  const out: ParsedPush = { format: 'text', texts: [], lines: [], sizes: [], errors: [] };
  let start = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  const utf8 = isUtf8(buf);
  let line = 1;
  while (start <= buf.length) {
    const lf = buf.indexOf(LF, start);
    let end = lf < 0 ? buf.length : lf;
    if (end > start && buf[end - 1] === CR) end--;
    if (end > start && buf.subarray(start, end).some((c) => c !== 0x20 && c !== 0x09)) {
      const bytes = end - start;
      const valid = utf8 || isUtf8(buf.subarray(start, end));
      const text = valid && bytes <= MAX_TEXT_LINE_BYTES ? buf.toString('utf8', start, end) : '';
      const reason = !valid ? 'not valid UTF-8' : textLineProblem(text, bytes);
      if (reason) out.errors.push({ line, reason });
      else {
        out.texts.push(textEvent(text));
        out.lines.push(line);
        out.sizes.push(bytes);
      }
    }
    if (lf < 0) break;
    start = lf + 1;
    line++;
  }
  if (out.texts.length === 0 && out.errors.length === 0) out.format = 'empty';
  return out;
}
