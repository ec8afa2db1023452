// Source paths into raw events: parsed once at compile time into segments, then into accessor
// closures, so reading a field per event is a few property loads, never string work.
//
// Grammar: `a.b.c`, `a[0].b` (index; negative counts from the end), `a[*].b` (every element,
// collected into a flat array), `a[?type=User].id` (the first element whose `type` equals
// `User`; `[?type~=user]` ignores case in the key and the value), `a["x.y"].b` (a key containing `.`, `[`, `]` or `"`, written as a JSON string),
// `@` (the current value: the event, or the element inside `each`).

export type PathSegment =
  /** `own`: the key is also an Object.prototype member (toString...), so reads check own properties. */
  | { readonly t: 'key'; readonly k: string; readonly own: boolean }
  | { readonly t: 'idx'; readonly i: number }
  | { readonly t: 'all' }
  /** `ci`: `[?k~=v]`, the key and the value compared ignoring case (`type` finds `Type`, `User` finds `user`). */
  | { readonly t: 'find'; readonly k: string; readonly v: string; readonly ci?: boolean };

/** Reads a value from the current scope (the raw event, or an element inside `each`). */
export type Getter = (src: unknown) => unknown;

export class PathSyntaxError extends Error {}

const PLAIN_KEY = /^[^.[\]"]+$/;

function keySeg(k: string): PathSegment {
  return { t: 'key', k, own: k in Object.prototype };
}

/** A key as it appears in a normalized path: bare when it can be, else `["..."]`. */
export function formatKey(key: string, first: boolean): string {
  if (PLAIN_KEY.test(key)) return first ? key : `.${key}`;
  return `[${JSON.stringify(key)}]`;
}

/** Appends a raw key to a normalized path (drift and `reads` spell paths the same way). */
export function joinPathKey(prefix: string, key: string): string {
  return prefix === '' ? formatKey(key, true) : prefix + formatKey(key, false);
}

function readQuoted(path: string, start: number): { value: string; end: number } {
  // start points at the opening quote; find the closing one, honouring backslash escapes.
  let i = start + 1;
  while (i < path.length && path[i] !== '"') i += path[i] === '\\' ? 2 : 1;
  if (i >= path.length) throw new PathSyntaxError('unterminated quoted key');
  try {
    return { value: JSON.parse(path.slice(start, i + 1)) as string, end: i + 1 };
  } catch {
    throw new PathSyntaxError('invalid quoted key');
  }
}

function parseBracket(path: string, start: number, emptyIsAll: boolean): { seg: PathSegment; end: number } {
  // start points just after `[`.
  if (path[start] === '"') {
    const q = readQuoted(path, start);
    if (path[q.end] !== ']') throw new PathSyntaxError('expected ] after quoted key');
    return { seg: keySeg(q.value), end: q.end + 1 };
  }
  if (path[start] === '?') {
    const eq = path.indexOf('=', start);
    if (eq === -1) throw new PathSyntaxError('a filter is written [?key=value] or [?key~=value]');
    const ci = path[eq - 1] === '~';
    const k = path.slice(start + 1, ci ? eq - 1 : eq);
    if (!PLAIN_KEY.test(k)) throw new PathSyntaxError('a filter key must be a plain key');
    let v: string;
    let end: number;
    if (path[eq + 1] === '"') {
      const q = readQuoted(path, eq + 1);
      v = q.value;
      end = q.end;
    } else {
      end = path.indexOf(']', eq);
      if (end === -1) throw new PathSyntaxError('unterminated [');
      v = path.slice(eq + 1, end);
    }
    if (path[end] !== ']') throw new PathSyntaxError('expected ] after filter value');
    return { seg: ci ? { t: 'find', k: k.toLowerCase(), v: v.toLowerCase(), ci } : { t: 'find', k, v }, end: end + 1 };
  }
  const close = path.indexOf(']', start);
  if (close === -1) throw new PathSyntaxError('unterminated [');
  const inner = path.slice(start, close);
  if (inner === '*' || (emptyIsAll && inner === '')) return { seg: { t: 'all' }, end: close + 1 };
  if (/^-?\d{1,9}$/.test(inner)) return { seg: { t: 'idx', i: Number(inner) }, end: close + 1 };
  throw new PathSyntaxError(`[${inner}] is not an index, [*], [?key=value] or ["key"]`);
}

/**
 * Parses a source path; throws PathSyntaxError with a short reason. With `normalized`, `[]`
 * is read as `[*]`, so paths spelled as drift and `reads` spell them parse too.
 */
export function parsePath(path: string, normalized = false): PathSegment[] {
  if (typeof path !== 'string' || path.length === 0) throw new PathSyntaxError('a path cannot be empty');
  if (path === '@') return []; // the current value itself (the element inside each)
  const segs: PathSegment[] = [];
  let i = 0;
  let expectKey = true;
  while (i < path.length) {
    const c = path[i];
    if (c === '[') {
      const r = parseBracket(path, i + 1, normalized);
      segs.push(r.seg);
      i = r.end;
      expectKey = false;
      continue;
    }
    if (c === '.') {
      if (expectKey) throw new PathSyntaxError('empty key (two dots, or a leading dot)');
      i++;
      expectKey = true;
      if (i >= path.length) throw new PathSyntaxError('a path cannot end with a dot');
      continue;
    }
    if (!expectKey) throw new PathSyntaxError(`unexpected "${c}" after ]`);
    let j = i;
    while (j < path.length && path[j] !== '.' && path[j] !== '[') {
      if (path[j] === ']' || path[j] === '"')
        throw new PathSyntaxError(`unexpected "${path[j]}": quote such keys as ["..."]`);
      j++;
    }
    segs.push(keySeg(path.slice(i, j)));
    i = j;
    expectKey = false;
  }
  return segs;
}

/**
 * parsePath for the compiler: the segments, or undefined after recording the problem at `at`
 * (`invalid path: <reason>`).
 */
export function parsePathAt(
  path: unknown,
  at: string,
  problems: { at: string; message: string }[],
  normalized = false,
): PathSegment[] | undefined {
  try {
    return parsePath(path as string, normalized);
  } catch (e) {
    problems.push({ at, message: `invalid path: ${e instanceof PathSyntaxError ? e.message : String(e)}` });
    return undefined;
  }
}

/** The normalized spelling used by `reads` and drift: indexes and `[*]` become `[]`. */
export function formatSegments(segs: readonly PathSegment[]): string {
  let out = '';
  for (const s of segs) {
    if (s.t === 'key') out += formatKey(s.k, out === '');
    else out += '[]';
  }
  return out;
}

/** True when the path collects several values (`[*]`), so its value is always an array. */
export function collects(segs: readonly PathSegment[]): boolean {
  return segs.some((s) => s.t === 'all');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function step(v: unknown, s: PathSegment): unknown {
  switch (s.t) {
    case 'key':
      return isRecord(v) && (!s.own || Object.hasOwn(v, s.k)) ? v[s.k] : undefined;
    case 'idx':
      if (Array.isArray(v)) return v[s.i < 0 ? v.length + s.i : s.i];
      // A lone value stands for a one-element list (XML-to-JSON converters drop the array).
      return s.i === 0 || s.i === -1 ? v : undefined;
    case 'find': {
      if (!Array.isArray(v)) return isRecord(v) && matchesFilter(v, s) ? v : undefined;
      for (const el of v) if (isRecord(el) && matchesFilter(el, s)) return el;
      return undefined;
    }
    case 'all':
      return v;
  }
}

function matchesFilter(el: Record<string, unknown>, s: { k: string; v: string; ci?: boolean }): boolean {
  if (s.ci) {
    // Vendors vary the case of both (`type`/`Type`, `User`/`user`): any key that matches does.
    for (const key of Object.keys(el)) {
      if (key.toLowerCase() === s.k && isScalar(el[key]) && String(el[key]).toLowerCase() === s.v) return true;
    }
    return false;
  }
  const x = Object.hasOwn(el, s.k) ? el[s.k] : undefined;
  return isScalar(x) && String(x) === s.v;
}

function isScalar(x: unknown): x is string | number | boolean {
  return typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean';
}

function collectFrom(v: unknown, segs: readonly PathSegment[], i: number, out: unknown[]): void {
  for (; i < segs.length; i++) {
    const s = segs[i]!;
    if (s.t === 'all') {
      if (v === undefined || v === null) return;
      if (Array.isArray(v)) for (const el of v) collectFrom(el, segs, i + 1, out);
      else collectFrom(v, segs, i + 1, out);
      return;
    }
    v = step(v, s);
    if (v === undefined || v === null) return;
  }
  if (Array.isArray(v)) for (const el of v) out.push(el);
  else out.push(v);
}

/** Compiles a parsed path into an accessor. Plain key paths get unrolled closures. */
export function compileSegments(segs: readonly PathSegment[]): Getter {
  if (collects(segs)) {
    return (src) => {
      const out: unknown[] = [];
      collectFrom(src, segs, 0, out);
      return out.length === 0 ? undefined : out;
    };
  }
  if (segs.every((s) => s.t === 'key' && !s.own)) {
    const ks = segs.map((s) => (s as { k: string }).k);
    const [a, b, c] = ks as [string, string | undefined, string | undefined];
    const get = (o: unknown, k: string) =>
      typeof o === 'object' && o !== null && !Array.isArray(o) ? (o as Record<string, unknown>)[k] : undefined;
    if (ks.length === 1) return (src) => get(src, a);
    if (ks.length === 2) return (src) => get(get(src, a), b!);
    if (ks.length === 3) return (src) => get(get(get(src, a), b!), c!);
    return (src) => {
      let v = src;
      for (const k of ks) {
        v = get(v, k);
        if (v === undefined) return undefined;
      }
      return v;
    };
  }
  return (src) => {
    let v = src;
    for (const s of segs) {
      v = step(v, s);
      if (v === undefined || v === null) return undefined;
    }
    return v;
  };
}

/** Parses and compiles a source path. */
export function compilePath(path: string): Getter {
  return compileSegments(parsePath(path));
}

/** Reads one path from a value (convenience for tools and tests; compile paths in hot code). */
export function readPath(src: unknown, path: string): unknown {
  return compilePath(path)(src);
}

/** Absent means: undefined, null, the empty string, or an empty array. */
export function isAbsent(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}
