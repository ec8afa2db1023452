// Timestamp parsing for the `timestamp` and `datetime` casts: every format is a regular
// expression compiled once plus arithmetic with Date.UTC; nothing relies on Date.parse,
// whose accepted formats differ between engines and which reads offset-less text as local
// time.
import type { TimestampFormat } from './types.js';

const MAX_MS = 8.64e15; // the ECMAScript Date range

const MONTHS: Record<string, number> = {
  jan: 0,
  feb: 1,
  mar: 2,
  apr: 3,
  may: 4,
  jun: 5,
  jul: 6,
  aug: 7,
  sep: 8,
  oct: 9,
  nov: 10,
  dec: 11,
};

// RFC 2822 obsolete zone names, plus UTC: military single letters are not accepted.
const ZONES: Record<string, number> = {
  ut: 0,
  utc: 0,
  gmt: 0,
  z: 0,
  est: -300,
  edt: -240,
  cst: -360,
  cdt: -300,
  mst: -420,
  mdt: -360,
  pst: -480,
  pdt: -420,
};

/** Milliseconds between 1601-01-01 and 1970-01-01 (Windows FILETIME epoch). */
const FILETIME_EPOCH_MS = 11_644_473_600_000;

function finite(ms: number): number | undefined {
  return Number.isFinite(ms) && Math.abs(ms) <= MAX_MS ? ms : undefined;
}

type Unit = 's' | 'ms' | 'us' | 'ns';
const UNIT_DIGITS: Record<Unit, number> = { s: -3, ms: 0, us: 3, ns: 6 };

function unitOf(magnitude: number): Unit {
  if (magnitude < 1e11) return 's';
  if (magnitude < 1e14) return 'ms';
  if (magnitude < 1e17) return 'us';
  return 'ns';
}

function fromNumber(n: number, unit: Unit): number | undefined {
  if (!Number.isFinite(n)) return undefined;
  if (unit === 's') return finite(Math.round(n * 1000));
  if (unit === 'ms') return finite(Math.floor(n));
  return finite(Math.floor(n / (unit === 'us' ? 1e3 : 1e6)));
}

const INT_TEXT = /^-?\d{1,24}$/;
const DEC_TEXT = /^-?\d+\.\d+$/;

/** Integer text: cut the extra digits as text, so nanoseconds beyond 2^53 keep their precision. */
function fromIntegerText(text: string, unit: Unit | undefined): number | undefined {
  const neg = text.startsWith('-');
  const digits = (neg ? text.slice(1) : text).replace(/^0+(?=\d)/, '');
  const u = unit ?? unitOf(Number(digits));
  const cut = UNIT_DIGITS[u];
  let ms: number;
  if (cut <= 0) ms = Number(digits) * 10 ** -cut;
  else ms = digits.length > cut ? Number(digits.slice(0, digits.length - cut)) : 0;
  if (neg && cut > 0 && digits.length > cut && /[1-9]/.test(digits.slice(-cut))) ms += 1; // floor for negatives
  return finite(neg ? -ms : ms);
}

function numericText(text: string, unit: Unit | undefined): number | undefined {
  const t = text.trim();
  if (INT_TEXT.test(t)) return fromIntegerText(t, unit);
  if (DEC_TEXT.test(t)) {
    const n = Number(t);
    return fromNumber(n, unit ?? unitOf(Math.abs(n)));
  }
  return undefined;
}

function daysIn(y: number, mo: number): number {
  if (mo === 1) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return mo === 3 || mo === 5 || mo === 8 || mo === 10 ? 30 : 31;
}

