// One Sigma rule (YAML text) compiled into a Weir detection rule definition (docs/sigma.md):
// the logsource becomes the OCSF class (and activity, vendor) the events must be in, the
// detection and condition the one condition language over OCSF paths, `level` the severity,
// `attack.*` tags the MITRE ids, and the Sigma id, title and metadata stay in `origin`.
// A logsource is one or more variants (an OCSF class that named rules of the built-in mappings
// produce, with the fields they write): the rule is compiled per variant, a field the variant
// does not write read as absent, and the variants where it can match are kept. `count() by`
// aggregations become thresholds. Refused with the location and the reason: several documents,
// a correlation rule, an unknown logsource or modifier, a field no kept variant writes (a rule
// that could never fire), a regular expression RE2 cannot run. Pure: no I/O.
import { isMap, LineCounter, parseAllDocuments, type Document } from 'yaml';
import type { Condition } from '../../conditions/types.js';
import { checkRule, RULE_LIMITS, type RuleDefinition } from '../rules.js';
import { fold, parseCondition, type Aggregation } from './condition.js';
import { SigmaError, type SigmaProblem } from './errors.js';
import type { SigmaLogsource, SigmaVariant } from './logsource-types.js';
import { findLogsource, LOGSOURCES } from './logsources.js';
import { fieldItem, tableEntry, type Compiled } from './values.js';

export { SigmaError, type SigmaProblem };

const LEVELS: Record<string, number> = { informational: 1, low: 2, medium: 3, high: 4, critical: 5 };
/** ATT&CK Enterprise tactics by the names Sigma tags use (attack.credential_access). */
const TACTICS: Record<string, string> = {
  reconnaissance: 'TA0043',
  resource_development: 'TA0042',
  initial_access: 'TA0001',
  execution: 'TA0002',
  persistence: 'TA0003',
  privilege_escalation: 'TA0004',
  defense_evasion: 'TA0005',
  credential_access: 'TA0006',
  discovery: 'TA0007',
  lateral_movement: 'TA0008',
  collection: 'TA0009',
  command_and_control: 'TA0011',
  exfiltration: 'TA0010',
  impact: 'TA0040',
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
    throw new SigmaError(
      'yaml',
      real.length === 0
        ? 'the text holds no Sigma rule'
        : `the text holds ${real.length} YAML documents: send one Sigma rule per request (split rule collections, and write each rule whole instead of "action: global")`,
    );
  }
  const contents = real[0]!.contents;
  if (!isMap(contents))
    throw new SigmaError('yaml (line 1, column 1)', 'a Sigma rule is a map (title, logsource, detection, ...)');
  return real[0]!.toJS({ maxAliasCount: 50 }) as Json;
}

function text(doc: Json, key: string, required: boolean, max = 10_000): string | undefined {
  const v = doc[key];
  if (v === undefined || v === null) {
    if (required) throw new SigmaError(key, 'is required');
    return undefined;
  }
  if (typeof v !== 'string' || v.trim() === '' || v.length > max)
    throw new SigmaError(key, `must be text of 1 to ${max} characters`);
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
  const where =
    keys
      .filter((k) => ls[k])
      .map((k) => `${k}: ${ls[k]}`)
      .join(', ') || '(empty)';
  const found = findLogsource(ls);
  if (!found) {
    const known = LOGSOURCES.map((e) =>
      keys
        .filter((k) => e[k])
        .map((k) => `${k}: ${e[k]}`)
        .join(', '),
    ).join('; ');
    throw new SigmaError('logsource', `no OCSF mapping for the logsource ${where} (mapped: ${known})`);
  }
  return { ls: found, where, raw };
}

