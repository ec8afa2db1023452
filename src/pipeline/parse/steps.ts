// The `parse` steps of a mapping document: each reads a text field of the event (by default
// `message`, where a text event's line is) and adds the fields it finds, before any rule's
// `when` or assignment reads the event. Compiled once per mapping version with the document
// (pipeline/normalize/compile.ts) and run inside the one pass, so a line is parsed once.
// A step that cannot read its text throws ParseFailure: the event is quarantined as
// `parse_failed` with the step, the reason and the position (never the text).
import { RE2JS } from 're2js';
import { compileMappingCondition, type Predicate } from '../normalize/conditions.js';
import { compileSegments, isAbsent, parsePathAt, type Getter, type PathSegment } from '../normalize/paths.js';
import type { MappingProblem } from '../normalize/types.js';
import { parseCef, parseLeef } from './cef.js';
import { parseCsv } from './csv.js';
import { ParseError, putField, type Fields } from './errors.js';
import { parseKv } from './kv.js';
import { parseSyslog } from './syslog.js';
import { parseXml, type XmlFormat } from './xml.js';

export const PARSERS = ['syslog', 'kv', 'csv', 'cef', 'leef', 'regex', 'xml', 'json'] as const;
export type ParserName = (typeof PARSERS)[number];

/** One step of a document's `parse` list (docs/mappings.md, Parsing text). */
export interface ParseStep {
  parser: ParserName;
  /** The text to read; default `message`. */
  from?: string;
  /** Where the fields go: a dotted key path; default the top level of the event. */
  into?: string;
  /** Run the step only when the condition holds (over the event as parsed so far). */
  when?: unknown;
  /** fail (default): quarantine the event as parse_failed; skip: go on without this step's fields. */
  on_error?: 'fail' | 'skip';
  /**
   * The text stays under `unmapped` where no assignment reads it (by default a step's source
   * counts as read). For a step that runs for a few events only (its `when`) and reads a field
   * other events carry too: without it, that field is left out of every event's `unmapped`.
   */
  keep_source?: boolean;
  /** regex: an RE2 pattern with named groups `(?P<name>...)`, unanchored. */
  pattern?: string;
  /** kv: between pairs (default: spaces and tabs) and between key and value (default `=`); quote characters (default `"'`). */
  pair_separator?: string;
  value_separator?: string;
  quotes?: string;
  /** kv: inside a quoted value, the quote written twice stands for one (CSV's `""`). */
  doubled_quotes?: boolean;
  /** kv: a quoted value left open at the end runs to the end; text glued after a closing quote stays with the value. */
  lenient?: boolean;
  /** csv: the header, in order; "" or "_" skips a column. */
  columns?: string[];
  /** csv (default `,`) and leef (default tab, or the header's for LEEF 2.0). */
  delimiter?: string;
  /** csv: the quote character (default `"`). */
  quote?: string;
  /** csv: fields beyond the declared columns are ignored instead of failing. */
  allow_extra?: boolean;
  /** xml: generic (default) or windows_event. */
  format?: XmlFormat;
  /** Longest text read, in characters (default 65536, at most 1048576). */
  max_length?: number;
  /** Most fields produced (default 1000, at most 10000). */
  max_fields?: number;
  /** xml and json: deepest nesting (default 32, at most 64). */
  max_depth?: number;
}

export const PARSE_LIMITS = {
  steps: 16,
  maxLength: { default: 65_536, max: 1_048_576 },
  maxFields: { default: 1000, max: 10_000 },
  maxDepth: { default: 32, max: 64 },
} as const;

/** Options that belong to one parser only; anything else on another parser is a mistake worth naming. */
const OWN_OPTIONS: Record<string, readonly ParserName[]> = {
  pattern: ['regex'],
  pair_separator: ['kv'],
  value_separator: ['kv'],
  quotes: ['kv'],
  doubled_quotes: ['kv'],
  lenient: ['kv'],
  columns: ['csv'],
  delimiter: ['csv', 'leef'],
  quote: ['csv'],
  allow_extra: ['csv'],
  format: ['xml'],
  max_depth: ['xml', 'json'],
};

/** A step that failed: the event is quarantined with this (step, reason, position). */
export class ParseFailure extends Error {}

type Parse = (text: string) => Fields;

