// compileMapping: a mapping document (types.ts, docs/mappings.md) -> a CompiledMapping whose
// map() is a chain of closures built here once. Nothing in a document is evaluated as code.
import type { OcsfCatalog, OcsfClassDef } from '../../ocsf/types.js';
import { CastFailure, compileBlock, markRead, runBlock, sourceGetter, type BlockItem, type Scope } from './assign.js';
import { compileLookup, enumProblem } from './lookups.js';
import { compileMappingCondition, type Predicate } from './conditions.js';
import { shapeProblems } from './document.js';
import { collectObservables, compileObservables } from './observables.js';
import { formatSegments, isAbsent, parsePathAt, type Getter } from './paths.js';
import {
  MappingCompileError,
  type CompiledMapping,
  type MapContext,
  type MappingDocument,
  type MappingProblem,
  type MappingRule,
  type MapResult,
} from './types.js';
import { ReadTree } from './unmapped.js';
import { eventRoot } from './event-root.js';
import { compileParseSteps, ParseFailure, type CompiledParse } from '../parse/steps.js';
import type { PathSegment } from './paths.js';
import { caseProblems } from './cases.js';
import { compilePruner, targetPaths } from './prune.js';
import { setReferenceTime } from './timestamps.js';

export { MappingDocumentSchema } from './document.js';
export { TYPE_CASTS } from './casts.js';
export { parseTimestamp } from './timestamps.js';
export { compilePath, readPath, joinPathKey } from './paths.js';

type Obj = Record<string, unknown>;
type Activity = readonly [id: number, caption: string];

interface CompiledRule {
  when: Predicate | undefined;
  build: (raw: Obj, ctx: MapContext) => Obj;
}

const OTHER = 99;

/** The activity of a rule: a constant, or a lookup (unlisted -> 99 with the source text as caption). */
function activityOf(
  rule: MappingRule,
  cls: OcsfClassDef,
  at: string,
  scope: Scope,
): ((raw: Obj) => Activity) | undefined {
  const attr = cls.attributes.activity_id;
  const caption = (id: number) => attr?.enum?.[String(id)] ?? 'Other';
  const a = rule.activity_id;
  if (typeof a === 'number') {
    const p = enumProblem(attr, a);
    if (p) {
      scope.problems.push({ at: `${at}/activity_id`, message: p });
      return undefined;
    }
    const fixed: Activity = [a, caption(a)];
    return () => fixed;
  }
  const before = scope.problems.length;
  const froms = Array.isArray(a.from) ? a.from : [a.from];
  const gets = froms.map((f, i) =>
    sourceGetter(f, Array.isArray(a.from) ? `${at}/activity_id/from/${i}` : `${at}/activity_id/from`, scope),
  );
  const lookup = compileLookup(a.lookup, `${at}/activity_id/lookup`, attr, scope.problems);
  if (scope.problems.length > before) return undefined;
  const table = new Map<string, Activity>();
  for (const [k, v] of lookup.map) table.set(k, [v as number, caption(v as number)]);
  const dflt: Activity | undefined = lookup.hasDefault
    ? [lookup.dflt() as number, caption(lookup.dflt() as number)]
    : undefined;
  const absent: Activity = dflt ?? [0, caption(0)];
  return (raw) => {
    let v: unknown;
    for (const g of gets as Getter[]) {
      v = g(raw);
      if (!isAbsent(v)) break;
    }
    if (isAbsent(v)) return absent;
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
      return dflt ?? [OTHER, caption(OTHER)];
    const hit = table.get(lookup.ignoreCase ? String(v).toLowerCase() : String(v)) ?? dflt;
    // Other keeps the source's own word for the activity, as OCSF asks.
    return hit === undefined || hit[0] === OTHER ? [OTHER, String(v)] : hit;
  };
}

interface DefaultsTracker {
  /** Default index -> '' once some rule's class has its target, else why none has. */
  seen: Map<number, string>;
  /** Profiles of the document some rule's class has. */
  profiles: Set<string>;
}

/** Compiler switches for measurements (bench/normalize.ts --prune-ab); the product always prunes. */
export interface CompileOptions {
  prune?: boolean;
}

