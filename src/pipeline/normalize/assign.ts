// Assignments compiled into steps: one closure per assignment that reads its source, casts,
// looks up, writes the target and its enum caption. Everything that can be decided from the
// document is decided here, once; a step does only per-event work.
import type { OcsfAttribute, OcsfCatalog } from '../../ocsf/types.js';
import { CAST_FAILED, CAST_NAMES, castFunction, valueType, WHOLE_VALUE_CASTS, type CastFn } from './casts.js';
import { compileMappingCondition, type Predicate } from './conditions.js';
import { MAX_EACH_DEPTH } from './document.js';
import {
  collects,
  compileSegments,
  formatSegments,
  isAbsent,
  parsePath,
  parsePathAt,
  type Getter,
  type PathSegment,
} from './paths.js';
import {
  catalogPath,
  makeOutputGetter,
  makeSetter,
  ownedTarget,
  parseTarget,
  resolveTarget,
  TargetError,
  type Obj,
  type TargetStep,
} from './targets.js';
import { compileTemplate, TemplateSyntaxError } from './templates.js';
import type { Assignment, CastName, MappingProblem, TimestampFormat } from './types.js';
import { applyLookup, cloneJson, compileLookup, constant, enumProblem, MISSING } from './lookups.js';
import type { ReadTree } from './unmapped.js';

/** Thrown by a step when a cast fails and on_error is `fail`; map() turns it into cast_failed. */
export class CastFailure extends Error {}

export type Step = (src: unknown, out: Obj) => void;

export interface Block {
  steps: Step[];
  /** End-of-block work: captions for enum ids whose caption the block also assigns explicitly. */
  fills: ((out: Obj) => void)[];
}

export interface Scope {
  catalog: OcsfCatalog;
  classUid: number;
  profiles: readonly string[];
  problems: MappingProblem[];
  tree: ReadTree;
  reads: Set<string>;
  /** Full catalog path of each observable target -> its observable type_id. */
  observables: Map<string, number>;
  /** Target steps of the enclosing `each` (empty at the top). */
  prefix: TargetStep[];
  /** Source segments of the enclosing `each` elements (empty at the top). */
  readPrefix: PathSegment[];
  depth: number;
}

export interface BlockItem {
  a: Assignment;
  at: string;
  /** Set for defaults: a target the class lacks skips the item (reported here) instead of being a problem. */
  onMissing?: (message: string) => void;
}

export function runBlock(b: Block, src: unknown, out: Obj): void {
  const steps = b.steps;
  for (let i = 0; i < steps.length; i++) steps[i]!(src, out);
  const fills = b.fills;
  for (let i = 0; i < fills.length; i++) fills[i]!(out);
}

function applyCast(cast: CastFn, whole: boolean, v: unknown): unknown {
  if (whole || !Array.isArray(v)) return cast(v);
  const out = new Array<unknown>(v.length);
  for (let i = 0; i < v.length; i++) {
    const r = cast(v[i]);
    if (r === CAST_FAILED) return CAST_FAILED;
    out[i] = r;
  }
  return out;
}

/** Parses a source path, records it as read, and compiles it (undefined + a problem on error). */
export function sourceGetter(path: unknown, at: string, scope: Scope): Getter | undefined {
  const segs = parsePathAt(path, at, scope.problems);
  if (!segs) return undefined;
  markRead(segs, scope);
  return compileSegments(segs);
}

/** Records a source path as read: it stays out of `unmapped` and drift. */
export function markRead(segs: PathSegment[], scope: Scope): void {
  // A filter reads one element of a list: the other elements were not read, so the list
  // stays whole under `unmapped` (nothing is lost) and is not counted as read.
  if (segs.some((s) => s.t === 'find')) return;
  const full = [...scope.readPrefix, ...segs];
  scope.tree.add(full);
  const text = formatSegments(full);
  if (text !== '') scope.reads.add(text);
}