export interface CompiledParse {
  /** The event with every step's fields added (a new object: `raw` is not changed); throws ParseFailure. */
  run(raw: Fields): Fields;
  /** The source paths the steps read: read by the mapping, so they stay out of `unmapped`. */
  reads: PathSegment[][];
}

interface CompiledStep {
  n: number;
  parser: ParserName;
  get: Getter;
  into: string[];
  when: Predicate | undefined;
  skip: boolean;
  maxLength: number;
  parse: Parse;
}

function compileRegex(pattern: string, at: string, problems: MappingProblem[]): Parse | undefined {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    problems.push({ at, message: `invalid regular expression (RE2 syntax): ${(e as Error).message}` });
    return undefined;
  }
  const names = Object.keys(re.namedGroups());
  if (names.length === 0) {
    problems.push({ at, message: 'the pattern has no named group: write (?P<name>...) for each field' });
    return undefined;
  }
  return (text) => {
    const m = re.matcher(text);
    if (!m.find()) throw new ParseError('the pattern does not match');
    const out: Fields = {};
    for (const name of names) {
      const v = m.group(name);
      if (v !== null) putField(out, name, v, 'replace');
    }
    return out;
  };
}

function parseJson(text: string, maxDepth: number): Fields {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const pos = /position (\d+)/.exec((e as Error).message);
    throw new ParseError('invalid JSON', pos ? Number(pos[1]) + 1 : undefined);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ParseError('the JSON text is not an object');
  const deep = (v: unknown, d: number): boolean => {
    if (d > maxDepth) return true;
    if (typeof v !== 'object' || v === null) return false;
    for (const c of Array.isArray(v) ? v : Object.values(v)) if (deep(c, d + 1)) return true;
    return false;
  };
  if (deep(value, 1)) throw new ParseError(`nested deeper than ${maxDepth} levels`);
  return value as Fields;
}

function bounded(
  value: number | undefined,
  limit: { default: number; max: number },
  at: string,
  problems: MappingProblem[],
): number {
  if (value === undefined) return limit.default;
  if (value > limit.max) problems.push({ at, message: `at most ${limit.max}` });
  return Math.min(value, limit.max);
}

function parserOf(
  step: ParseStep,
  at: string,
  problems: MappingProblem[],
  maxFields: number,
  maxDepth: number,
): Parse | undefined {
  switch (step.parser) {
    case 'syslog':
      return (t) => parseSyslog(t, maxFields);
    case 'kv': {
      const opts = {
        maxFields,
        ...(step.pair_separator ? { pairSeparator: step.pair_separator } : {}),
        ...(step.value_separator ? { valueSeparator: step.value_separator } : {}),
        ...(step.quotes !== undefined ? { quotes: step.quotes } : {}),
        ...(step.doubled_quotes === true ? { doubledQuotes: true } : {}),
        ...(step.lenient === true ? { lenient: true } : {}),
      };
      if (step.pair_separator !== undefined && step.pair_separator === step.value_separator)
        problems.push({ at: `${at}/value_separator`, message: 'the pair and value separators must differ' });
      return (t) => parseKv(t, opts);
    }
    case 'csv': {
      if (!step.columns || step.columns.length === 0) {
        problems.push({ at: `${at}/columns`, message: 'the csv parser needs its columns (the header, in order)' });
        return undefined;
      }
      const opts = {
        columns: step.columns,
        maxFields,
        allowExtra: step.allow_extra === true,
        ...(step.delimiter ? { delimiter: step.delimiter } : {}),
        ...(step.quote ? { quote: step.quote } : {}),
      };
      if (opts.delimiter !== undefined && opts.delimiter === opts.quote)
        problems.push({ at: `${at}/quote`, message: 'the delimiter and the quote must differ' });
      return (t) => parseCsv(t, opts);
    }
    case 'cef':
      return (t) => parseCef(t, maxFields);
    case 'leef':
      return (t) => parseLeef(t, maxFields, step.delimiter);
    case 'regex':
      if (step.pattern === undefined) {
        problems.push({
          at: `${at}/pattern`,
          message: 'the regex parser needs a pattern with named groups (?P<name>...)',
        });
        return undefined;
      }
      return compileRegex(step.pattern, `${at}/pattern`, problems);
    case 'xml': {
      const format = step.format ?? 'generic';
      return (t) => parseXml(t, format, { maxDepth, maxFields });
    }
    case 'json':
      return (t) => parseJson(t, maxDepth);
  }
}

