// JSON bodies: a nesting limit checked before parsing (a deep document cannot exhaust
// the stack), prototype-poisoning refusal, and a clear 400 for anything malformed.
import sjson from 'secure-json-parse';
import { AppError } from '../../core/errors.js';

/** Deepest nesting of arrays/objects in a JSON text, scanning once without parsing. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) max = depth;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return max;
}

export function parseJsonBody(text: string, maxDepth: number): unknown {
  if (text.trim() === '') return undefined;
  if (jsonDepth(text) > maxDepth) {
    throw new AppError('request.json_too_deep', {
      detail: `JSON body is nested deeper than ${maxDepth} levels`,
      details: { max_depth: maxDepth },
    });
  }
  try {
    return sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    const reason = err instanceof Error ? err.message : 'invalid JSON';
    throw new AppError('request.malformed_json', { detail: `Malformed JSON body: ${reason}` });
  }
}