/** Date.UTC with range checks: 2024-02-30 is an error, not March 1st. */
function utc(
  y: number,
  mo: number,
  d: number,
  h: number,
  mi: number,
  s: number,
  fraction: string | undefined,
): number | undefined {
  if (mo < 0 || mo > 11 || d < 1 || d > 31 || h > 24 || mi > 59 || s > 60) return undefined;
  if (h === 24 && (mi !== 0 || s !== 0)) return undefined;
  if (d > daysIn(y, mo)) return undefined;
  // A leap second (:60) is read as the last millisecond of its minute.
  const sec = s === 60 ? 59 : s;
  let ms = fraction ? Math.floor(Number(`0.${fraction.slice(0, 9)}`) * 1000 + 1e-6) : 0;
  if (s === 60) ms = 999;
  const t = Date.UTC(y, mo, d, h, mi, sec, ms);
  // Date.UTC reads years 0-99 as 1900-1999.
  return finite(y < 100 ? new Date(t).setUTCFullYear(y) : t);
}

function offsetMinutes(sign: string | undefined, hh: string | undefined, mm: string | undefined): number | undefined {
  if (!sign) return 0;
  const h = Number(hh);
  const m = Number(mm ?? '0');
  if (h > 23 || m > 59) return undefined;
  return (sign === '-' ? -1 : 1) * (h * 60 + m);
}

