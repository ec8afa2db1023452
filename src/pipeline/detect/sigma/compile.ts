// One Sigma rule (YAML text) compiled into a Weir detection rule definition (docs/sigma.md):
// the logsource becomes the OCSF class (and activity, vendor) the events must be in, the
// detection and condition the one condition language over OCSF paths, `level` the severity,
// `attack.*` tags the MITRE ids, and the Sigma id, title and metadata stay in `origin`.
// Refused with the location and the reason: several documents, a correlation rule, an
// aggregation, an unknown logsource, field or modifier, a regular expression RE2 cannot run.
// Pure: no I/O.
import { isMap, LineCounter, parseAllDocuments, type Document } from 'yaml';
import type { Condition } from '../../conditions/types.js';
import type { RuleDefinition } from '../rules.js';
import { parseCondition } from './condition.js';
import { SigmaError, type SigmaProblem } from './errors.js';
import { findLogsource, LOGSOURCES, type SigmaLogsource } from './logsources.js';
import { fieldItem } from './values.js';

export { SigmaError, type SigmaProblem };

const LEVELS: Record<string, number> = { informational: 1, low: 2, medium: 3, high: 4, critical: 5 };
/** ATT&CK Enterprise tactics by the names Sigma tags use (attack.credential_access). */
const TACTICS: Record<string, string> = {
  reconnaissance: 'TA0043', resource_development: 'TA0042', initial_access: 'TA0001', execution: 'TA0002', persistence: 'TA0003',
  privilege_escalation: 'TA0004', defense_evasion: 'TA0005', credential_access: 'TA0006', discovery: 'TA0007', lateral_movement: 'TA0008',
  collection: 'TA0009', command_and_control: 'TA0011', exfiltration: 'TA0010', impact: 'TA0040',
};

export interface SigmaCompiled {
  /** The rule's title: the default name of the Weir rule. */
  title: string;
  definition: RuleDefinition;
}

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseOne(text: string): Json {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, uniqueKeys: true }) as Document[] | { errors?: unknown };
  if (!Array.isArray(docs)) throw new SigmaError('yaml', 'not a YAML document');
  const real = docs.filter((d) => d.contents !== null || d.errors.length);
  for (const d of real) {
    const e = d.errors[0];
    if (e) {
      const pos = lines.linePos(e.pos[0]);
      throw new SigmaError(`yaml (line ${pos.line}, column ${pos.col})`, e.message.split('\n')[0]!);
    }
  }
  if (real.length !== 1) {
    throw new SigmaError('yaml', real.length === 0 ? 'the text holds no Sigma rule' : `the text holds ${real.length} YAML documents: send one Sigma rule per request (split rule collections, and write each rule whole instead of "action: global")`);
  }
  const contents = real[0]!.contents;
  if (!isMap(contents)) throw new SigmaError('yaml (line 1, column 1)', 'a Sigma rule is a map (title, logsource, detection, ...)');
  return real[0]!.toJS({ maxAliasCount: 50 }) as Json;
}

function text(doc: Json, key: string, required: boolean, max = 10_000): string | undefined {
  const v = doc[key];
  if (v === undefined || v === null) {
    if (required) throw new SigmaError(key, 'is required');
    return undefined;
  }
  if (typeof v !== 'string' || v.trim() === '' || v.length > max) throw new SigmaError(key, `must be text of 1 to ${max} characters`);
  return v;
}

