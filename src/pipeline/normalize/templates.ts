// Templates: text with `{path}` placeholders filled from the raw event, `{path|fallback}`
// for a text used when the path is absent, `{{` and `}}` for literal braces. Parsed once
// into literal parts and accessors; filling one is string concatenation, nothing else.
import { compileSegments, isAbsent, parsePath, PathSyntaxError, type Getter, type PathSegment } from './paths.js';

export type TemplateFn = (src: unknown) => string;

export class TemplateSyntaxError extends Error {}

export const MAX_TEMPLATE_LENGTH = 4096;

interface Placeholder {
  get: Getter;
  fallback: string;
}

/** One value as text: arrays become their elements joined with ", ", objects JSON. */
function text(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.map((x) => (isAbsent(x) ? '' : text(x))).join(', ');
  return JSON.stringify(v);
}

/** Finds the `}` closing a placeholder that opens at `start`, skipping quoted keys. */
function closeOf(t: string, start: number): number {
  let inQuote = false;
  for (let i = start; i < t.length; i++) {
    const c = t[i];
    if (inQuote) {
      if (c === '\\') i++;
      else if (c === '"') inQuote = false;
    } else if (c === '"') inQuote = true;
    else if (c === '}') return i;
  }
  return -1;
}

/** Splits `path|fallback` at the first `|` outside a quoted key. */
function splitFallback(body: string): [string, string | undefined] {
  let inQuote = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inQuote) {
      if (c === '\\') i++;
      else if (c === '"') inQuote = false;
    } else if (c === '"') inQuote = true;
    else if (c === '|') return [body.slice(0, i).trim(), body.slice(i + 1)];
  }
  return [body.trim(), undefined];
}

/**
 * Compiles a template. `onPath` receives each placeholder's parsed path (its value is
 * copied into the output, so it counts as read). Throws TemplateSyntaxError.
 */
export function compileTemplate(template: string, onPath?: (segs: PathSegment[]) => void): TemplateFn {
  if (template.length > MAX_TEMPLATE_LENGTH)
    throw new TemplateSyntaxError(`a template is limited to ${MAX_TEMPLATE_LENGTH} characters`);
  const literals: string[] = [];
  const holes: Placeholder[] = [];
  let lit = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c === '{') {
      if (template[i + 1] === '{') {
        lit += '{';
        i++;
        continue;
      }
      const end = closeOf(template, i + 1);
      if (end === -1) throw new TemplateSyntaxError(`unclosed { at character ${i + 1}`);
      const [path, fallback] = splitFallback(template.slice(i + 1, end));
      let segs: PathSegment[];
      try {
        segs = parsePath(path);
      } catch (e) {
        throw new TemplateSyntaxError(
          `placeholder at character ${i + 1}: ${e instanceof PathSyntaxError ? e.message : 'invalid path'}`,
        );
      }
      onPath?.(segs);
      literals.push(lit);
      lit = '';
      holes.push({ get: compileSegments(segs), fallback: fallback ?? '' });
      i = end;
      continue;
    }
    if (c === '}') {
      if (template[i + 1] !== '}')
        throw new TemplateSyntaxError(`unmatched } at character ${i + 1} (write }} for a literal brace)`);
      lit += '}';
      i++;
      continue;
    }
    lit += c;
  }
  literals.push(lit);
  if (holes.length === 0) {
    const constant = literals[0]!;
    return () => constant;
  }
  return (src) => {
    let out = literals[0]!;
    for (let h = 0; h < holes.length; h++) {
      const hole = holes[h]!;
      const v = hole.get(src);
      out += isAbsent(v) ? hole.fallback : text(v);
      out += literals[h + 1]!;
    }
    return out;
  };
}
