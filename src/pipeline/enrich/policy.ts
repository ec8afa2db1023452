// Enrichment policies: their definition, the checks made when a version is published, and
// the compiled form the one pass applies to a batch's records (docs/enrichment.md).
// Policies run in their order, each over the whole batch before the next (so a policy sees
// what earlier ones added, and timing a policy costs two clock reads per batch).
import type { OcsfAttribute, OcsfCatalog } from '../../ocsf/types.js';
import type { NormalizedRecord } from '../envelope.js';
import { compileRecordCondition, type RecordPredicate, type RouteProblem } from '../route/conditions.js';
import { collects, compileField, parseRoutePath, PathSyntaxError, type FieldRule } from '../route/paths.js';
import {
  makeOutputGetter,
  makeSetter,
  ownedTarget,
  parseTarget,
  TargetError,
  type Obj,
  type Setter,
  type TargetStep,
} from '../normalize/targets.js';
import type { Cell, Row } from './types.js';

export const ON_MISS = ['continue', 'default'] as const;
export type OnMiss = (typeof ON_MISS)[number];

export interface PolicyOutput {
  /** Appends an OCSF enrichment object {name, value: the key, type, provider, data: the row}. */
  enrichment?: { name: string; type?: string; provider?: string };
  /** OCSF target path → column of the row (`src_endpoint.location.country` → `country_code`). */
  fields?: Record<string, string>;
}

/** A policy version's definition (what a publication writes). */
export interface PolicyDefinition {
  name: string;
  description?: string;
  /** Policies run by ascending order (then by creation). */
  order: number;
  /** The one condition language over the normalized event; null: every event. */
  condition: unknown;
  /** The OCSF field whose value is looked up. */
  key: string;
  lookup: { table_id: string } | { source_id: string };
  output: PolicyOutput;
  /** continue: the event goes on unchanged; default: `defaults` stand in for the row. */
  on_miss: OnMiss;
  defaults?: Row;
  /** Write over a value the mapping set (default false: keep it). */
  overwrite?: boolean;
}

/** What a policy looks up in, as the pass resolves it. */
export interface LocalLookup {
  external?: false;
  get(key: string): Row | undefined;
}
/** An HTTP source inside the pass: cached answers only; null is a cached "not found". */
export interface ExternalLookup {
  external: true;
  answer(key: string): Row | null | undefined;
  /** Asks for a key the cache does not know (fetched after the pass). */
  want(key: string): void;
}
export type PolicyLookup = LocalLookup | ExternalLookup;

/** A live policy as the pass receives it. */
export interface PolicySpec {
  id: string;
  version: number;
  definition: PolicyDefinition;
}

export interface PolicyCounters {
  policy_id: string;
  seen: number;
  hits: number;
  misses: number;
  errors: number;
  /** External lookups not answered from the cache: the event went on without them. */
  unanswered: number;
  micros: number;
}

/** How each column of the row is written to a target, per the target's OCSF type. */
type Coerce = (v: Cell) => unknown;

const toText: Coerce = (v) => (v === null ? undefined : String(v));
const toInt: Coerce = (v) => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isInteger(n) ? n : undefined;
};
const toFloat: Coerce = (v) => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
};
const toBool: Coerce = (v) => (typeof v === 'boolean' ? v : v === 'true' ? true : v === 'false' ? false : undefined);

function coercion(catalog: OcsfCatalog, attr: OcsfAttribute): Coerce | undefined {
  if (attr.type === 'object_t' || attr.type === 'json_t' || attr.isArray) return undefined;
  const base = catalog.type(attr.type)?.base ?? attr.type;
  if (base === 'integer_t' || base === 'long_t' || base === 'timestamp_t' || base === 'port_t') return toInt;
  if (base === 'float_t') return toFloat;
  if (base === 'boolean_t') return toBool;
  return toText;
}

/** Class uids a condition pins at its top (class_uid eq / in, alone or under all); undefined: any class. */
export function pinnedClasses(condition: unknown): number[] | undefined {
  if (!condition || typeof condition !== 'object') return undefined;
  const c = condition as Record<string, unknown>;
  if (Array.isArray(c.all)) {
    for (const part of c.all) {
      const pinned = pinnedClasses(part);
      if (pinned) return pinned;
    }
    return undefined;
  }
  if (c.field !== 'class_uid') return undefined;
  if (c.op === 'eq' && typeof c.value === 'number') return [c.value];
  if (c.op === 'in' && Array.isArray(c.value) && c.value.every((v) => typeof v === 'number'))
    return c.value as number[];
  return undefined;
}

export interface PolicyCheckContext {
  catalog: OcsfCatalog;
  /** Classes a policy without a pinned class can meet (the supported classes). */
  classes: readonly number[];
  /** Columns of the looked-up table or source; undefined: the table or source does not exist for the organization; null: any column (HTTP answers). */
  columnsOf(lookup: PolicyDefinition['lookup']): readonly string[] | null | undefined;
  fields?: FieldRule;
}