function logsourceOf(doc: Json): { ls: SigmaLogsource; where: string; raw: Json } {
  const raw = doc.logsource;
  if (!isRecord(raw)) throw new SigmaError('logsource', 'is required: a map of category, product and/or service');
  const keys = ['category', 'product', 'service'] as const;
  const ls: { category?: string; product?: string; service?: string } = {};
  for (const k of keys) {
    const v = raw[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw new SigmaError(`logsource.${k}`, 'must be text');
    ls[k] = v;
  }
  const where = keys.filter((k) => ls[k]).map((k) => `${k}: ${ls[k]}`).join(', ') || '(empty)';
  const found = findLogsource(ls);
  if (!found) {
    const known = LOGSOURCES.map((e) => keys.filter((k) => e[k]).map((k) => `${k}: ${e[k]}`).join(', ')).join('; ');
    throw new SigmaError('logsource', `no OCSF mapping for the logsource ${where} (mapped: ${known})`);
  }
  return { ls: found, where, raw };
}

/** A search identifier: a map (AND of its field items) or a list of maps (OR of them). */
function searchIdentifier(ls: SigmaLogsource, where: string, name: string, body: unknown): Condition {
  const at = `detection.${name}`;
  const mapOf = (m: Json, loc: string): Condition => {
    const items = Object.entries(m).map(([k, v]) => fieldItem(ls, k, v, `${loc}.${k}`, where));
    if (!items.length) throw new SigmaError(loc, 'an empty map matches nothing');
    return items.length === 1 ? items[0]! : { all: items };
  };
  if (isRecord(body)) return mapOf(body, at);
  if (Array.isArray(body) && body.length && body.every(isRecord)) {
    const maps = body.map((m, i) => mapOf(m, `${at}[${i}]`));
    return maps.length === 1 ? maps[0]! : { any: maps };
  }
  if (Array.isArray(body) || typeof body === 'string' || typeof body === 'number') {
    throw new SigmaError(at, 'keyword searches (values without a field) search the whole raw log, which OCSF events do not keep: name the field');
  }
  throw new SigmaError(at, 'a search identifier is a map of fields or a list of such maps');
}

function mitreOf(tags: unknown): { mitre: { tactics: string[]; techniques: string[] }; other: string[] } {
  const tactics = new Set<string>();
  const techniques = new Set<string>();
  const other: string[] = [];
  if (tags === undefined || tags === null) return { mitre: { tactics: [], techniques: [] }, other };
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string')) throw new SigmaError('tags', 'must be a list of text tags');
  for (const tag of tags as string[]) {
    const t = tag.toLowerCase();
    const tech = /^attack\.(t\d{4}(?:\.\d{3})?)$/.exec(t);
    if (tech) techniques.add(tech[1]!.toUpperCase());
    else if (t.startsWith('attack.') && TACTICS[t.slice(7).replaceAll('-', '_')]) tactics.add(TACTICS[t.slice(7).replaceAll('-', '_')]!);
    else other.push(tag);
  }
  return { mitre: { tactics: [...tactics], techniques: [...techniques] }, other };
}

function compileDoc(doc: Json): SigmaCompiled {
  if ('correlation' in doc || doc.type === 'correlation') throw new SigmaError('correlation', 'correlation rules (several rules counted together over time) are not supported: compile each rule, and use a threshold with group_by');
  if ('action' in doc) throw new SigmaError('action', 'rule collections ("action: global", "repeat", "reset") are not supported: send each rule whole');
  const title = text(doc, 'title', true, 300)!;
  const description = text(doc, 'description', false);
  const id = doc.id === undefined ? undefined : text(doc, 'id', false, 200);
  let severity = 3;
  if (doc.level !== undefined && doc.level !== null) {
    const lv = LEVELS[String(doc.level).toLowerCase()];
    if (!lv) throw new SigmaError('level', `must be one of ${Object.keys(LEVELS).join(', ')}`);
    severity = lv;
  }
  const { ls, where, raw } = logsourceOf(doc);
  const detection = doc.detection;
  if (!isRecord(detection)) throw new SigmaError('detection', 'is required: search identifiers and a condition');
  if ('timeframe' in detection) throw new SigmaError('detection.timeframe', 'a timeframe belongs to aggregations, which are not supported: use a threshold override (count, window_seconds)');
  const ids = new Map<string, Condition>();
  for (const [name, body] of Object.entries(detection)) {
    if (name === 'condition') continue;
    ids.set(name, searchIdentifier(ls, where, name, body));
  }
  const cond = detection.condition;
  let tree: Condition;
  if (typeof cond === 'string') tree = parseCondition(cond, ids, 'detection.condition');
  else if (Array.isArray(cond) && cond.length && cond.every((c) => typeof c === 'string')) {
    const trees = cond.map((c, i) => parseCondition(c as string, ids, `detection.condition[${i}]`));
    tree = trees.length === 1 ? trees[0]! : { any: trees };
  } else throw new SigmaError('detection.condition', 'is required: text such as "selection and not filter"');
  const classes: Condition = ls.classes.length === 1 ? { field: 'class_uid', op: 'eq', value: ls.classes[0]! } : { field: 'class_uid', op: 'in', value: ls.classes };
  const { mitre, other } = mitreOf(doc.tags);
  const origin: Json = { format: 'sigma', title, logsource: raw };
  if (id) origin.id = id;
  for (const k of ['status', 'author', 'date', 'modified', 'references', 'falsepositives', 'license'] as const) if (doc[k] !== undefined && doc[k] !== null) origin[k] = doc[k];
  if (other.length) origin.tags = other;
  const definition: RuleDefinition = {
    title,
    condition: { all: [classes, ...(ls.where ?? []), tree] },
    severity_id: severity,
    origin,
  };
  if (description) definition.description = description;
  if (mitre.tactics.length || mitre.techniques.length) definition.mitre = mitre;
  return { title, definition };
}

/** Compiles one Sigma rule; throws SigmaError with the location and the reason when it cannot be kept faithfully. */
export function compileSigma(yamlText: string): SigmaCompiled {
  try {
    return compileDoc(parseOne(yamlText));
  } catch (e) {
    if (e instanceof SigmaError) throw e;
    throw new SigmaError('rule', (e as Error).message);
  }
}