function compileRule(
  doc: MappingDocument,
  rule: MappingRule,
  ruleAt: string,
  catalog: OcsfCatalog,
  problems: MappingProblem[],
  reads: Set<string>,
  defaults: DefaultsTracker,
  parsed: readonly PathSegment[][],
  options: CompileOptions,
): CompiledRule | undefined {
  const before = problems.length;
  const cls = catalog.classByUid(rule.class_uid);
  if (!cls) {
    const known = catalog
      .classes()
      .map((c) => `${c.uid} ${c.caption}`)
      .join(', ');
    problems.push({ at: `${ruleAt}/class_uid`, message: `unknown OCSF class ${rule.class_uid} (supported: ${known})` });
    return undefined;
  }
  // A profile applies to the rules whose class has it (a Base Event rule in a document of
  // findings has no `incident` profile); a profile no rule's class has is a problem (below).
  const ruleProfiles = (doc.profiles ?? []).filter((p) => cls.profiles.includes(p));
  for (const p of ruleProfiles) defaults.profiles.add(p);
  // Each rule has its own read tree: `unmapped` holds what the rule that mapped the event left.
  const scope: Scope = {
    catalog,
    classUid: cls.uid,
    profiles: ruleProfiles,
    problems,
    tree: new ReadTree(),
    reads,
    observables: new Map(),
    prefix: [],
    readPrefix: [],
    depth: 0,
  };
  // What the parse steps read was consumed by them: the text is not left under `unmapped`.
  for (const segs of parsed) markRead(segs, scope);
  const when = rule.when === undefined ? undefined : compileMappingCondition(rule.when, { problems }, `${ruleAt}/when`);
  const activity = activityOf(rule, cls, ruleAt, scope);

  // Defaults are compiled with each rule: a default whose attribute the class lacks is skipped.
  const missing = new Map<number, string>();
  const items: BlockItem[] = (doc.defaults ?? []).map((a, i) => ({
    a,
    at: `/defaults/${i}`,
    onMissing: (message: string) => missing.set(i, message),
  }));
  (rule.set ?? []).forEach((a, i) => items.push({ a, at: `${ruleAt}/set/${i}` }));
  const block = compileBlock(items, scope);
  (doc.defaults ?? []).forEach((_, i) => {
    const why = missing.get(i);
    if (why === undefined) defaults.seen.set(i, '');
    else if (defaults.seen.get(i) !== '') defaults.seen.set(i, `no rule's class has this attribute (${why})`);
  });
  if (problems.length > before || !activity) return undefined;

  const classUid = cls.uid;
  const className = cls.caption;
  const categoryUid = cls.categoryUid;
  const categoryName = cls.categoryName;
  const typeNames = new Map<number, string>();
  for (const [k, c] of Object.entries(cls.attributes.activity_id?.enum ?? {}))
    typeNames.set(Number(k), `${className}: ${c}`);
  const product = doc.product;
  const profiles = ruleProfiles.length > 0 ? ruleProfiles : undefined;
  const version = catalog.version;
  const needsSeverity = cls.attributes.severity_id !== undefined;
  const observables = doc.observables === false ? undefined : compileObservables(catalog, scope.observables);
  const tree = doc.keep_unmapped === false ? undefined : scope.tree;
  const prune =
    options.prune === false
      ? undefined
      : compilePruner(catalog, cls.uid, ruleProfiles, targetPaths([...(doc.defaults ?? []), ...(rule.set ?? [])]));

  const build = (raw: Obj, ctx: MapContext): Obj => {
    const [activityId, activityName] = activity(raw);
    const metadata: Obj = { product: { ...product }, version };
    if (profiles) metadata.profiles = profiles.slice();
    const typeName = typeNames.get(activityId) ?? `${className}: Other`;
    const ev = eventRoot(
      activityId,
      activityName,
      categoryUid,
      categoryName,
      classUid,
      className,
      classUid * 100 + activityId,
      typeName,
      metadata,
    );
    const outerNow = setReferenceTime(ctx.receivedAtMs);
    try {
      runBlock(block, raw, ev);
    } finally {
      setReferenceTime(outerNow);
    }
    if (prune) prune(ev);
    if (ev.time === undefined) ev.time = ctx.receivedAtMs;
    if (needsSeverity && ev.severity_id === undefined) {
      ev.severity_id = 0;
      if (ev.severity === undefined) ev.severity = 'Unknown';
    }
    if (observables) {
      const list = collectObservables(observables, ev);
      if (list) ev.observables = list;
    }
    if (tree) {
      const rest = tree.extract(raw);
      if (rest) ev.unmapped = rest;
    }
    return ev;
  };
  return { when, build };
}

