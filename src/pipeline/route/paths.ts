// Field paths of route conditions and transforms. The syntax is the normalization stage's
// (pipeline/normalize/paths.ts), narrowed to what a route needs: keys (`actor.user.name`,
// `unmapped["x.y"]`), indexes (`observables[0].value`, conditions only) and `[*]` (every
// element). Paths are parsed once at compile time; reading a field per event is a few
// property loads.
import { createFieldIndex, ocsfCatalog, type OcsfFieldIndex, type UnknownField } from '../../ocsf/index.js';
import type { NormalizedRecord } from '../envelope.js';
import { collects, compileSegments, parsePath, PathSyntaxError, type PathSegment } from '../normalize/paths.js';

export { collects, type PathSegment };

/** The envelope fields a condition can test, and how each is read from a record. */
const ENVELOPE_FIELDS: Record<string, (r: NormalizedRecord) => unknown> = {
  'envelope.id': (r) => r.id,
  'envelope.organization_id': (r) => r.organization_id,
  'envelope.integration_id': (r) => r.integration_id,
  'envelope.stream': (r) => r.stream,
  'envelope.valid': (r) => r.valid,
};
export const ENVELOPE_FIELD_NAMES = Object.keys(ENVELOPE_FIELDS);

/**
 * How paths written by a user are checked against what a normalized event can hold: `ocsf`
 * refuses a path no supported OCSF class has (routes being created, edited or tried);
 * `any` checks the syntax only (stored routes, which must keep compiling whatever the
 * rules became, and collection filters, whose paths name raw vendor fields).
 */
export type FieldRule = 'ocsf' | 'any';

let index: OcsfFieldIndex | undefined;
function ocsfFields(): OcsfFieldIndex {
  index ??= createFieldIndex(ocsfCatalog(), ENVELOPE_FIELD_NAMES);
  return index;
}

/** A path no supported OCSF class can have, with the closest known one. */
export class UnknownFieldError extends PathSyntaxError {
  constructor(readonly unknown: UnknownField) {
    super(unknown.message);
    this.name = 'UnknownFieldError';
  }
}

/** Throws UnknownFieldError when the rule is `ocsf` and no supported class has the path. */
export function checkKnownField(segs: readonly PathSegment[], rule: FieldRule): void {
  if (rule === 'any') return;
  const unknown = ocsfFields().check(segs);
  if (unknown) throw new UnknownFieldError(unknown);
}

export type RecordGetter = (r: NormalizedRecord) => unknown;

export interface FieldAccess {
  get: RecordGetter;
  /** The path has `[*]`: its value is a list of every element's value (undefined when none). */
  many: boolean;
}

/** Parses a path; throws PathSyntaxError with a reason fit for a validation message. */
export function parseRoutePath(path: string, opts: { indexes: boolean }): PathSegment[] {
  if (typeof path !== 'string' || path.trim() === '') throw new PathSyntaxError('a field path cannot be empty');
  if (path === '@') throw new PathSyntaxError('"@" is not a field path');
  const segs = parsePath(path);
  for (const s of segs) {
    if (s.t === 'find')
      throw new PathSyntaxError('filters ([?key=value]) are not supported in routes; use [*] with a condition');
    if (s.t === 'idx' && !opts.indexes)
      throw new PathSyntaxError('indexes ([n]) are not supported here; use [*] for every element');
  }
  return segs;
}

/**
 * Compiles a condition's field: an envelope field or an OCSF path read from `record.ocsf`.
 * `envelope.` is reserved: OCSF has no top-level attribute of that name.
 */
export function compileField(field: string, rule: FieldRule = 'any'): FieldAccess {
  const envelope = ENVELOPE_FIELDS[field];
  if (envelope && Object.hasOwn(ENVELOPE_FIELDS, field)) return { get: envelope, many: false };
  if (field === 'envelope' || field.startsWith('envelope.') || field.startsWith('envelope[')) {
    throw new PathSyntaxError(`unknown envelope field (known: ${ENVELOPE_FIELD_NAMES.join(', ')})`);
  }
  const segs = parseRoutePath(field, { indexes: true });
  checkKnownField(segs, rule);
  const get = compileSegments(segs);
  return { get: (r) => get(r.ocsf), many: collects(segs) };
}

export { PathSyntaxError };