/** Source of an assignment: getters for `from` (first present wins), a constant, or a template. */
function compileSource(
  a: Assignment,
  at: string,
  scope: Scope,
): { gets: Getter[]; paths: string[]; lists?: boolean } | undefined {
  if (a.from !== undefined) {
    const paths = Array.isArray(a.from) ? a.from : [a.from];
    const gets = paths.map((p, i) => sourceGetter(p, Array.isArray(a.from) ? `${at}/from/${i}` : `${at}/from`, scope));
    if (!gets.every((g) => g !== undefined)) return undefined;
    // Every path collects with [*]: the value is always a list.
    const lists = paths.every((p) => collects(parsePath(p)));
    return { gets: gets as Getter[], paths, lists };
  }
  if (a.template !== undefined) {
    try {
      const fn = compileTemplate(a.template, (segs) => markRead(segs, scope));
      return { gets: [fn], paths: ['template'] };
    } catch (e) {
      scope.problems.push({ at: `${at}/template`, message: e instanceof TemplateSyntaxError ? e.message : String(e) });
      return undefined;
    }
  }
  return { gets: [constant(a.value)], paths: ['value'] };
}

interface BlockContext {
  /** Full catalog paths the block assigns. */
  explicit: Set<string>;
  /** Target paths (relative) that other targets of the block write below: their values are copied. */
  containers: Set<string>;
  fills: ((out: Obj) => void)[];
}

function blockContext(items: BlockItem[], prefix: TargetStep[]): BlockContext {
  const explicit = new Set<string>();
  const containers = new Set<string>();
  const base = catalogPath(prefix);
  for (const { a } of items) {
    if (typeof a.target !== 'string') continue;
    let steps: TargetStep[];
    try {
      steps = parseTarget(a.target);
    } catch {
      continue;
    }
    const names = steps.map((s) => s.k);
    explicit.add(base ? `${base}.${names.join('.')}` : names.join('.'));
    for (let i = 1; i < names.length; i++) containers.add(names.slice(0, i).join('.'));
  }
  return { explicit, containers, fills: [] };
}