/** A search identifier in one variant: a map (AND of its field items) or a list of maps (OR of them). */
function searchIdentifier(v: SigmaVariant, name: string, body: unknown, used: Set<string>): Compiled {
  const at = `detection.${name}`;
  const mapOf = (m: Json, loc: string): Compiled => {
    const items = Object.entries(m).map(([k, x]) => fieldItem(v, k, x, `${loc}.${k}`, used));
    if (!items.length) throw new SigmaError(loc, 'an empty map matches nothing');
    return fold('all', items);
  };
  if (isRecord(body)) return mapOf(body, at);
  if (Array.isArray(body) && body.length && body.every(isRecord))
    return fold(
      'any',
      body.map((m, i) => mapOf(m, `${at}[${i}]`)),
    );
  if (Array.isArray(body) || typeof body === 'string' || typeof body === 'number') {
    throw new SigmaError(
      at,
      'keyword searches (values without a field) search the whole raw log, which OCSF events do not keep: name the field',
    );
  }
  throw new SigmaError(at, 'a search identifier is a map of fields or a list of such maps');
}

/** Every EventID value the detection names, in a selection or a filter. */
function eventIdsOf(detection: Json): Set<string> {
  const out = new Set<string>();
  const add = (m: Json) => {
    for (const [k, v] of Object.entries(m))
      if (k.split('|')[0]!.toLowerCase() === 'eventid')
        for (const x of Array.isArray(v) ? v : [v]) out.add(String(x).trim());
  };
  for (const [id, body] of Object.entries(detection)) {
    if (id === 'condition') continue;
    if (isRecord(body)) add(body);
    else if (Array.isArray(body)) body.forEach((m) => isRecord(m) && add(m));
  }
  return out;
}

/** Every field the detection names (Sigma's spelling), with where it is first named. */
function namedFields(detection: Json): Map<string, string> {
  const out = new Map<string, string>();
  const add = (m: Json, loc: string) => {
    for (const k of Object.keys(m)) {
      const name = k.split('|')[0]!;
      if (![...out.keys()].some((n) => n.toLowerCase() === name.toLowerCase())) out.set(name, `${loc}.${k}`);
    }
  };
  for (const [id, body] of Object.entries(detection)) {
    if (id === 'condition') continue;
    if (isRecord(body)) add(body, `detection.${id}`);
    else if (Array.isArray(body)) body.forEach((m, i) => isRecord(m) && add(m, `detection.${id}[${i}]`));
  }
  return out;
}

/** A variant as a reader knows it: its EventIDs, or its classes. */
const variantName = (v: SigmaVariant) =>
  v.eventIds ? `EventID ${v.eventIds.join(', ')}` : `class ${v.classes.join(', ')}`;
const sourcesOf = (vs: readonly SigmaVariant[]) =>
  [...new Set(vs.flatMap((v) => v.sources.map((s) => `${s.mapping} (${s.rules.join('; ')})`)))].join(', ');

const TIMEFRAME = /^(\d{1,6})([smhd])$/;
const UNIT: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

interface Kept {
  v: SigmaVariant;
  tree: Compiled;
  used: Set<string>;
  aggregation?: Aggregation;
}

/** The detection in one variant: the condition with what the variant decides folded, and the fields it resolved. */
function compileVariant(
  v: SigmaVariant,
  detection: Json,
): { parsed: ReturnType<typeof parseCondition>; used: Set<string> } {
  const used = new Set<string>();
  const items = new Map<string, Compiled>();
  for (const [name, body] of Object.entries(detection))
    if (name !== 'condition' && name !== 'timeframe') items.set(name, searchIdentifier(v, name, body, used));
  const cond = detection.condition;
  let parsed;
  if (typeof cond === 'string') parsed = parseCondition(cond, items, 'detection.condition');
  else if (Array.isArray(cond) && cond.length && cond.every((c) => typeof c === 'string')) {
    const all = cond.map((c, i) => parseCondition(c as string, items, `detection.condition[${i}]`));
    if (all.some((p) => p.aggregation))
      throw new SigmaError('detection.condition', 'an aggregation compiles in a single condition only');
    parsed = {
      tree: fold(
        'any',
        all.map((p) => p.tree),
      ),
    };
  } else throw new SigmaError('detection.condition', 'is required: text such as "selection and not filter"');
  return { parsed, used };
}