function keyAccess(key: string, rule: FieldRule, problems: RouteProblem[]) {
  try {
    const segs = parseRoutePath(key, { indexes: true });
    if (collects(segs)) {
      problems.push({
        path: 'key',
        message: 'the key is one value: [*] is not allowed (use an index, such as observables[0].value)',
      });
      return undefined;
    }
    return compileField(key, rule);
  } catch (e) {
    problems.push({
      path: 'key',
      message: e instanceof PathSyntaxError ? `invalid key field: ${e.message}` : 'invalid key field',
    });
    return undefined;
  }
}

function checkTarget(
  target: string,
  ctx: PolicyCheckContext,
  pinned: readonly number[] | undefined,
  problems: RouteProblem[],
): void {
  const at = `output.fields["${target}"]`;
  let steps: TargetStep[];
  try {
    steps = parseTarget(target);
  } catch (e) {
    problems.push({ path: at, message: e instanceof TargetError ? e.message : 'invalid target' });
    return;
  }
  if (steps.some((s) => s.idx !== undefined || s.append))
    return void problems.push({ path: at, message: 'a target is one attribute: no [n] or []' });
  if (ownedTarget(target) || target === 'enrichments' || target.startsWith('enrichments.')) {
    return void problems.push({
      path: at,
      message: `"${target}" cannot be written by enrichment (use output.enrichment for enrichments[])`,
    });
  }
  const classes = pinned ?? ctx.classes;
  const lacking: number[] = [];
  let typed = 0;
  for (const uid of classes) {
    const attr = ctx.catalog.resolve(uid, target);
    if (!attr) lacking.push(uid);
    else if (!coercion(ctx.catalog, attr))
      return void problems.push({
        path: at,
        message: `"${target}" is ${attr.isArray ? 'a list' : 'an object'}: write one of its scalar attributes`,
      });
    else typed++;
  }
  if (typed === 0)
    problems.push({
      path: at,
      message: `no OCSF class ${pinned ? `pinned by the condition (${pinned.join(', ')}) ` : ''}has the attribute "${target}"`,
    });
  else if (pinned && lacking.length > 0)
    problems.push({ path: at, message: `class ${lacking.join(', ')} has no attribute "${target}"` });
}

/** Every problem of a definition, each with its location; empty when it may be published. */
export function checkPolicy(def: PolicyDefinition, ctx: PolicyCheckContext): RouteProblem[] {
  const problems: RouteProblem[] = [];
  const rule = ctx.fields ?? 'ocsf';
  compileRecordCondition(def.condition, problems, 'condition', rule);
  keyAccess(def.key, rule, problems);
  const columns = ctx.columnsOf(def.lookup);
  if (columns === undefined) {
    const which = 'table_id' in def.lookup ? `table ${def.lookup.table_id}` : `source ${def.lookup.source_id}`;
    problems.push({
      path: 'table_id' in def.lookup ? 'lookup.table_id' : 'lookup.source_id',
      message: `unknown ${which} (not one of the organization's, nor shared with it)`,
    });
  }
  const known = (col: string) => columns === null || columns === undefined || columns.includes(col);
  const { enrichment, fields } = def.output ?? {};
  if (!enrichment && (!fields || Object.keys(fields).length === 0))
    problems.push({ path: 'output', message: 'say where the result goes: output.enrichment, output.fields, or both' });
  const pinned = pinnedClasses(def.condition);
  for (const [target, column] of Object.entries(fields ?? {})) {
    checkTarget(target, ctx, pinned, problems);
    if (!known(column))
      problems.push({
        path: `output.fields["${target}"]`,
        message: `the lookup has no column "${column}" (columns: ${(columns ?? []).join(', ')})`,
      });
  }
  if (def.on_miss === 'default') {
    if (!def.defaults || Object.keys(def.defaults).length === 0)
      problems.push({ path: 'defaults', message: 'on_miss "default" needs defaults (column → value)' });
    for (const col of Object.keys(def.defaults ?? {}))
      if (!known(col)) problems.push({ path: `defaults.${col}`, message: `the lookup has no column "${col}"` });
  } else if (def.defaults && Object.keys(def.defaults).length > 0)
    problems.push({ path: 'defaults', message: 'defaults are used only with on_miss "default"' });
  return problems;
}

interface Target {
  target: string;
  column: string;
  steps: TargetStep[];
  set: Setter;
  parent: (out: Obj) => Obj | undefined;
  last: string;
  /** Per class uid: how to write the value (null: the class has no such attribute). */
  byClass: Map<number, Coerce | null>;
}

interface CompiledPolicy {
  spec: PolicySpec;
  match: RecordPredicate;
  key: (r: NormalizedRecord) => unknown;
  lookup: PolicyLookup | undefined;
  targets: Target[];
  enrichment: PolicyOutput['enrichment'];
  defaults: Row | undefined;
  overwrite: boolean;
}

