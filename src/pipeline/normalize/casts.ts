// The casts a mapping assignment can apply. Each returns the converted value or CAST_FAILED;
// the caller decides (on_error) whether that quarantines the event or leaves the target unset.
// TYPE_CASTS (type-casts.ts) is what GET /api/mappings/normalize/type-casts serves.
import { isIP } from 'node:net';
import { formatDatetime, parseTimestamp, referenceTime } from './timestamps.js';
import type { CastName, TimestampFormat } from './types.js';

export { CAST_NAMES, TYPE_CASTS, type TypeCast } from './type-casts.js';

export const CAST_FAILED: unique symbol = Symbol('cast failed');
export type CastFn = (value: unknown) => unknown;

const INT_TEXT = /^[+-]?\d+(?:\.0*)?$/;
const FLOAT_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INT32 = 2_147_483_647;

function toNumber(v: unknown, integral: boolean): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (!(integral ? INT_TEXT : FLOAT_TEXT).test(t)) return undefined;
  return Number(t);
}

function integer(max: number): CastFn {
  return (v) => {
    const n = toNumber(v, true);
    return n !== undefined && Number.isInteger(n) && Math.abs(n) <= max ? n : CAST_FAILED;
  };
}

const TRUE = new Set(['true', 't', 'yes', 'y', '1', 'on']);
const FALSE = new Set(['false', 'f', 'no', 'n', '0', 'off']);

function toBoolean(v: unknown): unknown {
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === 0) return v === 1;
  if (typeof v !== 'string') return CAST_FAILED;
  const t = v.trim().toLowerCase();
  return TRUE.has(t) ? true : FALSE.has(t) ? false : CAST_FAILED;
}

function toText(v: unknown): unknown {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

const HEX_TEXT = /^(?:0[xX])?[0-9a-fA-F]{1,13}$/;

// Windows writes process ids and access masks in hexadecimal ("0x1f4c"); 13 hex digits stay
// below 2^53, so every accepted value is exact.
function fromHex(s: string): unknown {
  const t = s.trim();
  return HEX_TEXT.test(t) ? parseInt(t.replace(/^0[xX]/, ''), 16) : CAST_FAILED;
}

// The last segment of a Windows or POSIX path: the file name a process or module path names.
function basename(s: string): unknown {
  const t = s.trim().replace(/[\\/]+$/, '');
  const name = t.slice(Math.max(t.lastIndexOf('/'), t.lastIndexOf('\\')) + 1);
  return name.length > 0 ? name : CAST_FAILED;
}

// The folder of a Windows or POSIX path: a file's folder.
function dirname(s: string): unknown {
  const t = s.trim().replace(/[\\/]+$/, '');
  const cut = Math.max(t.lastIndexOf('/'), t.lastIndexOf('\\'));
  return cut > 0 ? t.slice(0, cut) : CAST_FAILED;
}

// A registry value's full path: the key before the last backslash, the value's name after it.
// Only a backslash separates: a value's name may hold `/` (Office's trust records name a file
// URL), which the path casts would cut at.
function registryKey(s: string): unknown {
  const cut = s.lastIndexOf('\\');
  return cut > 0 ? s.slice(0, cut) : CAST_FAILED;
}
function registryValue(s: string): unknown {
  const cut = s.lastIndexOf('\\');
  return cut > 0 && cut < s.length - 1 ? s.slice(cut + 1) : CAST_FAILED;
}

// Windows names an account `DOMAIN\user` (SAM-compatible form): OCSF keeps user.name and
// user.domain apart. Text without a backslash (a UPN, a bare name) is the name as written.
function userName(s: string): unknown {
  const t = s.trim();
  const cut = t.indexOf('\\');
  const name = cut < 0 ? t : t.slice(cut + 1);
  return name.length > 0 ? name : CAST_FAILED;
}

function userDomain(s: string): unknown {
  const t = s.trim();
  const cut = t.indexOf('\\');
  return cut > 0 ? t.slice(0, cut) : CAST_FAILED;
}

const HMS = /^(?:(\d+)[:.])?(\d+):([0-5]?\d):([0-5]?\d(?:\.\d+)?)$/;

// A duration in OCSF milliseconds, from seconds (a number or numeric text: Zeek, FortiGate) or
// clock text `h:mm:ss` / `d:hh:mm:ss` (Cisco ASA's teardown messages).
function toDuration(v: unknown): unknown {
  const n = toNumber(v, false);
  if (n !== undefined) return n >= 0 ? Math.round(n * 1000) : CAST_FAILED;
  if (typeof v !== 'string') return CAST_FAILED;
  const m = HMS.exec(v.trim());
  if (!m) return CAST_FAILED;
  const seconds = Number(m[1] ?? 0) * 86_400 + Number(m[2]) * 3_600 + Number(m[3]) * 60 + Number(m[4]);
  return Math.round(seconds * 1000);
}

function textOnly(fn: (s: string) => unknown): CastFn {
  return (v) =>
    typeof v === 'string' ? fn(v) : typeof v === 'number' || typeof v === 'boolean' ? fn(String(v)) : CAST_FAILED;
}

function toIp(s: string): unknown {
  let t = s.trim();
  if (t.startsWith('[') && t.endsWith(']')) t = t.slice(1, -1);
  const version = isIP(t);
  if (version === 0) return CAST_FAILED;
  return version === 6 ? t.toLowerCase() : t;
}

function toPort(v: unknown): unknown {
  const n = toNumber(v, true);
  return n !== undefined && Number.isInteger(n) && n >= 0 && n <= 65535 ? n : CAST_FAILED;
}

const MAC =
  /^(?:[0-9a-f]{2}([:-])(?:[0-9a-f]{2}\1){4}[0-9a-f]{2}|[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}|[0-9a-f]{12})$/i;

function toMac(s: string): unknown {
  const t = s.trim();
  if (!MAC.test(t)) return CAST_FAILED;
  const hex = t.replace(/[:.-]/g, '').toLowerCase();
  return hex.match(/../g)!.join(':');
}

// The shape OCSF's email_t expects: something@label.tld, no spaces.
const EMAIL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$/;

// SMTP envelopes write <a@b> and message headers "Name" <a@b>: the address is what is inside.
const ANGLE_ADDR = /<([^<>]*)>$/;

function toEmail(s: string): unknown {
  let t = s.trim();
  const angle = ANGLE_ADDR.exec(t);
  if (angle) t = angle[1]!.trim();
  if (t.toLowerCase().startsWith('mailto:')) t = t.slice(7);
  if (t.length > 320 || !EMAIL.test(t)) return CAST_FAILED;
  const at = t.lastIndexOf('@');
  return t.slice(0, at + 1) + t.slice(at + 1).toLowerCase();
}

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

function toHostname(s: string): unknown {
  let t = s.trim().toLowerCase();
  if (t.endsWith('.')) t = t.slice(0, -1);
  if (t.length === 0 || t.length > 253) return CAST_FAILED;
  for (const label of t.split('.')) if (!LABEL.test(label)) return CAST_FAILED;
  return t;
}

function toUrl(s: string): unknown {
  const t = s.trim();
  if (t.length === 0 || !URL.canParse(t)) return CAST_FAILED;
  return t;
}

function toJson(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return CAST_FAILED;
  }
}