/** The detection compiled in every variant of the logsource; the variants where it can match are kept. */
function compileDetectionOf(
  ls: SigmaLogsource,
  where: string,
  detection: Json,
): { condition: Condition; threshold?: RuleDefinition['threshold']; groupBy?: string[] } {
  const kept: Kept[] = [];
  const ids = eventIdsOf(detection);
  for (const v of ls.variants) {
    // A problem in a variant none of the rule's EventIDs is (a firewall rule's field, read in the
    // sign-in variant) is not the rule's: that variant is left out, as its EventID would leave it.
    let compiled: { parsed: ReturnType<typeof parseCondition>; used: Set<string> };
    try {
      compiled = compileVariant(v, detection);
    } catch (e) {
      if (e instanceof SigmaError && v.eventIds && ids.size && !v.eventIds.some((id) => ids.has(id))) continue;
      throw e;
    }
    const { parsed, used } = compiled;
    if (parsed.tree !== false)
      kept.push({ v, tree: parsed.tree, used, ...(parsed.aggregation ? { aggregation: parsed.aggregation } : {}) });
  }
  // A field no variant writes, or none of the kept ones, can never take part in a match: refuse
  // rather than import a rule that cannot fire or a filter that cannot exclude.
  const fields = [...namedFields(detection)];
  const inTable = (v: SigmaVariant, name: string) =>
    tableEntry(v, name) !== undefined || (v.eventIds !== undefined && name.toLowerCase() === 'eventid');
  for (const [name, at] of fields) {
    if (ls.variants.some((v) => inTable(v, name))) continue;
    const written = [
      ...new Set(ls.variants.flatMap((v) => [...(v.eventIds ? ['EventID'] : []), ...Object.keys(v.fields)])),
    ];
    throw new SigmaError(
      at,
      `the field "${name}" is never written by the built-in mappings of logsource ${where} (${sourcesOf(ls.variants)}), so a rule on it could never fire (fields written: ${written.join(', ')})`,
    );
  }
  if (!kept.length) {
    const mapped = [...new Set(ls.variants.flatMap((v) => v.eventIds ?? []))];
    if (ids.size && ![...ids].some((id) => mapped.includes(id))) {
      throw new SigmaError(
        'detection.condition',
        `no event Weir maps for logsource ${where} can match this rule: EventID ${[...ids].join(', ')} ${ids.size > 1 ? 'are' : 'is'} not among the EventIDs mapped (${mapped.join(', ')}); other events are Base Events, with their fields under unmapped`,
      );
    }
    const writers = fields.map(
      ([name]) =>
        `"${name}" (${ls.variants
          .filter((v) => inTable(v, name))
          .map(variantName)
          .join('; ')})`,
    );
    throw new SigmaError(
      'detection.condition',
      `no event of logsource ${where} has the fields this rule needs together: ${writers.join(', ')}`,
    );
  }
  for (const [name, at] of fields) {
    if (kept.some((k) => [...k.used].some((u) => u.toLowerCase() === name.toLowerCase()))) continue;
    throw new SigmaError(
      at,
      `the field "${name}" is written only for events of logsource ${where} that this rule does not select (${sourcesOf(ls.variants.filter((v) => inTable(v, name)))}): the rule could never use it`,
    );
  }
  const condition = fold(
    'any',
    kept.map((k) => fold('all', [classCondition(k.v), ...(k.v.where ?? []), k.tree])),
  ) as Condition;
  const agg = kept[0]!.aggregation;
  if (!agg) {
    if ('timeframe' in detection)
      throw new SigmaError(
        'detection.timeframe',
        'a timeframe belongs to an aggregation ("| count() by Field > N"), which this condition does not have',
      );
    return { condition };
  }
  const tf = TIMEFRAME.exec(String(detection.timeframe ?? ''));
  if (!tf) throw new SigmaError('detection.timeframe', 'an aggregation needs a timeframe such as 30s, 5m, 1h or 1d');
  const window = Number(tf[1]) * UNIT[tf[2]!]!;
  if (window > RULE_LIMITS.maxWindowSeconds)
    throw new SigmaError('detection.timeframe', `at most ${RULE_LIMITS.maxWindowSeconds / 86_400} days`);
  let groupBy: string[] | undefined;
  if (agg.by) {
    const paths = new Set(
      kept.map((k) => {
        const e = tableEntry(k.v, agg.by!);
        if (!e) throw new SigmaError(agg.at, `the field "${agg.by}" to count by is not written for these events`);
        if (e[1].compose || e[1].values)
          throw new SigmaError(
            agg.at,
            `the field "${agg.by}" is split over several OCSF attributes or is an enum: counting by it is not supported`,
          );
        return e[1].path;
      }),
    );
    if (paths.size !== 1)
      throw new SigmaError(
        agg.at,
        `the field "${agg.by}" is at different OCSF paths in these events: counting by it is not supported`,
      );
    groupBy = [...paths];
  }
  return {
    condition,
    ...(agg.min > 1 ? { threshold: { count: agg.min, window_seconds: window } } : {}),
    ...(groupBy ? { groupBy } : {}),
  };
}

