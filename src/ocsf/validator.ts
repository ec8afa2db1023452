// The OCSF validator. Definitions are compiled once per catalog into specs (a Map of
// attribute specs per object, a value checker per type); validating an event walks it once
// and allocates nothing unless it finds an issue. It runs on every normalized event.
import { typeCheck, rootType, describe, type ValueCheck } from './checkers.js';
import { FREE_OBJECT } from './catalog.js';
import type { OcsfAttribute, OcsfCatalog, OcsfIssue, OcsfIssueKind } from './types.js';

/** Issues recorded per event at most: enough to explain it, bounded for hostile input. */
export const MAX_ISSUES = 100;
/** Objects nested deeper than this are reported, not walked (OCSF itself nests far less). */
export const MAX_DEPTH = 32;

const NO_ISSUES: OcsfIssue[] = Object.freeze([]) as unknown as OcsfIssue[];
/** The value of an `_id` enum that allows any caption in its sibling (OCSF's rule). */
const OTHER = 99;

export type EventValidator = (event: Record<string, unknown>) => OcsfIssue[];

export interface OcsfValidator {
  /** Issues of one event, dispatched on its class_uid; the shared empty array when valid. */
  validate(event: Record<string, unknown>): OcsfIssue[];
}

// Every spec of a kind is built with the same fields in the same order (absent = undefined),
// so the hot loop's property reads stay monomorphic.
interface AttrSpec {
  readonly name: string;
  /** Bits of the profiles that switch this attribute on; 0 = always there. */
  readonly profileMask: number;
  readonly profiles: string;
  readonly isArray: boolean;
  readonly label: string;
  /** object: walk into `object`; free: any JSON object; scalar: `check`. */
  readonly kind: 'object' | 'free' | 'scalar';
  readonly object: ObjSpec | undefined;
  readonly check: ValueCheck | undefined;
  readonly enumCaptions: ReadonlyMap<unknown, string> | undefined;
  /** The same captions indexed by id, for numeric enums: an element load instead of a hash lookup. */
  readonly enumById: readonly (string | undefined)[] | undefined;
  /** What a value outside the enum is reported as (category_uid is a class mismatch). */
  readonly enumKind: OcsfIssueKind;
  readonly sibling: string | undefined;
  /** Counted while walking, so required and constraint checks need no extra lookups. */
  readonly required: boolean;
  inAtLeastOne: boolean;
  inJustOne: boolean;
}

interface ObjSpec {
  readonly name: string;
  readonly attrs: Map<string, AttrSpec>;
  readonly required: AttrSpec[];
  /** Required attributes that belong to no profile, and those that do. */
  requiredAlways: number;
  readonly requiredByProfile: AttrSpec[];
  readonly atLeastOne: readonly string[] | undefined;
  readonly justOne: readonly string[] | undefined;
  /**
   * The keys met at each position of the last object walked with this spec and their
   * attributes. Events of one mapping have the same key order, so most lookups are one
   * identity comparison instead of a hash lookup.
   */
  readonly seenKeys: string[];
  readonly seenAttrs: (AttrSpec | undefined)[];
}

/** Key positions remembered per object spec; keys beyond are looked up every time. */
const SEEN_KEYS = 64;
/** Numeric enums whose largest id is below this get an id-indexed caption array. */
const ENUM_ARRAY_MAX = 1024;

interface Ctx {
  issues: OcsfIssue[] | null;
  /** The path of the object being walked; the attribute itself is passed to report(). */
  readonly stack: (string | number)[];
  depth: number;
  profiles: number;
}

function pathOf(stack: readonly (string | number)[], last: string | number | undefined): string {
  let out = '';
  for (const s of stack) out = typeof s === 'number' ? `${out}[${s}]` : out ? `${out}.${s}` : s;
  if (last !== undefined) out = typeof last === 'number' ? `${out}[${last}]` : out ? `${out}.${last}` : last;
  return out;
}

