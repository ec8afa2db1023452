// Syslog headers, RFC 5424 and RFC 3164 (BSD), read into the same field names so one mapping
// serves senders of both kinds:
//   <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD-ID k="v"...] MSG        (RFC 5424)
//   <PRI>Mmm dd hh:mm:ss HOSTNAME TAG[PID]: MSG                                (RFC 3164)
// RFC 3164 senders vary (no hostname, ISO timestamps, no PRI when read from a file): the
// header is read as far as it goes and the rest is the message. Fields a sender leaves out
// (`-` in RFC 5424) are absent. The receiver (modules/syslog) routes on these fields too.
import { ParseError, putField, type Fields } from './errors.js';

export interface SyslogHeader extends Fields {
  priority?: number;
  facility?: number;
  severity?: number;
  version?: number;
  timestamp?: string;
  hostname?: string;
  app_name?: string;
  procid?: string;
  msgid?: string;
  structured_data?: Record<string, Record<string, string>>;
  message: string;
}

const MONTHS = 'Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec';
/** `Mmm dd hh:mm:ss` (day space-padded), optionally with a year or fractions, as senders write it. */
const BSD_TIME = new RegExp(`^(?:${MONTHS}) [ 0-3]\\d (?:\\d{4} )?\\d\\d:\\d\\d:\\d\\d(?:\\.\\d{1,9})?(?: |$)`);
/** RFC 3339, as rsyslog's high-precision templates and many appliances put in a BSD header. */
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)(?: |$)/;
/** A BSD tag: program name, optional [pid], then a colon. */
const TAG = /^([^\s[\]:]{1,64})(?:\[([^\]\s]{1,32})\])?:(?: |$)/;
const BOM = '\ufeff';

function pri(text: string, h: SyslogHeader): number {
  if (text[0] !== '<') return 0;
  const close = text.indexOf('>');
  if (close < 2 || close > 4) throw new ParseError('the priority is not <0> to <191>', 1);
  const digits = text.slice(1, close);
  if (!/^\d{1,3}$/.test(digits) || Number(digits) > 191) throw new ParseError('the priority is not <0> to <191>', 2);
  const p = Number(digits);
  h.priority = p;
  h.facility = p >> 3;
  h.severity = p & 7;
  return close + 1;
}

/** A space-delimited token of RFC 5424, undefined for the NILVALUE `-`. */
function token(text: string, i: number, what: string): [string | undefined, number] {
  if (i >= text.length) throw new ParseError(`the header ends before its ${what}`, i + 1);
  let end = text.indexOf(' ', i);
  if (end < 0) end = text.length;
  if (end === i) throw new ParseError(`empty ${what}`, i + 1);
  const t = text.slice(i, end);
  return [t === '-' ? undefined : t, end + 1];
}

/** RFC 5424 STRUCTURED-DATA from `i`: `-` or one or more `[id k="v"...]`. */
function structuredData(text: string, i: number, h: SyslogHeader, maxFields: number): number {
  if (text[i] === '-') return i + 2;
  if (text[i] !== '[') throw new ParseError('expected structured data ([...] or -)', i + 1);
  const sd: Record<string, Record<string, string>> = {};
  let fields = 0;
  while (text[i] === '[') {
    let j = i + 1;
    while (j < text.length && text[j] !== ' ' && text[j] !== ']') j++;
    const id = text.slice(i + 1, j);
    if (id === '') throw new ParseError('empty SD-ID', i + 2);
    const params: Record<string, string> = {};
    while (text[j] === ' ') {
      const eq = text.indexOf('=', j);
      if (eq < 0 || text[eq + 1] !== '"') throw new ParseError('expected name="value" in structured data', j + 2);
      const name = text.slice(j + 1, eq);
      let k = eq + 2;
      let value = '';
      let from = k;
      for (;;) {
        if (k >= text.length) throw new ParseError('unterminated structured data value', eq + 2);
        const c = text[k];
        if (c === '\\' && (text[k + 1] === '"' || text[k + 1] === '\\' || text[k + 1] === ']')) {
          value += text.slice(from, k);
          from = k + 1;
          k += 2;
          continue;
        }
        if (c === '"') break;
        k++;
      }
      if (++fields > maxFields) throw new ParseError(`more than ${maxFields} fields`, j + 2);
      putField(params, name, value + text.slice(from, k), 'replace');
      j = k + 1;
    }
    if (text[j] !== ']') throw new ParseError('expected ] closing structured data', j + 1);
    putField(sd, id, params, 'replace');
    i = j + 1;
  }
  h.structured_data = sd;
  return text[i] === ' ' ? i + 1 : i;
}

function rfc5424(text: string, i: number, h: SyslogHeader, maxFields: number): SyslogHeader {
  h.version = 1;
  i += 2; // "1 "
  const names = ['timestamp', 'hostname', 'app_name', 'procid', 'msgid'] as const;
  for (const name of names) {
    const [v, next] = token(text, i, name.replace('_', '-'));
    if (v !== undefined) h[name] = v;
    i = next;
  }
  if (i > text.length) return h;
  i = structuredData(text, i, h, maxFields);
  let msg = text.slice(i);
  if (msg.startsWith(BOM)) msg = msg.slice(1);
  h.message = msg;
  return h;
}

function rfc3164(text: string, i: number, h: SyslogHeader): SyslogHeader {
  let rest = text.slice(i);
  const time = BSD_TIME.exec(rest) ?? ISO_TIME.exec(rest);
  if (time) {
    h.timestamp = time[0].trimEnd();
    rest = rest.slice(time[0].length);
    // A hostname precedes the tag unless the first word is the tag itself.
    if (!TAG.test(rest)) {
      const sp = rest.indexOf(' ');
      const host = sp < 0 ? rest : rest.slice(0, sp);
      if (host !== '' && !host.includes(':')) {
        h.hostname = host;
        rest = sp < 0 ? '' : rest.slice(sp + 1);
      }
    }
  }
  const tag = TAG.exec(rest);
  if (tag) {
    h.app_name = tag[1]!;
    if (tag[2] !== undefined) h.procid = tag[2];
    rest = rest.slice(tag[0].length);
  }
  h.message = rest;
  return h;
}

/** The header fields of one syslog message (without transport framing). */
export function parseSyslog(text: string, maxFields = 1000): SyslogHeader {
  const h = { message: '' } as SyslogHeader;
  const i = pri(text, h);
  if (text[i] === '1' && text[i + 1] === ' ') return rfc5424(text, i, h, maxFields);
  return rfc3164(text, i, h);
}