function compileAssignment({ a, at, onMissing }: BlockItem, scope: Scope, siblings: BlockContext): Step | undefined {
  const problems = scope.problems;
  const before = problems.length;
  const sources = (['from', 'value', 'template', 'each'] as const).filter((k) => a[k] !== undefined);
  if (sources.length !== 1) {
    problems.push({
      at,
      message:
        sources.length === 0
          ? 'needs one of from, value, template or each'
          : `has ${sources.join(' and ')}: exactly one source is allowed`,
    });
  }
  if (a.set !== undefined && a.each === undefined) problems.push({ at: `${at}/set`, message: 'set goes with each' });
  if (a.each !== undefined) {
    if (a.set === undefined)
      problems.push({ at: `${at}/each`, message: 'each needs set (the assignments of one output element)' });
    for (const k of ['cast', 'lookup', 'format'] as const)
      if (a[k] !== undefined)
        problems.push({ at: `${at}/${k}`, message: `${k} does not apply to each: use it inside set` });
  }
  if (a.cast !== undefined && !CAST_NAMES.has(a.cast))
    problems.push({ at: `${at}/cast`, message: `unknown cast "${String(a.cast)}"` });
  if (a.format !== undefined && a.cast !== 'timestamp' && a.cast !== 'datetime')
    problems.push({ at: `${at}/format`, message: 'format applies to the timestamp and datetime casts' });

  let steps: TargetStep[] | undefined;
  let attr: OcsfAttribute | undefined;
  try {
    steps = parseTarget(a.target);
  } catch (e) {
    problems.push({ at: `${at}/target`, message: e instanceof TargetError ? e.message : String(e) });
  }
  if (steps) {
    const full = [...scope.prefix, ...steps];
    const fullPath = catalogPath(full);
    if (ownedTarget(fullPath)) {
      problems.push({
        at: `${at}/target`,
        message: `${fullPath} is set by the compiler (docs/mappings.md, "What the compiler adds")`,
      });
    } else {
      const r = resolveTarget(scope.catalog, scope.classUid, full, scope.profiles);
      if (r.problem) {
        if (onMissing) {
          onMissing(r.problem);
          return undefined;
        }
        problems.push({ at: `${at}/target`, message: r.problem });
      }
      attr = r.attr;
      if (a.each !== undefined && attr && !attr.isArray)
        problems.push({ at: `${at}/target`, message: `each builds a list, and ${fullPath} is not one` });
    }
  }

  const when: Predicate | undefined =
    a.when === undefined ? undefined : compileMappingCondition(a.when, { problems }, `${at}/when`);
  if (a.value !== undefined) {
    const p = enumProblem(attr, a.value);
    if (p) problems.push({ at: `${at}/value`, message: p });
  }
  if (a.default !== undefined) {
    const p = enumProblem(attr, a.default);
    if (p) problems.push({ at: `${at}/default`, message: p });
  }
  const lookup = a.lookup ? compileLookup(a.lookup, `${at}/lookup`, attr, problems) : undefined;
  if (a.each !== undefined) return compileEach(a, at, scope, steps, when, before);
  const source = sources.length === 1 ? compileSource(a, at, scope) : undefined;
  if (source && attr && !attr.isArray && source.lists && !steps?.[steps.length - 1]?.append) {
    problems.push({
      at: `${at}/from`,
      message: `[*] collects a list, and ${attr.name} holds one value: use [0], a filter, or a template to join the values`,
    });
  }
  if (problems.length > before || !steps || !source) return undefined;

  const set = makeSetter(steps);
  const full = [...scope.prefix, ...steps];
  const fullPath = catalogPath(full);
  const observable = attr ? (attr.observable ?? scope.catalog.type(attr.type)?.observable) : undefined;
  if (observable !== undefined) scope.observables.set(fullPath, observable);
  const cast = a.cast ? castFunction(a.cast as CastName, (a.format ?? 'auto') as TimestampFormat) : undefined;
  const whole = a.cast !== undefined && WHOLE_VALUE_CASTS.has(a.cast);
  // A number or boolean bound for a text attribute becomes its text (Okta sends `version` as a
  // number, OCSF's metadata.log_version is a string): a conversion that loses nothing, so it is
  // made rather than the event quarantined. An explicit cast or lookup decides for itself.
  const toText =
    cast === undefined &&
    lookup === undefined &&
    attr !== undefined &&
    !attr.enum &&
    isTextType(scope.catalog, attr.type);
  const skip = a.on_error === 'skip';
  const hasDefault = a.default !== undefined;
  const dflt = constant(a.default);
  const clone = siblings.containers.has(catalogPath(steps));
  const { gets, paths } = source;
  const single = gets.length === 1 ? gets[0]! : undefined;
  const castDetail = `cast ${a.cast} failed for ${fullPath}`;

  // Enum ids write their caption sibling, unless the block assigns the caption itself.
  let captions: Map<unknown, string> | undefined;
  let setCaption: ((out: Obj, v: unknown) => void) | undefined;
  let fill: ((out: Obj) => void) | undefined;
  if (attr?.enum && attr.sibling && !attr.isArray) {
    captions = new Map(Object.entries(attr.enum).map(([k, c]) => [Number(k), c]));
    const sibSteps = [...steps.slice(0, -1), { k: attr.sibling }];
    if (siblings.explicit.has(catalogPath([...scope.prefix, ...sibSteps]))) {
      const parentOf = makeOutputGetter(steps);
      const id = steps[steps.length - 1]!.k;
      const sib = attr.sibling;
      const caps = captions;
      fill = (out) => {
        const parent = parentOf(out);
        if (parent && parent[sib] === undefined && parent[id] !== undefined) {
          const c = caps.get(parent[id]);
          if (c !== undefined) parent[sib] = c;
        }
      };
      captions = undefined;
    } else {
      setCaption = makeSetter(sibSteps);
    }
  }

  const step: Step = (src, out) => {
    if (when !== undefined && !when(src)) return;
    let used = 0;
    let v: unknown;
    if (single !== undefined) v = single(src);
    else {
      for (; used < gets.length; used++) {
        v = gets[used]!(src);
        if (!isAbsent(v)) break;
      }
    }
    if (isAbsent(v)) {
      if (!hasDefault) return;
      const d = dflt();
      set(out, d);
      if (captions !== undefined) {
        const c = captions.get(d);
        if (c !== undefined) setCaption!(out, c);
      }
      return;
    }
    const raw = v;
    if (cast !== undefined) {
      v = applyCast(cast, whole, v);
      if (v === CAST_FAILED) {
        if (skip) return;
        throw new CastFailure(`${castDetail} from ${paths[used] ?? 'value'} (value type ${valueType(raw)})`);
      }
    }
    if (lookup !== undefined) {
      v = applyLookup(lookup, v);
      if (v === MISSING) return;
    } else if (clone && typeof v === 'object') v = cloneJson(v);
    else if (toText) v = scalarsAsText(v);
    set(out, v);
    if (captions !== undefined) {
      // 99 (Other) reached through a lookup keeps the source value as its caption (OCSF's rule).
      const c =
        v === 99 && lookup !== undefined && (typeof raw === 'string' || typeof raw === 'number')
          ? String(raw)
          : captions.get(v);
      if (c !== undefined) setCaption!(out, c);
    }
  };
  if (fill) siblings.fills.push(fill);
  return step;
}