/** Paths are only built here, when an issue is found: a valid event never pays for them. */
function report(ctx: Ctx, kind: OcsfIssueKind, message: string, last?: string | number): void {
  const issues = (ctx.issues ??= []);
  if (issues.length < MAX_ISSUES) issues.push({ path: pathOf(ctx.stack, last), kind, message });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

class Compiler {
  private readonly objects = new Map<string, ObjSpec>();
  private readonly checks = new Map<string, ValueCheck>();
  private readonly profileBits = new Map<string, number>();
  readonly classes = new Map<number, EventValidator>();
  readonly ctx: Ctx = { issues: null, stack: [], depth: 0, profiles: 0 };

  constructor(readonly catalog: OcsfCatalog) {}

  private bit(profile: string): number {
    let b = this.profileBits.get(profile);
    if (b === undefined) {
      // OCSF 1.8.0 has 14 profiles; 31 is what a number's bitwise operators give.
      if (this.profileBits.size >= 31)
        throw new Error(`too many OCSF profiles for the validator (>31) at "${profile}"`);
      b = 1 << this.profileBits.size;
      this.profileBits.set(profile, b);
    }
    return b;
  }

  profileMask(metadata: unknown): number {
    if (!isPlainObject(metadata)) return 0;
    const listed = metadata.profiles;
    if (!Array.isArray(listed)) return 0;
    let mask = 0;
    for (const p of listed) if (typeof p === 'string') mask |= this.profileBits.get(p) ?? 0;
    return mask;
  }

  private valueCheck(type: string): ValueCheck {
    let check = this.checks.get(type);
    if (!check) {
      const def = this.catalog.type(type);
      if (!def) throw new Error(`OCSF type "${type}" is not defined`);
      check = typeCheck(this.catalog, def);
      this.checks.set(type, check);
    }
    return check;
  }

  private attr(a: OcsfAttribute, overrides: { enumKind?: OcsfIssueKind; noEnum?: boolean } = {}): AttrSpec {
    let profileMask = 0;
    for (const p of a.profiles ?? []) profileMask |= this.bit(p);
    const isObject = a.type === 'object_t';
    const free = isObject && a.objectType === FREE_OBJECT;
    const type = isObject ? undefined : this.catalog.type(a.type);
    let enumCaptions: Map<unknown, string> | undefined;
    let enumById: (string | undefined)[] | undefined;
    if (a.enum && !overrides.noEnum) {
      const numeric = rootType(this.catalog, a.type) !== 'string_t';
      enumCaptions = new Map(Object.entries(a.enum).map(([k, caption]) => [numeric ? Number(k) : k, caption]));
      const ids = [...enumCaptions.keys()];
      if (
        numeric &&
        ids.every((id) => Number.isInteger(id) && (id as number) >= 0 && (id as number) < ENUM_ARRAY_MAX)
      ) {
        enumById = Array.from({ length: Math.max(...(ids as number[])) + 1 }, (_, id) => enumCaptions!.get(id));
      }
    }
    return {
      name: a.name,
      profileMask,
      profiles: (a.profiles ?? []).join(', '),
      isArray: a.isArray,
      label: isObject ? `object ${a.objectType}` : type ? `${type.caption} (${type.name})` : a.type,
      kind: free ? 'free' : isObject ? 'object' : 'scalar',
      // An object spec is registered before it is filled, so a cycle gets the same spec.
      object: isObject && !free ? this.object(a.objectType as string) : undefined,
      check: isObject ? undefined : this.valueCheck(a.type),
      enumCaptions,
      enumById,
      enumKind: overrides.enumKind ?? 'enum',
      sibling: enumCaptions ? a.sibling : undefined,
      required: a.requirement === 'required',
      inAtLeastOne: false,
      inJustOne: false,
    };
  }

  /** Object specs are registered before their attributes are built, so cycles resolve. */
  object(name: string): ObjSpec {
    const known = this.objects.get(name);
    if (known) return known;
    const def = this.catalog.object(name);
    if (!def) throw new Error(`OCSF object "${name}" is not defined`);
    const spec = emptySpec(name, def.constraints);
    this.objects.set(name, spec);
    this.fill(spec, Object.values(def.attributes));
    return spec;
  }

  private fill(
    spec: ObjSpec,
    attributes: readonly OcsfAttribute[],
    overrides: Record<string, { enumKind?: OcsfIssueKind; noEnum?: boolean }> = {},
  ): void {
    for (const a of attributes) {
      const attr = this.attr(a, overrides[a.name]);
      spec.attrs.set(a.name, attr);
      if (attr.required) {
        spec.required.push(attr);
        if (attr.profileMask === 0) spec.requiredAlways++;
        else spec.requiredByProfile.push(attr);
      }
    }
    for (const name of spec.atLeastOne ?? []) {
      const attr = spec.attrs.get(name);
      if (attr) attr.inAtLeastOne = true;
    }
    for (const name of spec.justOne ?? []) {
      const attr = spec.attrs.get(name);
      if (attr) attr.inJustOne = true;
    }
  }

  classValidator(classUid: number): EventValidator {
    const known = this.classes.get(classUid);
    if (known) return known;
    const def = this.catalog.classByUid(classUid);
    if (!def) throw new Error(`OCSF class ${classUid} is not in the catalog`);
    const spec = emptySpec(def.name, def.constraints);
    // type_uid is checked against class_uid and activity_id below, not as a plain enum.
    this.fill(spec, Object.values(def.attributes), { type_uid: { noEnum: true }, category_uid: { enumKind: 'type' } });
    const typeNames = new Map(Object.entries(def.attributes.type_uid?.enum ?? {}).map(([k, v]) => [Number(k), v]));
    const version = this.catalog.version;
    const ctx = this.ctx;

    const validate: EventValidator = (event) => {
      ctx.issues = null;
      ctx.stack.length = 0;
      ctx.depth = 0;
      if (!isPlainObject(event)) {
        report(ctx, 'type', `an OCSF event is a JSON object, got ${describe(event)}`);
        return ctx.issues ?? NO_ISSUES;
      }
      ctx.profiles = this.profileMask(event.metadata);
      walk(event, spec, ctx);
      classChecks(event, ctx, classUid, typeNames, version);
      const issues = ctx.issues;
      ctx.issues = null;
      return issues ?? NO_ISSUES;
    };
    this.classes.set(classUid, validate);
    return validate;
  }
}

function emptySpec(
  name: string,
  constraints: { readonly at_least_one?: readonly string[]; readonly just_one?: readonly string[] } | undefined,
): ObjSpec {
  return {
    name,
    attrs: new Map(),
    required: [],
    requiredAlways: 0,
    requiredByProfile: [],
    atLeastOne: constraints?.at_least_one,
    justOne: constraints?.just_one,
    seenKeys: new Array<string>(SEEN_KEYS).fill(''),
    seenAttrs: new Array<AttrSpec | undefined>(SEEN_KEYS).fill(undefined),
  };
}

function classChecks(
  event: Record<string, unknown>,
  ctx: Ctx,
  classUid: number,
  typeNames: ReadonlyMap<number, string>,
  version: string,
): void {
  const activity = event.activity_id;
  const typeUid = event.type_uid;
  if (typeof activity === 'number' && typeof typeUid === 'number') {
    const expected = classUid * 100 + activity;
    if (typeUid !== expected) {
      report(
        ctx,
        'type_uid',
        `type_uid must be class_uid * 100 + activity_id = ${expected}, got ${typeUid}`,
        'type_uid',
      );
    } else if (typeof event.type_name === 'string' && activity !== OTHER) {
      const caption = typeNames.get(typeUid);
      if (caption !== undefined && caption !== event.type_name) {
        report(
          ctx,
          'caption',
          `type_name must be "${caption}" for type_uid ${typeUid}, got ${describe(event.type_name)}`,
          'type_name',
        );
      }
    }
  }
  const metadata = event.metadata;
  if (isPlainObject(metadata)) {
    ctx.stack.push('metadata');
    if (typeof metadata.version === 'string' && metadata.version !== version) {
      report(ctx, 'metadata', `metadata.version must be "${version}", got ${describe(metadata.version)}`, 'version');
    }
    const product = metadata.product;
    if (isPlainObject(product) && product.name == null && product.vendor_name == null) {
      report(ctx, 'metadata', 'metadata.product needs at least a name or a vendor_name', 'product');
    }
    ctx.stack.pop();
  }
}

function walk(obj: Record<string, unknown>, spec: ObjSpec, ctx: Ctx): void {
  const seenKeys = spec.seenKeys;
  const seenAttrs = spec.seenAttrs;
  let position = 0;
  let required = 0;
  let atLeastOne = 0;
  let justOne = 0;
  for (const key in obj) {
    const at = position++;
    const value = obj[key];
    if (value === null || value === undefined) continue; // null is absent, in JSON as in OCSF
    let attr: AttrSpec | undefined;
    if (at < SEEN_KEYS && seenKeys[at] === key) attr = seenAttrs[at];
    else {
      attr = spec.attrs.get(key);
      if (at < SEEN_KEYS) {
        seenKeys[at] = key;
        seenAttrs[at] = attr;
      }
    }
    if (attr === undefined) {
      report(ctx, 'unknown_attribute', `"${key}" is not an attribute of ${spec.name}`, key);
    } else if (attr.profileMask !== 0 && (attr.profileMask & ctx.profiles) === 0) {
      report(
        ctx,
        'unknown_attribute',
        `"${key}" belongs to the profile ${attr.profiles}, which metadata.profiles does not list`,
        key,
      );
    } else {
      if (attr.required) required++;
      if (attr.inAtLeastOne) atLeastOne++;
      if (attr.inJustOne) justOne++;
      if (!attr.isArray) checkValue(value, attr, obj, ctx, key);
      else if (!Array.isArray(value))
        report(ctx, 'type', `expected an array of ${attr.label}, got ${describe(value)}`, key);
      else {
        ctx.stack.push(key);
        for (let i = 0; i < value.length; i++) checkValue(value[i], attr, null, ctx, i);
        ctx.stack.pop();
      }
    }
  }

  let expected = spec.requiredAlways;
  const byProfile = spec.requiredByProfile;
  for (let i = 0; i < byProfile.length; i++) if ((byProfile[i]!.profileMask & ctx.profiles) !== 0) expected++;
  if (required < expected) reportMissing(obj, spec, ctx);
  if (spec.atLeastOne !== undefined && atLeastOne === 0) {
    report(ctx, 'constraint', `${spec.name} needs at least one of ${spec.atLeastOne.join(', ')}`);
  }
  if (spec.justOne !== undefined && justOne !== 1) {
    report(ctx, 'constraint', `${spec.name} needs exactly one of ${spec.justOne.join(', ')}`);
  }
}

/** Only called when a count says something required is missing: finds what. */
function reportMissing(obj: Record<string, unknown>, spec: ObjSpec, ctx: Ctx): void {
  for (const attr of spec.required) {
    const value = obj[attr.name];
    if (value !== null && value !== undefined) continue;
    if (attr.profileMask !== 0 && (attr.profileMask & ctx.profiles) === 0) continue;
    report(
      ctx,
      'missing_required',
      attr.profileMask ? `"${attr.name}" is required by the profile ${attr.profiles}` : `"${attr.name}" is required`,
      attr.name,
    );
  }
}

/**
 * `key` is where the value sits in its parent (an attribute name, or an index in a list);
 * `parent` is the object holding a single (non-array) value, for its sibling caption.
 */
function checkValue(
  value: unknown,
  attr: AttrSpec,
  parent: Record<string, unknown> | null,
  ctx: Ctx,
  key: string | number,
): void {
  if (attr.kind !== 'scalar') {
    if (!isPlainObject(value)) return report(ctx, 'type', `expected ${attr.label}, got ${describe(value)}`, key);
    if (attr.kind === 'free') return;
    if (ctx.depth >= MAX_DEPTH) return report(ctx, 'type', `objects are nested deeper than ${MAX_DEPTH} levels`, key);
    ctx.depth++;
    ctx.stack.push(key);
    walk(value, attr.object as ObjSpec, ctx);
    ctx.stack.pop();
    ctx.depth--;
    return;
  }
  const wrong = (attr.check as ValueCheck)(value);
  if (wrong !== undefined) return report(ctx, 'type', wrong, key);
  const captions = attr.enumCaptions;
  if (captions === undefined) return;
  const byId = attr.enumById;
  const caption = byId !== undefined ? (typeof value === 'number' ? byId[value] : undefined) : captions.get(value);
  if (caption === undefined) {
    return report(
      ctx,
      attr.enumKind,
      `${describe(value)} is not a value of ${attr.name} (${[...captions.keys()].join(', ')})`,
      key,
    );
  }
  const sibling = attr.sibling;
  if (sibling === undefined || parent === null || value === OTHER) return;
  const given = parent[sibling];
  if (typeof given === 'string' && given !== caption) {
    report(
      ctx,
      'caption',
      `${sibling} must be "${caption}" for ${attr.name} ${String(value)}, got ${describe(given)}`,
      sibling,
    );
  }
}

const compilers = new WeakMap<OcsfCatalog, Compiler>();

function compilerFor(catalog: OcsfCatalog): Compiler {
  let compiler = compilers.get(catalog);
  if (!compiler) {
    compiler = new Compiler(catalog);
    compilers.set(catalog, compiler);
  }
  return compiler;
}

/** The validator of one class (compiled once per catalog and class). Throws for an unknown class. */
export function compileValidator(catalog: OcsfCatalog, classUid: number): EventValidator {
  return compilerFor(catalog).classValidator(classUid);
}

/** A validator for every class of the catalog, dispatching on the event's class_uid. */
export function createValidator(catalog: OcsfCatalog): OcsfValidator {
  const compiler = compilerFor(catalog);
  return {
    validate(event) {
      const uid = isPlainObject(event) ? event.class_uid : undefined;
      if (typeof uid !== 'number' || !catalog.classByUid(uid)) {
        const message =
          uid === undefined || uid === null
            ? 'class_uid is missing'
            : `class_uid ${describe(uid)} is not a supported OCSF class`;
        return [{ path: 'class_uid', kind: 'unknown_class', message }];
      }
      return compiler.classValidator(uid)(event);
    },
  };
}
