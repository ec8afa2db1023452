// XML through fast-xml-parser, in two shapes:
//   generic: elements become keys, attributes `@name`, an element's text beside attributes
//     `#text`, repeated elements a list; every value is text (casts are the mapping's job).
//   windows_event: Windows event XML (Security, Sysmon, forwarded events) as the fields an
//     analyst knows: `System.EventID`, `System.Provider.Name`, `System.TimeCreated.SystemTime`,
//     and `EventData.<Name>` for each `<Data Name="...">` (unnamed Data elements in a list
//     `EventData.Data`); `UserData` and `RenderingInfo` as generic.
// Only XML's predefined entities (&amp; &lt; &gt; &quot; &apos;) and character references are
// decoded; entities a DOCTYPE declares are never expanded, so no document grows as it is read
// ("billion laughs"), and the library's own entity pass (slower) is off.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ParseError, putField, type Fields } from './errors.js';

export type XmlFormat = 'generic' | 'windows_event';

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const ENTITY = /&(?:#(\d{1,7})|#x([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos));/g;

function codePoint(n: number): string {
  return n > 0 && n <= 0x10ffff && (n < 0xd800 || n > 0xdfff) ? String.fromCodePoint(n) : '\ufffd';
}

function decode(v: string): string {
  if (!v.includes('&')) return v;
  return v.replace(ENTITY, (_m, dec: string | undefined, hex: string | undefined, name: string | undefined) =>
    dec ? codePoint(Number(dec)) : hex ? codePoint(parseInt(hex, 16)) : PREDEFINED[name!]!,
  );
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  textNodeName: '#text',
  parseTagValue: false,
  parseAttributeValue: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  processEntities: false,
  tagValueProcessor: (_name, value) => decode(value),
  attributeValueProcessor: (_name, value) => decode(value),
  trimValues: true,
});

function depthOf(v: unknown, max: number, d = 0): number {
  if (d > max || typeof v !== 'object' || v === null) return d;
  let deepest = d;
  for (const child of Array.isArray(v) ? v : Object.values(v as object)) {
    const c = depthOf(child, max, Array.isArray(v) ? d : d + 1);
    if (c > deepest) deepest = c;
    if (deepest > max) break;
  }
  return deepest;
}

function countLeaves(v: unknown): number {
  if (typeof v !== 'object' || v === null) return 1;
  let n = 0;
  for (const child of Array.isArray(v) ? v : Object.values(v as object)) n += countLeaves(child);
  return n;
}

/** Drops the `@` of attributes (System's elements have no attribute and child of one name). */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v !== 'object' || v === null) return v;
  const out: Fields = {};
  for (const [k, child] of Object.entries(v as Fields)) {
    if (k.startsWith('@xmlns')) continue;
    putField(out, k.startsWith('@') ? k.slice(1) : k, plain(child), 'replace');
  }
  return out;
}

function windowsEvent(doc: Fields): Fields {
  const event = doc.Event;
  if (typeof event !== 'object' || event === null || Array.isArray(event))
    throw new ParseError('the document is not a Windows <Event>');
  const out: Fields = {};
  for (const [k, v] of Object.entries(event as Fields)) {
    if (k.startsWith('@')) continue;
    if (k !== 'EventData') {
      putField(out, k, k === 'System' ? plain(v) : v, 'replace');
      continue;
    }
    const data: Fields = {};
    const unnamed: unknown[] = [];
    const items = typeof v === 'object' && v !== null ? (v as Fields).Data : undefined;
    for (const item of Array.isArray(items) ? items : items === undefined ? [] : [items]) {
      if (typeof item === 'object' && item !== null && typeof (item as Fields)['@Name'] === 'string') {
        putField(data, (item as Fields)['@Name'] as string, (item as Fields)['#text'] ?? '', 'replace');
      } else unnamed.push(item);
    }
    if (unnamed.length > 0) data.Data = unnamed;
    out.EventData = data;
  }
  return out;
}

export function parseXml(text: string, format: XmlFormat, limits: { maxDepth: number; maxFields: number }): Fields {
  const check = XMLValidator.validate(text);
  if (check !== true) throw new ParseError(check.err.msg, undefined, check.err.line, check.err.col);
  let doc: Fields;
  try {
    doc = parser.parse(text) as Fields;
  } catch (e) {
    throw new ParseError(e instanceof Error ? e.message.replace(/:\d+:\d+$/, '') : 'invalid XML');
  }
  if (depthOf(doc, limits.maxDepth) > limits.maxDepth)
    throw new ParseError(`nested deeper than ${limits.maxDepth} elements`);
  if (countLeaves(doc) > limits.maxFields) throw new ParseError(`more than ${limits.maxFields} fields`);
  return format === 'windows_event' ? windowsEvent(doc) : doc;
}