function isTextType(catalog: OcsfCatalog, type: string): boolean {
  return type === 'string_t' || catalog.type(type)?.base === 'string_t';
}

function scalarsAsText(v: unknown): unknown {
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v) && v.some((x) => typeof x === 'number' || typeof x === 'boolean')) {
    return v.map((x) => (typeof x === 'number' || typeof x === 'boolean' ? String(x) : x));
  }
  return v;
}

function compileEach(
  a: Assignment,
  at: string,
  scope: Scope,
  steps: TargetStep[] | undefined,
  when: Predicate | undefined,
  before: number,
): Step | undefined {
  if (scope.depth >= MAX_EACH_DEPTH) {
    scope.problems.push({ at: `${at}/each`, message: `each nests at most ${MAX_EACH_DEPTH} levels` });
    return undefined;
  }
  const segs = parsePathAt(a.each!, `${at}/each`, scope.problems);
  if (!segs) return undefined;
  if (!steps || !Array.isArray(a.set)) return undefined;
  const last = segs[segs.length - 1];
  const elemSegs: PathSegment[] = [...scope.readPrefix, ...segs, ...(last?.t === 'all' ? [] : [{ t: 'all' } as const])];
  // Targets inside `set` are below one element of the list the each target names.
  const elemOf: TargetStep = { k: steps[steps.length - 1]!.k, append: true };
  const inner: Scope = {
    ...scope,
    prefix: [...scope.prefix, ...steps.slice(0, -1), elemOf],
    readPrefix: elemSegs,
    depth: scope.depth + 1,
  };
  const block = compileBlock(
    a.set.map((s, i) => ({ a: s, at: `${at}/set/${i}` })),
    inner,
  );
  if (scope.problems.length > before) return undefined;
  const get = compileSegments(segs);
  const set = makeSetter(steps);
  const hasDefault = a.default !== undefined;
  const dflt = constant(a.default);
  return (src, out) => {
    if (when !== undefined && !when(src)) return;
    const v = get(src);
    if (isAbsent(v)) {
      if (hasDefault) set(out, dflt());
      return;
    }
    const items = Array.isArray(v) ? v : [v];
    const list: Obj[] = [];
    for (const el of items) {
      const o: Obj = {};
      runBlock(block, el, o);
      for (const _ in o) {
        list.push(o);
        break;
      }
    }
    if (list.length > 0) set(out, list);
  };
}

/** Compiles assignments into one block (defaults and a rule's set share one). */
export function compileBlock(items: BlockItem[], scope: Scope): Block {
  const ctx = blockContext(items, scope.prefix);
  const steps: Step[] = [];
  for (const item of items) {
    const s = compileAssignment(item, scope, ctx);
    if (s) steps.push(s);
  }
  return { steps, fills: ctx.fills };
}