function classCondition(v: SigmaVariant): Condition {
  return v.classes.length === 1
    ? { field: 'class_uid', op: 'eq', value: v.classes[0]! }
    : { field: 'class_uid', op: 'in', value: v.classes };
}

function mitreOf(tags: unknown): { mitre: { tactics: string[]; techniques: string[] }; other: string[] } {
  const tactics = new Set<string>();
  const techniques = new Set<string>();
  const other: string[] = [];
  if (tags === undefined || tags === null) return { mitre: { tactics: [], techniques: [] }, other };
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string'))
    throw new SigmaError('tags', 'must be a list of text tags');
  for (const tag of tags as string[]) {
    const t = tag.toLowerCase();
    const tech = /^attack\.(t\d{4}(?:\.\d{3})?)$/.exec(t);
    if (tech) techniques.add(tech[1]!.toUpperCase());
    else if (t.startsWith('attack.') && TACTICS[t.slice(7).replaceAll('-', '_')])
      tactics.add(TACTICS[t.slice(7).replaceAll('-', '_')]!);
    else other.push(tag);
  }
  return { mitre: { tactics: [...tactics], techniques: [...techniques] }, other };
}

function compileDoc(doc: Json): SigmaCompiled {
  if ('correlation' in doc || doc.type === 'correlation')
    throw new SigmaError(
      'correlation',
      'correlation rules (several rules counted together over time) are not supported: compile each rule, and use a threshold with group_by',
    );
  if ('action' in doc)
    throw new SigmaError(
      'action',
      'rule collections ("action: global", "repeat", "reset") are not supported: send each rule whole',
    );
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
  const { condition, threshold, groupBy } = compileDetectionOf(ls, where, detection);
  const { mitre, other } = mitreOf(doc.tags);
  const origin: Json = { format: 'sigma', title, logsource: raw };
  if (id) origin.id = id;
  for (const k of ['status', 'author', 'date', 'modified', 'references', 'falsepositives', 'license'] as const)
    if (doc[k] !== undefined && doc[k] !== null) origin[k] = doc[k];
  if (other.length) origin.tags = other;
  const definition: RuleDefinition = {
    title,
    condition,
    severity_id: severity,
    origin,
  };
  if (threshold) definition.threshold = threshold;
  if (groupBy) definition.group_by = groupBy;
  if (description) definition.description = description;
  if (mitre.tactics.length || mitre.techniques.length) definition.mitre = mitre;
  // What compiles is a rule the API keeps: one over the limits of a definition (200 condition nodes...) is refused here, with the place.
  const over = checkRule(definition)[0];
  if (over)
    throw new SigmaError(
      over.location,
      `${over.message}: the rule compiles to more than a rule definition may hold (docs/conditions.md, limits); split it into several rules`,
    );
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