// 2024-01-02T03:04:05.123+01:00, 2024-01-02 03:04:05, 2024/01/02 03:04, 2024-01-02
const ISO =
  /^(\d{4})[-/](\d{2})[-/](\d{2})(?:[Tt ]+(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(?:([Zz])|(?:UTC|GMT)|([+-])(\d{2}):?(\d{2})?)?)?$/;
// 20240102T030405Z, 20240102030405.0Z (LDAP generalized time): a zone or a T is needed, else it is an epoch number
const BASIC = /^(\d{4})(\d{2})(\d{2})(T?)(\d{2})(\d{2})(\d{2})(?:[.,](\d+))?(?:([Zz])|([+-])(\d{2})(\d{2})?)?$/;
// Tue, 02 Jan 2024 03:04:05 +0000 | 2 Jan 2024 03:04 GMT | Sunday, 06-Nov-94 08:49:37 GMT (RFC 850)
const RFC2822 =
  /^(?:[A-Za-z]{3,9},?\s+)?(\d{1,2})[\s-]+([A-Za-z]{3})[\s-]+(\d{2}|\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?\s*(?:([+-])(\d{2})(\d{2})|([A-Za-z]{1,3}))?$/;
// Sun Nov  6 08:49:37 1994 (asctime) | Tue Jan  2 03:04:05 UTC 2024 (date(1))
const ASCTIME = /^[A-Za-z]{3}\s+([A-Za-z]{3})\s+(\d{1,2})\s+(\d{2}):(\d{2}):(\d{2})(?:\s+([A-Za-z]{1,4}))?\s+(\d{4})$/;
// 02/Jan/2024:03:04:05 +0000, optionally in brackets
const CLF = /^\[?(\d{1,2})\/([A-Za-z]{3})\/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?\s+([+-])(\d{2}):?(\d{2})\]?$/;
// Jan  2 03:04:05 (RFC 3164: no year, no zone), or Jan 02 2024 03:04:05 as Cisco appliances
// write it with a year (`logging timestamp`)
const SYSLOG = /^([A-Za-z]{3})\s+(\d{1,2})(?:\s+(\d{4}))?\s+(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$/;
// /Date(1700000000000)/ and /Date(1700000000000+0100)/ (.NET and Microsoft JSON)
const MS_JSON = /^\/Date\((-?\d+)(?:[+-]\d{4})?\)\/$/;

function month(name: string): number | undefined {
  return MONTHS[name.toLowerCase()];
}

const ISO_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
const digit = (t: string, i: number) => t.charCodeAt(i) - 48;
const two = (t: string, i: number) => digit(t, i) * 10 + digit(t, i + 1);

/**
 * The common case without a regular expression: `YYYY-MM-DDTHH:MM:SS[.fff...](Z|±HH:MM)`,
 * which most APIs send. Anything else (or a malformed digit) falls back to the full parser.
 */
function fastIso(t: string): number | undefined {
  const n = t.length;
  if (n < 20 || t.charCodeAt(4) !== 45 || t.charCodeAt(7) !== 45 || t.charCodeAt(13) !== 58 || t.charCodeAt(16) !== 58)
    return undefined;
  const sep = t.charCodeAt(10);
  if (sep !== 84 && sep !== 116 && sep !== 32) return undefined;
  for (const i of ISO_DIGITS) {
    const d = digit(t, i);
    if (d < 0 || d > 9) return undefined;
  }
  let i = 19;
  let fraction = 0;
  if (t.charCodeAt(i) === 46) {
    i++;
    const start = i;
    for (; i < n; i++) {
      const d = digit(t, i);
      if (d < 0 || d > 9) break;
      // Milliseconds: the first three digits; the rest is truncated.
      if (i - start < 3) fraction += d * (i === start ? 100 : i === start + 1 ? 10 : 1);
    }
    if (i === start) return undefined;
  }
  let offset = 0;
  const z = t.charCodeAt(i);
  if ((z === 90 || z === 122) && i === n - 1) offset = 0;
  else if ((z === 43 || z === 45) && i === n - 6 && t.charCodeAt(i + 3) === 58) {
    const h = two(t, i + 1);
    const m = two(t, i + 4);
    if (!(h >= 0 && h <= 23 && m >= 0 && m <= 59)) return undefined;
    offset = (z === 45 ? -1 : 1) * (h * 60 + m);
  } else return undefined;
  const s = two(t, 17);
  if (s > 59) return undefined; // leap seconds take the full parser
  const base = utc(two(t, 0) * 100 + two(t, 2), two(t, 5) - 1, two(t, 8), two(t, 11), two(t, 14), s, undefined);
  return base === undefined ? undefined : finite(base + fraction - offset * 60_000);
}

function parseIso(t: string): number | undefined {
  const fast = fastIso(t);
  if (fast !== undefined) return fast;
  const m = ISO.exec(t);
  if (m) {
    const off = offsetMinutes(m[9], m[10], m[11]);
    const base = utc(+m[1]!, +m[2]! - 1, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0), m[7]);
    return base === undefined || off === undefined ? undefined : finite(base - off * 60_000);
  }
  const b = BASIC.exec(t);
  if (!b || (b[4] === '' && !b[9] && !b[10])) return undefined;
  const off = offsetMinutes(b[10], b[11], b[12]);
  const base = utc(+b[1]!, +b[2]! - 1, +b[3]!, +b[5]!, +b[6]!, +b[7]!, b[8]);
  return base === undefined || off === undefined ? undefined : finite(base - off * 60_000);
}

function zoneMinutes(name: string | undefined): number | undefined {
  return name === undefined ? 0 : ZONES[name.toLowerCase()];
}

function parseRfc2822(t: string): number | undefined {
  const m = RFC2822.exec(t);
  if (m) {
    const mo = month(m[2]!);
    let y = +m[3]!;
    if (m[3]!.length === 2) y += y < 50 ? 2000 : 1900; // RFC 2822 section 4.3
    const off = m[8] ? offsetMinutes(m[8], m[9], m[10]) : zoneMinutes(m[11]);
    const base = mo === undefined ? undefined : utc(y, mo, +m[1]!, +m[4]!, +m[5]!, +(m[6] ?? 0), m[7]);
    return base === undefined || off === undefined ? undefined : finite(base - off * 60_000);
  }
  const a = ASCTIME.exec(t);
  if (!a) return undefined;
  const mo = month(a[1]!);
  const off = zoneMinutes(a[6]);
  const base = mo === undefined ? undefined : utc(+a[7]!, mo, +a[2]!, +a[3]!, +a[4]!, +a[5]!, undefined);
  return base === undefined || off === undefined ? undefined : finite(base - off * 60_000);
}

function parseClf(t: string): number | undefined {
  const m = CLF.exec(t);
  if (!m) return undefined;
  const mo = month(m[2]!);
  const off = offsetMinutes(m[8], m[9], m[10]);
  const base = mo === undefined ? undefined : utc(+m[3]!, mo, +m[1]!, +m[4]!, +m[5]!, +m[6]!, m[7]);
  return base === undefined || off === undefined ? undefined : finite(base - off * 60_000);
}

function parseSyslog(t: string, now: number): number | undefined {
  const m = SYSLOG.exec(t);
  if (!m) return undefined;
  const mo = month(m[1]!);
  if (mo === undefined) return undefined;
  const at = (y: number) => utc(y, mo, +m[2]!, +m[4]!, +m[5]!, +m[6]!, m[7]);
  if (m[3] !== undefined) return at(+m[3]);
  // No year in the text: this year (UTC), or last year when that would be over a day ahead.
  const year = new Date(now).getUTCFullYear();
  const guess = at(year);
  if (guess !== undefined && guess <= now + 86_400_000) return guess;
  return at(year - 1);
}

function parseMsJson(t: string): number | undefined {
  const m = MS_JSON.exec(t);
  return m ? finite(Number(m[1])) : undefined;
}

function parseFiletime(value: unknown): number | undefined {
  const text =
    typeof value === 'number'
      ? Number.isInteger(value)
        ? value.toFixed(0)
        : ''
      : typeof value === 'string'
        ? value.trim()
        : '';
  if (!/^\d{1,20}$/.test(text)) return undefined;
  // 100-nanosecond ticks: drop four digits to get milliseconds without float rounding.
  const ms = text.length > 4 ? Number(text.slice(0, -4)) : 0;
  return finite(ms - FILETIME_EPOCH_MS);
}

const EPOCH_UNITS: Partial<Record<TimestampFormat, Unit>> = {
  epoch_s: 's',
  epoch_ms: 'ms',
  epoch_us: 'us',
  epoch_ns: 'ns',
};

/**
 * Reads a timestamp as epoch milliseconds (UTC), or undefined when the value is not one.
 * `auto` tries, in order: numbers and numeric text by magnitude (s < 1e11 <= ms < 1e14 <=
 * us < 1e17 <= ns), RFC 3339 / ISO 8601, RFC 2822 / HTTP dates, CLF, syslog and
 * `/Date(ms)/`. Text without an offset is UTC. `now` only matters for syslog (no year).
 */
/**
 * The time a year-less syslog timestamp is read against: the event's receive time while a
 * mapping builds an event (compile.ts sets it around the rule's assignments), the clock
 * otherwise. A replayed or reprocessed event thus gets the year it was received in, and
 * the same input always maps to the same output.
 */
let referenceNow: number | undefined;

/** Sets the reference time of year-less syslog timestamps (undefined: the clock); returns the previous one. */
export function setReferenceTime(now: number | undefined): number | undefined {
  const before = referenceNow;
  referenceNow = now;
  return before;
}

/** The reference time of year-less syslog timestamps (see setReferenceTime). */
export function referenceTime(): number {
  return referenceNow ?? Date.now();
}

export function parseTimestamp(
  value: unknown,
  format: TimestampFormat = 'auto',
  now: number = Date.now(),
): number | undefined {
  const unit = EPOCH_UNITS[format];
  if (format === 'filetime') return parseFiletime(value);
  if (typeof value === 'number') {
    if (format !== 'auto' && unit === undefined) return undefined;
    return fromNumber(value, unit ?? unitOf(Math.abs(value)));
  }
  if (typeof value !== 'string') return undefined;
  const t = value.trim();
  if (t.length === 0 || t.length > 64) return undefined;
  if (unit !== undefined) return numericText(t, unit);
  switch (format) {
    case 'rfc3339':
      return parseIso(t);
    case 'rfc2822':
      return parseRfc2822(t);
    case 'clf':
      return parseClf(t);
    case 'syslog':
      return parseSyslog(t, now);
    default: {
      const c = t.charCodeAt(0);
      if ((c >= 48 && c <= 57) || c === 45) {
        const n = numericText(t, undefined);
        if (n !== undefined) return n;
        return parseIso(t) ?? parseClf(t) ?? parseRfc2822(t);
      }
      return parseRfc2822(t) ?? parseClf(t) ?? parseSyslog(t, now) ?? parseMsJson(t);
    }
  }
}

/** Epoch milliseconds as OCSF datetime_t text (RFC 3339, UTC, millisecond precision). */
export function formatDatetime(ms: number): string {
  return new Date(ms).toISOString();
}