function timestampCast(format: TimestampFormat, asText: boolean): CastFn {
  return (v) => {
    const ms = parseTimestamp(v, format, referenceTime());
    if (ms === undefined) return CAST_FAILED;
    return asText ? formatDatetime(ms) : Math.floor(ms);
  };
}

/** The cast function for a name (timestamp formats only matter for timestamp and datetime). */
export function castFunction(name: CastName, format: TimestampFormat = 'auto'): CastFn {
  switch (name) {
    case 'string':
      return toText;
    case 'integer':
      return integer(INT32);
    case 'long':
      return integer(Number.MAX_SAFE_INTEGER);
    case 'float':
      return (v) => toNumber(v, false) ?? CAST_FAILED;
    case 'boolean':
      return toBoolean;
    case 'timestamp':
      return timestampCast(format, false);
    case 'datetime':
      return timestampCast(format, true);
    case 'ip':
      return textOnly(toIp);
    case 'port':
      return toPort;
    case 'mac':
      return textOnly(toMac);
    case 'email':
      return textOnly(toEmail);
    case 'hostname':
      return textOnly(toHostname);
    case 'url':
      return textOnly(toUrl);
    case 'json':
      return toJson;
    case 'lowercase':
      return textOnly((s) => s.toLowerCase());
    case 'uppercase':
      return textOnly((s) => s.toUpperCase());
    case 'trim':
      return textOnly((s) => s.trim());
    case 'array':
      return (v) => (Array.isArray(v) ? v : [v]);
    case 'hex':
      // A JSON number is already a number: reading its digits as hexadecimal would be a guess.
      return (v) => (typeof v === 'string' ? fromHex(v) : CAST_FAILED);
    case 'basename':
      return textOnly(basename);
    case 'words':
      return textOnly((s) => s.split(/\s+/).filter((w) => w.length > 0));
    case 'dirname':
      return textOnly(dirname);
    case 'registry_key':
      return textOnly(registryKey);
    case 'registry_value':
      return textOnly(registryValue);
    case 'user_name':
      return textOnly(userName);
    case 'user_domain':
      return textOnly(userDomain);
    case 'duration':
      return toDuration;
  }
}

/** Casts that take a whole array; every other cast applies to each element of an array. */
export const WHOLE_VALUE_CASTS: ReadonlySet<CastName> = new Set<CastName>(['array', 'json']);

/** The JSON type of a value, for error details that must not contain the value itself. */
export function valueType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}
