// One value checker per OCSF dictionary type, built once per catalog. A checker returns
// undefined for a good value and a message otherwise; it never allocates for a good value.
import { isIP } from 'node:net';
import type { OcsfCatalog, OcsfTypeDef } from './types.js';

export type ValueCheck = (value: unknown) => string | undefined;

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

/** A short description of a value for messages: its JSON type, and short scalars themselves. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return value.length <= 40 ? `string ${JSON.stringify(value)}` : `a string of ${value.length} characters`;
    case 'number':
    case 'boolean':
      return `${typeof value} ${String(value)}`;
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/** The root of a type's base chain: timestamp_t -> long_t, port_t -> integer_t. */
export function rootType(catalog: OcsfCatalog, name: string): string {
  let current = name;
  for (let guard = 0; guard < 8; guard++) {
    const base = catalog.type(current)?.base;
    if (base === undefined || base === current) return current;
    current = base;
  }
  return current;
}

function baseCheck(root: string, label: string): ValueCheck {
  switch (root) {
    case 'string_t':
      return (v) => (typeof v === 'string' ? undefined : `expected ${label}, got ${describe(v)}`);
    case 'integer_t':
      return (v) =>
        typeof v === 'number' && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX
          ? undefined
          : `expected ${label} (a 32-bit integer), got ${describe(v)}`;
    case 'long_t':
      return (v) =>
        typeof v === 'number' && Number.isInteger(v) ? undefined : `expected ${label} (an integer), got ${describe(v)}`;
    case 'float_t':
      return (v) =>
        typeof v === 'number' && Number.isFinite(v) ? undefined : `expected ${label} (a number), got ${describe(v)}`;
    case 'boolean_t':
      return (v) => (typeof v === 'boolean' ? undefined : `expected ${label}, got ${describe(v)}`);
    case 'json_t':
      return () => undefined;
    default:
      // A base type this code does not know: accept anything rather than reject good data.
      return () => undefined;
  }
}

function compileRegex(source: string): RegExp | undefined {
  try {
    return new RegExp(source);
  } catch {
    return undefined; // a pattern JavaScript cannot read: the base type check still applies
  }
}

/** The checker for one dictionary type, with its max_len, range, values and regex. */
export function typeCheck(catalog: OcsfCatalog, type: OcsfTypeDef): ValueCheck {
  const label = `${type.caption} (${type.name})`;
  const root = rootType(catalog, type.name);
  const base = baseCheck(root, label);

  if (type.name === 'timestamp_t') {
    return (v) =>
      typeof v === 'number' && Number.isInteger(v)
        ? undefined
        : `expected ${label}: integer milliseconds since the epoch, got ${describe(v)}`;
  }
  if (type.name === 'ip_t') {
    // node:net is exact and much cheaper than the schema's (loose) 1.5 KB pattern.
    return (v) =>
      typeof v === 'string' && v.length <= (type.maxLen ?? 64) && isIP(v) !== 0
        ? undefined
        : `expected ${label}, got ${describe(v)}`;
  }

  const maxLen = type.maxLen;
  const range = type.range;
  const regex = type.regex !== undefined ? compileRegex(type.regex) : undefined;
  const values = type.values && root !== 'boolean_t' ? new Set(type.values) : undefined;
  if (maxLen === undefined && range === undefined && regex === undefined && values === undefined) return base;

  return (v) => {
    const wrong = base(v);
    if (wrong !== undefined) return wrong;
    if (typeof v === 'string') {
      if (maxLen !== undefined && v.length > maxLen)
        return `expected ${label} of at most ${maxLen} characters, got ${v.length}`;
      if (regex !== undefined && !regex.test(v)) return `expected ${label}, got ${describe(v)}`;
    } else if (typeof v === 'number' && range !== undefined && (v < range[0] || v > range[1])) {
      return `expected ${label} between ${range[0]} and ${range[1]}, got ${v}`;
    }
    if (values !== undefined && !values.has(v))
      return `expected ${label}, one of ${[...values].join(', ')}, got ${describe(v)}`;
    return undefined;
  };
}
