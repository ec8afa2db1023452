// Detection rules in the one pass (docs/detections.md): a rule's definition, checked whole, and
// compiled once per version into what the pass runs per event: the condition (the one condition
// language over the normalized OCSF event), the group key and, for a threshold rule, the window
// an event counts in. Rules are indexed by the classes their condition names, so an event is
// tested only against the rules that can match it. Pure: no I/O, no clock.
import { compileRecordCondition, fieldProblem, type RecordPredicate, type RouteProblem } from '../route/conditions.js';
import { compileField, type RecordGetter } from '../route/paths.js';
import type { Condition } from '../conditions/types.js';

export interface RuleDefinition {
  /** The finding's title (default: the rule's name). */
  title?: string;
  description?: string;
  condition: Condition;
  /** OCSF severity_id of the findings: 1 informational, 2 low, 3 medium, 4 high, 5 critical, 6 fatal. */
  severity_id: number;
  mitre?: { tactics?: string[]; techniques?: string[] };
  /** Fields whose values make a group: a threshold counts per group, suppression is per group. */
  group_by?: string[];
  /** At least `count` matching events of a group within `window_seconds` (tumbling windows of event time). */
  threshold?: { count: number; window_seconds: number };
  /** After a finding for a group, none for the same group for this long. */
  suppression_seconds?: number;
  /** Where the rule came from (a Sigma rule's id and title, say); informative. */
  origin?: Record<string, unknown>;
}

/** A live rule as the pass receives it. */
export interface RuleSpec {
  id: string;
  name: string;
  version: number;
  definition: RuleDefinition;
}

export const RULE_LIMITS = {
  groupBy: 5,
  maxCount: 1_000_000,
  maxWindowSeconds: 7 * 86_400,
  maxSuppressionSeconds: 30 * 86_400,
  mitre: 50,
} as const;
const TACTIC = /^TA\d{4}$/;
const TECHNIQUE = /^T\d{4}(\.\d{3})?$/;