function dedupe(problems: MappingProblem[]): MappingProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const k = `${p.at}\u0000${p.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** `known_fields` in the spelling of `reads`; `[*]` and `[]` are the same, filters make no sense. */
function knownFields(doc: MappingDocument, problems: MappingProblem[]): Set<string> {
  const known = new Set<string>();
  (doc.known_fields ?? []).forEach((path, i) => {
    const at = `/known_fields/${i}`;
    const segs = parsePathAt(path, at, problems, true);
    if (!segs) return;
    if (segs.length === 0) problems.push({ at, message: 'invalid path: a known field cannot be the whole event (@)' });
    else if (segs.some((s) => s.t === 'find'))
      problems.push({ at, message: 'invalid path: a known field names a field, not a filter: write a[*].b or a[].b' });
    else known.add(formatSegments(segs));
  });
  return known;
}

interface CompiledRules {
  problems: MappingProblem[];
  rules: CompiledRule[];
  reads: Set<string>;
  known: Set<string>;
  parse: CompiledParse | undefined;
}

function compileRules(doc: MappingDocument, catalog: OcsfCatalog, options: CompileOptions = {}): CompiledRules {
  const problems: MappingProblem[] = [];
  const reads = new Set<string>();
  const defaults: DefaultsTracker = { seen: new Map(), profiles: new Set() };
  const rules: CompiledRule[] = [];
  const parse = doc.parse && doc.parse.length > 0 ? compileParseSteps(doc.parse, problems) : undefined;
  doc.rules.forEach((rule, i) => {
    const r = compileRule(doc, rule, `/rules/${i}`, catalog, problems, reads, defaults, parse?.reads ?? [], options);
    if (r) rules.push(r);
  });
  for (const [i, reason] of defaults.seen) if (reason) problems.push({ at: `/defaults/${i}/target`, message: reason });
  (doc.profiles ?? []).forEach((p, i) => {
    if (rules.length > 0 && !defaults.profiles.has(p))
      problems.push({ at: `/profiles/${i}`, message: `no rule's class has the profile "${p}"` });
  });
  const known = knownFields(doc, problems);
  problems.push(...caseProblems(doc));
  return { problems: dedupe(problems), rules, reads, known, parse };
}

/** Every problem of a document, each with its location: shape first, semantics once the shape is right. */
export function validateMappingDocument(doc: unknown, catalog: OcsfCatalog): MappingProblem[] {
  const shape = shapeProblems(doc);
  if (shape.length > 0) return shape;
  return compileRules(doc as MappingDocument, catalog).problems;
}

const NO_RULE: MapResult = Object.freeze({
  ok: false,
  kind: 'no_matching_rule',
  detail: 'no rule of the mapping matches the event',
});

/** Compiles a document once; throws MappingCompileError listing every problem. */
export function compileMapping(
  doc: MappingDocument,
  catalog: OcsfCatalog,
  options: CompileOptions = {},
): CompiledMapping {
  const shape = shapeProblems(doc);
  if (shape.length > 0) throw new MappingCompileError(shape);
  const { problems, rules, reads, known, parse } = compileRules(doc, catalog, options);
  if (problems.length > 0) throw new MappingCompileError(problems);
  const n = rules.length;
  return {
    reads,
    expected: known.size === 0 ? reads : new Set([...reads, ...known]),
    map(raw: Record<string, unknown>, ctx: MapContext): MapResult {
      try {
        const input = parse ? parse.run(raw) : raw;
        for (let i = 0; i < n; i++) {
          const r = rules[i]!;
          if (r.when === undefined || r.when(input))
            return parse ? { ok: true, event: r.build(input, ctx), input } : { ok: true, event: r.build(input, ctx) };
        }
        return NO_RULE;
      } catch (e) {
        if (e instanceof ParseFailure) return { ok: false, kind: 'parse_failed', detail: e.message };
        if (e instanceof CastFailure) return { ok: false, kind: 'cast_failed', detail: e.message };
        return {
          ok: false,
          kind: 'mapping_error',
          detail: `mapping failed: ${e instanceof Error ? e.message : 'unknown error'}`,
        };
      }
    },
  };
}
