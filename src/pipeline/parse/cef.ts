// ArcSight CEF and IBM QRadar LEEF: a pipe-separated header, then key=value extensions.
//   CEF:Version|Device Vendor|Device Product|Device Version|Signature ID|Name|Severity|Extension
//   LEEF:1.0|Vendor|Product|Version|EventID|<tab-separated attributes>
//   LEEF:2.0|Vendor|Product|Version|EventID|<delimiter>|<attributes>
// In a CEF header `\|` and `\\` are escapes; in its extension `\=`, `\\`, `\n` and `\r`, and
// a value runs to the next ` key=` (values may hold spaces). Text before `CEF:`/`LEEF:` (a
// syslog header a forwarder left) is kept as `prefix`.
import { fieldLimit, ParseError, putField, type Fields } from './errors.js';

/** Splits `count` pipe-separated header fields from `start`; returns them and where the rest begins. */
function header(text: string, start: number, count: number, escapes: boolean): { fields: string[]; rest: number } {
  const fields: string[] = [];
  let i = start;
  let buf = '';
  let from = i;
  while (fields.length < count) {
    if (i >= text.length) throw new ParseError(`the header has ${fields.length + 1} of its ${count + 1} fields`, i + 1);
    const c = text[i];
    if (escapes && c === '\\' && (text[i + 1] === '|' || text[i + 1] === '\\')) {
      buf += text.slice(from, i);
      from = i + 1;
      i += 2;
      continue;
    }
    if (c === '|') {
      fields.push(buf + text.slice(from, i));
      buf = '';
      from = i + 1;
    }
    i++;
  }
  return { fields, rest: i };
}

const KEY_CHAR = /[A-Za-z0-9_.\-[\]]/;

function unescapeCef(v: string): string {
  if (!v.includes('\\')) return v;
  return v.replace(/\\([=\\nr|])/g, (_, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c));
}

/** CEF extension: `k=v k2=v with spaces k3=v3`; a key is the run of key characters before an unescaped `=` that follows a space. */
export function parseCefExtension(text: string, offset: number, maxFields: number): Fields {
  const limit = fieldLimit(maxFields);
  const out: Fields = {};
  // Each key's [keyStart, valueStart).
  const keys: [number, number][] = [];
  for (let i = text.indexOf('='); i >= 0; i = text.indexOf('=', i + 1)) {
    let backslashes = 0;
    for (let j = i - 1; j >= 0 && text[j] === '\\'; j--) backslashes++;
    if (backslashes % 2 === 1) continue;
    let k = i;
    while (k > 0 && KEY_CHAR.test(text[k - 1]!)) k--;
    if (k === i || (k > 0 && text[k - 1] !== ' ')) continue; // `=` inside a value
    keys.push([k, i + 1]);
  }
  if (keys.length === 0) {
    if (text.trim() !== '') throw new ParseError('the extension has no key=value pair', offset + 1);
    return out;
  }
  if (text.slice(0, keys[0]![0]).trim() !== '')
    throw new ParseError('the extension does not start with a key', offset + 1);
  for (let n = 0; n < keys.length; n++) {
    const [k, v] = keys[n]!;
    const end = n + 1 < keys.length ? keys[n + 1]![0] - 1 : text.length;
    limit(n + 1, offset + k + 1);
    putField(out, text.slice(k, v - 1), unescapeCef(text.slice(v, end).replace(/ +$/, '')));
  }
  return out;
}

/** The fields object, with `prefix` when text (a forwarder's syslog header) precedes the header at `at`. */
function prefixed(text: string, at: number): Fields {
  const before = at > 0 ? text.slice(0, at).trim() : '';
  return before === '' ? {} : { prefix: before };
}

export function parseCef(text: string, maxFields: number): Fields {
  const at = text.indexOf('CEF:');
  if (at < 0) throw new ParseError('no "CEF:" header');
  const h = header(text, at + 4, 7, true);
  const [version, vendor, product, deviceVersion, classId, name, severity] = h.fields as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (!/^\d+$/.test(version)) throw new ParseError('the CEF version is not a number', at + 5);
  const out = prefixed(text, at);
  out.version = version;
  out.device_vendor = vendor;
  out.device_product = product;
  out.device_version = deviceVersion;
  out.device_event_class_id = classId;
  out.name = name;
  out.severity = severity;
  out.extension = parseCefExtension(text.slice(h.rest), h.rest, maxFields);
  return out;
}

/** LEEF 2.0's delimiter field: one character, or its code as `x09` / `0x09`. */
function leefDelimiter(field: string, position: number): string {
  if (field.length === 1) return field;
  const hex = /^(?:0?x)([0-9a-fA-F]{1,4})$/i.exec(field);
  if (hex) return String.fromCharCode(parseInt(hex[1]!, 16));
  if (field === '') return '\t';
  throw new ParseError('the LEEF 2.0 delimiter is neither one character nor a hex code', position);
}

export function parseLeef(text: string, maxFields: number, delimiter?: string): Fields {
  const at = text.indexOf('LEEF:');
  if (at < 0) throw new ParseError('no "LEEF:" header');
  const first = header(text, at + 5, 5, false);
  const [version, vendor, product, productVersion, eventId] = first.fields as [string, string, string, string, string];
  if (!/^[12](\.\d+)?$/.test(version)) throw new ParseError('the LEEF version is not 1.0 or 2.0', at + 6);
  let rest = first.rest;
  let sep = delimiter ?? '\t';
  if (version.startsWith('2')) {
    const d = header(text, rest, 1, false);
    if (delimiter === undefined) sep = leefDelimiter(d.fields[0]!, rest + 1);
    rest = d.rest;
  }
  const out = prefixed(text, at);
  out.version = version;
  out.vendor = vendor;
  out.product = product;
  out.product_version = productVersion;
  out.event_id = eventId;
  const attributes: Fields = {};
  const limit = fieldLimit(maxFields);
  let count = 0;
  let i = rest;
  while (i < text.length) {
    let end = text.indexOf(sep, i);
    if (end < 0) end = text.length;
    if (end > i) {
      const eq = text.indexOf('=', i);
      if (eq < 0 || eq > end) throw new ParseError('an attribute has no "="', i + 1);
      const key = text.slice(i, eq).trim();
      if (key === '') throw new ParseError('empty attribute name', i + 1);
      limit(++count, i + 1);
      putField(attributes, key, text.slice(eq + 1, end));
    }
    i = end + sep.length;
  }
  out.attributes = attributes;
  return out;
}
