// The input contract every operation shares, present and future, applied where routes are
// declared and where requests enter, not route by route:
// - bounds: every integer and number of a route's params, query, headers and body gets the
//   range of the column it will meet (32-bit integers, finite numbers) and every string a
//   length, unless the schema gives its own; they show in the OpenAPI document too;
// - text: no string or object key of the params, query or body may hold a NUL (U+0000) or
//   an unpaired UTF-16 surrogate. Both are valid JSON and valid URLs, and neither can be
//   stored by PostgreSQL (text refuses NUL, jsonb refuses both).
// A breach is a 422 naming the field, before any handler runs.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.js';
import { escapeText, textProblem } from '../../core/text.js';

export const INT32_MIN = -2_147_483_648;
export const INT32_MAX = 2_147_483_647;

/** Longest string of each request part when its schema names no maxLength. */
export const DEFAULT_MAX_LENGTH = { params: 256, querystring: 2048, headers: 8192, body: 4096 } as const;
export type InputPart = keyof typeof DEFAULT_MAX_LENGTH;

type Schema = Record<string | symbol, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

function typesOf(schema: Schema): string[] {
  const t = schema.type;
  return Array.isArray(t) ? (t as string[]) : typeof t === 'string' ? [t] : [];
}

/**
 * A copy of a request schema with default bounds wherever the schema sets none. TypeBox's own
 * keys (`~kind`, `~optional`: non-enumerable) are kept non-enumerable, so neither a validator
 * nor the OpenAPI document sees them; the input schema itself is never changed (schemas are shared).
 */
export function withInputBounds<T>(schema: T, part: InputPart): T {
  return bound(schema, part) as T;
}

function bound(node: unknown, part: InputPart): unknown {
  if (Array.isArray(node)) return node.map((n) => bound(n, part));
  if (!isObject(node)) return node;
  const out: Schema = {};
  for (const key of Reflect.ownKeys(node)) {
    const value = node[key];
    // enum/const/default/examples are values, not schemas.
    const copy =
      typeof key === 'string' && ['enum', 'const', 'default', 'examples', 'example'].includes(key)
        ? value
        : bound(value, part);
    if (Object.prototype.propertyIsEnumerable.call(node, key)) out[key] = copy;
    else Object.defineProperty(out, key, { value: copy, enumerable: false, writable: true, configurable: true });
  }
  const types = typesOf(out);
  const fixed = 'enum' in out || 'const' in out;
  if (!fixed && types.includes('integer')) {
    if (out.maximum === undefined && out.exclusiveMaximum === undefined) out.maximum = INT32_MAX;
    if (out.minimum === undefined && out.exclusiveMinimum === undefined) out.minimum = INT32_MIN;
  } else if (!fixed && types.includes('number')) {
    // Finite: 1e309 parses (JSON and query strings alike) to Infinity.
    if (out.maximum === undefined && out.exclusiveMaximum === undefined) out.maximum = Number.MAX_VALUE;
    if (out.minimum === undefined && out.exclusiveMinimum === undefined) out.minimum = -Number.MAX_VALUE;
  }
  if (!fixed && types.includes('string') && out.maxLength === undefined) out.maxLength = DEFAULT_MAX_LENGTH[part];
  return out;
}

/** The first string or key of a parsed value that cannot be stored: its location and why. */
export function findTextProblem(
  value: unknown,
  location: string,
  depth = 0,
): { location: string; problem: string } | undefined {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { location, problem } : undefined;
  }
  // Only parsed JSON and query values are walked: a body some route reads as a stream or a
  // Buffer is not a tree of plain objects (and may be a graph with cycles).
  if (depth > 256 || value === null || typeof value !== 'object') return undefined;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = findTextProblem(item, `${location}/${i}`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const keyProblem = textProblem(key);
    if (keyProblem)
      return { location: `${location}/${escapeText(key)}`, problem: `has a field name that ${keyProblem}` };
    const found = findTextProblem(item, `${location}/${key}`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function checkText(request: FastifyRequest): void {
  // Params and query are flat maps whatever their prototype (the router's own classes).
  const parts: [string, unknown][] = [
    ['params', { ...(request.params as object) }],
    ['querystring', { ...(request.query as object) }],
    ['body', request.body],
  ];
  for (const [where, value] of parts) {
    const found = findTextProblem(value, where);
    if (found) {
      throw new AppError('request.invalid_text', {
        detail: `${found.location} ${found.problem}`,
        details: { location: found.location },
      });
    }
  }
}

/** Registered on the API scope: the text rule for every operation, before validation. */
export function inputTextHook(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => checkText(request));
}