export interface CompiledEnrichment {
  /** Enriches the records in place, policy after policy; the counters of each policy. */
  apply(records: NormalizedRecord[], clock?: () => number): PolicyCounters[];
  readonly size: number;
}

function keyText(v: unknown): string | undefined {
  if (typeof v === 'string') return v === '' ? undefined : v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/**
 * Compiles live policies (already checked at publication; one that no longer compiles is
 * left out and counted as errors). `lookupOf` resolves a policy's table or source; undefined
 * (a table or source gone since) makes every event an error of that policy.
 */
export function compileEnrichment(
  specs: readonly PolicySpec[],
  lookupOf: (spec: PolicySpec) => PolicyLookup | undefined,
  catalog: OcsfCatalog,
): CompiledEnrichment {
  const policies: CompiledPolicy[] = [];
  for (const spec of specs) {
    const d = spec.definition;
    const problems: RouteProblem[] = [];
    const match = compileRecordCondition(d.condition, problems) ?? (() => false);
    const key = keyAccess(d.key, 'any', problems);
    const targets: Target[] = [];
    for (const [target, column] of Object.entries(d.output?.fields ?? {})) {
      try {
        const steps = parseTarget(target);
        targets.push({
          target,
          column,
          steps,
          set: makeSetter(steps),
          parent: makeOutputGetter(steps),
          last: steps[steps.length - 1]!.k,
          byClass: new Map(),
        });
      } catch {
        /* checked at publication */
      }
    }
    policies.push({
      spec,
      match: problems.length > 0 ? () => false : match,
      key: key ? key.get : () => undefined,
      lookup: lookupOf(spec),
      targets,
      enrichment: d.output?.enrichment,
      defaults: d.on_miss === 'default' ? d.defaults : undefined,
      overwrite: d.overwrite === true,
    });
  }
  policies.sort((a, b) => a.spec.definition.order - b.spec.definition.order);

  function coerceFor(t: Target, classUid: number): Coerce | null {
    let c = t.byClass.get(classUid);
    if (c === undefined) {
      const attr = catalog.resolve(classUid, t.target);
      c = attr ? (coercion(catalog, attr) ?? null) : null;
      t.byClass.set(classUid, c);
    }
    return c;
  }

  /** Writes a row to a record; false when a value could not be written (a type that does not fit). */
  function write(p: CompiledPolicy, record: NormalizedRecord, keyValue: string, row: Row): boolean {
    const event = record.ocsf;
    let ok = true;
    const classUid = typeof event.class_uid === 'number' ? event.class_uid : 0;
    for (const t of p.targets) {
      const cell = row[t.column];
      if (cell === undefined || cell === null) continue;
      const coerce = coerceFor(t, classUid);
      if (!coerce) continue; // this class has no such attribute: nothing to write
      const value = coerce(cell);
      if (value === undefined) {
        ok = false;
        continue;
      }
      if (!p.overwrite) {
        const parent = t.parent(event);
        if (parent && parent[t.last] !== undefined && parent[t.last] !== null) continue;
      }
      try {
        t.set(event, value);
      } catch {
        ok = false; // an intermediate attribute holds a value that is not an object
      }
    }
    if (p.enrichment) {
      // The row is shared, not copied: rows are never modified (route transforms copy what they change).
      const entry: Obj = { name: p.enrichment.name, value: keyValue, data: row };
      if (p.enrichment.type) entry.type = p.enrichment.type;
      if (p.enrichment.provider) entry.provider = p.enrichment.provider;
      const list = event.enrichments;
      if (Array.isArray(list)) list.push(entry);
      else event.enrichments = [entry];
    }
    return ok;
  }

  return {
    size: policies.length,
    apply(records, clock = () => performance.now()) {
      const out: PolicyCounters[] = [];
      for (const p of policies) {
        const c: PolicyCounters = {
          policy_id: p.spec.id,
          seen: 0,
          hits: 0,
          misses: 0,
          errors: 0,
          unanswered: 0,
          micros: 0,
        };
        const started = clock();
        const lookup = p.lookup;
        for (let i = 0; i < records.length; i++) {
          const record = records[i]!;
          if (!p.match(record)) continue;
          c.seen++;
          const key = keyText(p.key(record));
          if (key === undefined) {
            c.misses++;
            if (p.defaults && !write(p, record, '', p.defaults)) c.errors++;
            continue;
          }
          if (!lookup) {
            c.errors++;
            continue;
          }
          let row: Row | null | undefined;
          try {
            if (lookup.external) {
              row = lookup.answer(key);
              if (row === undefined) {
                lookup.want(key);
                c.unanswered++;
                continue;
              }
            } else row = lookup.get(key);
          } catch {
            c.errors++;
            continue;
          }
          if (row) {
            c.hits++;
            if (!write(p, record, key, row)) c.errors++;
          } else {
            c.misses++;
            if (p.defaults && !write(p, record, key, p.defaults)) c.errors++;
          }
        }
        c.micros = Math.round((clock() - started) * 1000);
        out.push(c);
      }
      return out;
    },
  };
}