export interface RuleProblem {
  location: string;
  message: string;
  closest?: string;
  /** For a condition given as text: where the problem is in it. */
  line?: number;
  column?: number;
  offset?: number;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const int = (v: unknown, min: number, max: number) =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** Every problem of a rule definition, each with its location (`definition.condition.all[1].field`). */
export function checkRule(def: unknown): RuleProblem[] {
  const problems: RuleProblem[] = [];
  const at = (p: string) => `definition.${p}`;
  if (!isRecord(def))
    return [{ location: 'definition', message: 'a rule definition is an object {condition, severity_id, ...}' }];
  const known = new Set([
    'title',
    'description',
    'condition',
    'severity_id',
    'mitre',
    'group_by',
    'threshold',
    'suppression_seconds',
    'origin',
  ]);
  for (const k of Object.keys(def)) if (!known.has(k)) problems.push({ location: at(k), message: 'unknown key' });
  if (def.condition === undefined || def.condition === null)
    problems.push({ location: at('condition'), message: 'is required: the events the rule matches' });
  else {
    const found: RouteProblem[] = [];
    compileRecordCondition(def.condition, found, at('condition'), 'ocsf');
    for (const p of found)
      problems.push({ location: p.path, message: p.message, ...(p.closest ? { closest: p.closest } : {}) });
  }
  if (!int(def.severity_id, 1, 6))
    problems.push({
      location: at('severity_id'),
      message: 'must be an OCSF severity_id from 1 (informational) to 6 (fatal)',
    });
  for (const k of ['title', 'description'] as const) {
    if (
      def[k] !== undefined &&
      (typeof def[k] !== 'string' || (def[k] as string).length > (k === 'title' ? 300 : 10_000))
    )
      problems.push({ location: at(k), message: `must be text of at most ${k === 'title' ? 300 : 10_000} characters` });
  }
  if (def.mitre !== undefined) {
    if (!isRecord(def.mitre))
      problems.push({ location: at('mitre'), message: 'is {tactics: ["TA0006"], techniques: ["T1110"]}' });
    else {
      for (const [k, re, example] of [
        ['tactics', TACTIC, 'TA0006'],
        ['techniques', TECHNIQUE, 'T1110 or T1110.001'],
      ] as const) {
        const list = def.mitre[k];
        if (list === undefined) continue;
        if (!Array.isArray(list) || list.length > RULE_LIMITS.mitre)
          problems.push({ location: at(`mitre.${k}`), message: `must be a list of at most ${RULE_LIMITS.mitre} ids` });
        else
          list.forEach(
            (x, i) =>
              re.test(String(x)) ||
              problems.push({ location: at(`mitre.${k}[${i}]`), message: `must be an ATT&CK id such as ${example}` }),
          );
      }
    }
  }
  if (def.group_by !== undefined) {
    if (!Array.isArray(def.group_by) || def.group_by.length > RULE_LIMITS.groupBy)
      problems.push({ location: at('group_by'), message: `must be a list of at most ${RULE_LIMITS.groupBy} fields` });
    else {
      def.group_by.forEach((f, i) => {
        if (typeof f !== 'string' || f.includes('[*]')) {
          problems.push({
            location: at(`group_by[${i}]`),
            message: 'a group field is one value: a field path without [*]',
          });
          return;
        }
        try {
          compileField(f, 'ocsf');
        } catch (e) {
          const p = fieldProblem(at(`group_by[${i}]`), e);
          problems.push({ location: p.path, message: p.message, ...(p.closest ? { closest: p.closest } : {}) });
        }
      });
    }
  }
  if (def.threshold !== undefined) {
    const t = def.threshold;
    if (!isRecord(t)) problems.push({ location: at('threshold'), message: 'is {count, window_seconds}' });
    else {
      if (!int(t.count, 1, RULE_LIMITS.maxCount))
        problems.push({
          location: at('threshold.count'),
          message: `must be an integer from 1 to ${RULE_LIMITS.maxCount}`,
        });
      if (!int(t.window_seconds, 1, RULE_LIMITS.maxWindowSeconds))
        problems.push({
          location: at('threshold.window_seconds'),
          message: `must be an integer from 1 to ${RULE_LIMITS.maxWindowSeconds} (7 days)`,
        });
    }
  }
  if (def.suppression_seconds !== undefined && !int(def.suppression_seconds, 0, RULE_LIMITS.maxSuppressionSeconds)) {
    problems.push({
      location: at('suppression_seconds'),
      message: `must be an integer from 0 to ${RULE_LIMITS.maxSuppressionSeconds} (30 days)`,
    });
  }
  if (def.origin !== undefined && !isRecord(def.origin))
    problems.push({ location: at('origin'), message: 'must be an object' });
  return problems;
}

export interface CompiledRule {
  spec: RuleSpec;
  predicate: RecordPredicate;
  /** The class_uid values the condition requires, or null when it names none. */
  classes: ReadonlySet<number> | null;
  group: { path: string; get: RecordGetter }[];
  windowMs: number | null;
  count: number;
  suppressionMs: number;
}

/** The class_uid values a condition requires at its top (class_uid = x, or in [...], possibly inside a top-level all). */
export function requiredClasses(cond: Condition): Set<number> | null {
  const leaves = 'all' in cond ? cond.all : [cond];
  for (const c of leaves) {
    if ('field' in c && c.field === 'class_uid') {
      if (c.op === 'eq' && typeof c.value === 'number') return new Set([c.value]);
      if (c.op === 'in' && Array.isArray(c.value) && c.value.every((v) => typeof v === 'number'))
        return new Set(c.value as number[]);
    }
  }
  return null;
}

/** Compiles a rule checked by checkRule (a stored live version); throws if it does not compile. */
export function compileRule(spec: RuleSpec): CompiledRule {
  const problems: RouteProblem[] = [];
  // Stored versions keep compiling whatever the catalog checks became (as stored routes do).
  const predicate = compileRecordCondition(spec.definition.condition, problems, 'condition', 'any');
  if (!predicate)
    throw new Error(`rule ${spec.id} v${spec.version}: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  const d = spec.definition;
  return {
    spec,
    predicate,
    classes: requiredClasses(d.condition),
    group: (d.group_by ?? []).map((path) => ({ path, get: compileField(path).get })),
    windowMs: d.threshold ? d.threshold.window_seconds * 1000 : null,
    count: d.threshold?.count ?? 1,
    suppressionMs: (d.suppression_seconds ?? 0) * 1000,
  };
}
