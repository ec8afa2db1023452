// One broker message into events, or why it cannot be one: json (one object, or an array of
// objects), ndjson (one object per line) or text (the whole body one text event). A message
// is the broker's unit of acknowledgement, so one bad event refuses the whole message.
import { isUtf8 } from 'node:buffer';
import { parsePushBody } from '../../pipeline/sources/push.js';
import { textEvent, textLineProblem } from '../../pipeline/sources/text.js';
import type { ProtocolEvent } from '../ingest/service.js';
import type { BusFormat } from './config.js';

export type Decoded = { events: ProtocolEvent[] } | { reason: string };

function trailingNewlines(buf: Buffer): number {
  let end = buf.length;
  while (end > 0 && (buf[end - 1] === 0x0a || buf[end - 1] === 0x0d)) end--;
  return end;
}

export function decodeMessage(body: Buffer, format: BusFormat, stream: string, maxDepth: number): Decoded {
  if (format === 'text') {
    const end = trailingNewlines(body);
    if (end === 0) return { reason: 'empty message' };
    const raw = body.subarray(0, end);
    if (!isUtf8(raw)) return { reason: 'not valid UTF-8' };
    const text = raw.toString('utf8');
    const problem = textLineProblem(text, raw.length);
    if (problem) return { reason: problem };
    return { events: [{ stream, text: textEvent(text), bytes: raw.length }] };
  }
  const parsed = parsePushBody(body, { maxDepth, format });
  if (parsed.format === 'not_a_document') return { reason: 'not one JSON document (format json)' };
  const first = parsed.errors[0];
  if (first) {
    const where =
      parsed.format === 'ndjson' ? `line ${first.line}: ` : parsed.format === 'array' ? `element ${first.line}: ` : '';
    return { reason: `${where}${first.reason}` };
  }
  if (parsed.texts.length === 0) return { reason: 'empty message' };
  return { events: parsed.texts.map((text, i) => ({ stream, text, bytes: parsed.sizes[i]! })) };
}