function intoPath(into: string | undefined, at: string, problems: MappingProblem[]): string[] | undefined {
  if (into === undefined) return [];
  const keys = into.split('.');
  if (keys.some((k) => !/^[A-Za-z0-9_@#-]{1,128}$/.test(k))) {
    problems.push({
      at,
      message: 'into is a dotted path of plain keys (letters, digits, _, -, @, #), like "fields" or "fw.kv"',
    });
    return undefined;
  }
  return keys;
}

/** Copies the objects along `path` (they may belong to the raw event) and merges `fields` at its end. */
function place(event: Fields, path: readonly string[], fields: Fields): void {
  let target = event;
  for (const key of path) {
    const cur = Object.hasOwn(target, key) ? target[key] : undefined;
    const next: Fields = typeof cur === 'object' && cur !== null && !Array.isArray(cur) ? { ...(cur as Fields) } : {};
    putField(target, key, next, 'replace');
    target = next;
  }
  for (const key in fields) putField(target, key, fields[key], 'replace');
}

export function compileParseSteps(
  steps: readonly ParseStep[],
  problems: MappingProblem[],
  base = '/parse',
): CompiledParse | undefined {
  const before = problems.length;
  const reads: PathSegment[][] = [];
  const compiled: CompiledStep[] = [];
  steps.forEach((step, i) => {
    const at = `${base}/${i}`;
    for (const [option, owners] of Object.entries(OWN_OPTIONS)) {
      if ((step as unknown as Record<string, unknown>)[option] !== undefined && !owners.includes(step.parser)) {
        problems.push({
          at: `${at}/${option}`,
          message: `${option} belongs to the ${owners.join(' and ')} parser${owners.length > 1 ? 's' : ''}, not ${step.parser}`,
        });
      }
    }
    const segs = parsePathAt(step.from ?? 'message', `${at}/from`, problems);
    const into = intoPath(step.into, `${at}/into`, problems);
    const when = step.when === undefined ? undefined : compileMappingCondition(step.when, { problems }, `${at}/when`);
    const maxLength = bounded(step.max_length, PARSE_LIMITS.maxLength, `${at}/max_length`, problems);
    const maxFields = bounded(step.max_fields, PARSE_LIMITS.maxFields, `${at}/max_fields`, problems);
    const maxDepth = bounded(step.max_depth, PARSE_LIMITS.maxDepth, `${at}/max_depth`, problems);
    const parse = parserOf(step, at, problems, maxFields, maxDepth);
    if (!segs || !into || !parse) return;
    if (step.keep_source !== true) reads.push(segs);
    compiled.push({
      n: i + 1,
      parser: step.parser,
      get: compileSegments(segs),
      into,
      when,
      skip: step.on_error === 'skip',
      maxLength,
      parse,
    });
  });
  if (problems.length > before) return undefined;

  const fail = (s: CompiledStep, reason: string, where = '') =>
    new ParseFailure(`parse step ${s.n} (${s.parser}) failed${where}: ${reason}`);
  return {
    reads,
    run(raw) {
      const event: Fields = { ...raw };
      for (const s of compiled) {
        if (s.when && !s.when(event)) continue;
        const v = s.get(event);
        if (isAbsent(v)) continue;
        if (typeof v !== 'string') {
          // A json step lifts an object as it is (an envelope's payload: EventBridge's detail).
          if (s.parser === 'json' && typeof v === 'object' && !Array.isArray(v)) {
            place(event, s.into, v as Fields);
            continue;
          }
          if (s.skip) continue;
          throw fail(s, `its source holds ${Array.isArray(v) ? 'a list' : `a ${typeof v}`}, not text`);
        }
        if (v.length > s.maxLength) {
          if (s.skip) continue;
          throw fail(s, `the text is longer than ${s.maxLength} characters`);
        }
        let fields: Fields;
        try {
          fields = s.parse(v);
        } catch (e) {
          if (s.skip) continue;
          if (e instanceof ParseError) throw fail(s, e.reason, e.where());
          throw fail(s, e instanceof Error ? e.message : String(e));
        }
        place(event, s.into, fields);
      }
      return event;
    },
  };
}
