// The mapping language: a declarative document, written and reviewed by people, that turns
// one platform/stream's raw events into OCSF. compileMapping() (compile.ts) turns a
// document into a CompiledMapping once; nothing in a document is ever evaluated as code.
// docs/mappings.md is the user's guide with worked examples.
import type { FieldCondition as OneCondition } from '../conditions/types.js';
import type { QuarantineKind } from '../envelope.js';
import type { ParseStep } from '../parse/steps.js';
import type { MappingTestCase } from './cases.js';

/**
 * A source path into the raw event: `a.b.c`, `a.list[0].id` (negative counts from the end),
 * `a.list[*].id` (every element), `a.list[?type=User].id` (first element whose `type` is
 * `User`), `a["x.y"]` (a key with dots or brackets), `@` (the current value). paths.ts.
 */
export type SourcePath = string;

/**
 * A condition over the raw event: the one condition language (docs/conditions.md), whose
 * fields here are source paths; or, still read, the old leaf form `{path, <op>: arg}`.
 */
export type Condition = OneCondition | OldCondition | { all: Condition[] } | { any: Condition[] } | { not: Condition };

/** The first mapping form, translated on compile: path -> field, matches -> regex, exists: false -> not_exists. */
export type OldCondition =
  | { path: SourcePath; eq: unknown }
  | { path: SourcePath; ne: unknown }
  | { path: SourcePath; in: unknown[] }
  | { path: SourcePath; prefix: string }
  | { path: SourcePath; suffix: string }
  | { path: SourcePath; contains: string }
  /** An RE2 regular expression, unanchored. */
  | { path: SourcePath; matches: string }
  | { path: SourcePath; exists: boolean }
  | { path: SourcePath; gt: number }
  | { path: SourcePath; gte: number }
  | { path: SourcePath; lt: number }
  | { path: SourcePath; lte: number };

/** Names served by GET /api/mappings/normalize/type-casts. */
export type CastName =
  | 'string'
  | 'integer'
  | 'long'
  | 'float'
  | 'boolean'
  | 'timestamp' // -> epoch milliseconds (OCSF timestamp_t)
  | 'datetime' // -> RFC 3339 UTC string (OCSF datetime_t)
  | 'ip'
  | 'port'
  | 'mac'
  | 'email'
  | 'hostname'
  | 'url'
  | 'json' // a JSON text -> its value
  | 'lowercase'
  | 'uppercase'
  | 'trim'
  | 'array' // a scalar -> [scalar]; an array stays
  | 'hex' // "0x1f4c" -> 8012
  | 'basename' // "C:\\Windows\\cmd.exe" -> "cmd.exe"
  | 'registry_key' // "HKLM\\Software\\Run\\Updater" -> "HKLM\\Software\\Run"
  | 'registry_value' // "HKLM\\Software\\Run\\Updater" -> "Updater"
  | 'words' // "a  b\tc" -> ["a", "b", "c"]
  | 'dirname' // "HKLM\\A\\B\\Value" -> "HKLM\\A\\B"
  | 'user_name' // "CORP\\alice" -> "alice"
  | 'user_domain' // "CORP\\alice" -> "CORP"
  | 'duration'; // seconds or "h:mm:ss" -> milliseconds

/**
 * How a timestamp cast reads its input. `auto` (default): numbers by magnitude
 * (s, ms, us, ns), numeric strings likewise, else RFC 3339 / ISO 8601, RFC 2822,
 * `YYYY-MM-DD HH:MM:SS[.fff]` (UTC), CLF `02/Jan/2024:03:04:05 +0000`, syslog `Jan  2 03:04:05`.
 */
export type TimestampFormat =
  | 'auto'
  | 'epoch_s'
  | 'epoch_ms'
  | 'epoch_us'
  | 'epoch_ns'
  | 'rfc3339'
  | 'rfc2822'
  | 'clf'
  | 'syslog'
  /** Windows FILETIME / Active Directory: 100-nanosecond intervals since 1601-01-01 UTC. */
  | 'filetime';

/** Value lookup: source value (as a string key) -> output value; `default` when absent/unlisted. */
export interface Lookup {
  map: Record<string, unknown>;
  default?: unknown;
  /** Compare keys case-insensitively. */
  ignore_case?: boolean;
}

/**
 * One assignment to an OCSF attribute at `target` (dotted path within the event).
 * Exactly one value source: from | value | template | each.
 */
export interface Assignment {
  /** OCSF attribute path: `actor.user.name`, `resources[0].uid` (an element), `metadata.labels[]` (append). */
  target: string;
  /** Source path, or a list: the first present (non-null, non-empty-string) wins. */
  from?: SourcePath | SourcePath[];
  /** A constant. */
  value?: unknown;
  /** `{path}` placeholders filled from the raw event; `{path|fallback}` gives a fallback text. */
  template?: string;
  /** Map each element of the array at `each` to an object built by `set` (paths in `set` are relative to the element). */
  each?: SourcePath;
  set?: Assignment[];
  cast?: CastName;
  /** For cast timestamp/datetime. */
  format?: TimestampFormat;
  lookup?: Lookup;
  /** Assign only when the condition holds. */
  when?: Condition;
  /** Used when the source is absent. */
  default?: unknown;
  /** A cast that fails: `fail` (default) quarantines the event as cast_failed; `skip` leaves the target unset. */
  on_error?: 'fail' | 'skip';
}

/** One way of reading an event: the first rule whose `when` holds decides the class. */
export interface MappingRule {
  name: string;
  when?: Condition;
  class_uid: number;
  /** A constant activity_id, or a lookup from the raw event (activity_name is set from the class's enum). */
  activity_id: number | { from: SourcePath | SourcePath[]; lookup: Lookup };
  set?: Assignment[];
}

export interface MappingDocument {
  /** Document format; only 1 exists. */
  format_version?: 1;
  /**
   * Parsers run in order before the rules (syslog, kv, csv, cef, leef, regex, xml, json): each
   * reads a text field (default `message`, a text event's line) and adds the fields it finds.
   */
  parse?: ParseStep[];
  /** Test cases: raw events with the OCSF output expected; publication refuses a version whose cases fail. */
  tests?: MappingTestCase[];
  /** Informational; the definition the version belongs to decides where it applies. */
  platform?: string;
  stream?: string;
  description?: string;
  /** Constants for metadata.product (name and vendor_name at least); metadata.version is set to the catalog's OCSF version. */
  product: { name: string; vendor_name: string; version?: string };
  /** OCSF profiles the output declares in metadata.profiles (e.g. cloud, host). */
  profiles?: string[];
  /** Applied to every event before the matching rule's own assignments. */
  defaults?: Assignment[];
  rules: MappingRule[];
  /** Keep raw fields the mapping does not read under `unmapped` (default true). */
  keep_unmapped?: boolean;
  /** Build `observables` from assigned attributes whose OCSF type is observable (default true). */
  observables?: boolean;
  /**
   * Source fields the source is known to send that the mapping deliberately does not read:
   * they stay under `unmapped` but drift does not report them. A path covers its subtree.
   */
  known_fields?: string[];
}

/** A problem found when compiling a document (422 on publication). */
export interface MappingProblem {
  /** JSON-pointer-like location in the document, e.g. `/rules/0/set/3/target`. */
  at: string;
  message: string;
}

export class MappingCompileError extends Error {
  constructor(readonly problems: MappingProblem[]) {
    super(`mapping document is invalid: ${problems.map((p) => `${p.at}: ${p.message}`).join('; ')}`);
  }
}

export interface MapContext {
  /** Epoch ms the event was received; the fallback for `time` when the mapping sets none. */
  receivedAtMs: number;
}

export type MapResult =
  /** `input`: the event as the rules read it, when `parse` steps added fields to it (drift reads it). */
  | { ok: true; event: Record<string, unknown>; input?: Record<string, unknown> }
  | {
      ok: false;
      kind: Extract<QuarantineKind, 'no_matching_rule' | 'cast_failed' | 'mapping_error' | 'parse_failed'>;
      detail: string;
    };

export interface CompiledMapping {
  /**
   * Every source path the document reads (normalized: `[*]`/`[n]` written as `[]`), so drift
   * can tell unread raw fields. A path covers its whole subtree.
   */
  readonly reads: ReadonlySet<string>;
  /**
   * What drift does not report: `reads` and the document's `known_fields`, in the same
   * spelling. A path covers its whole subtree.
   */
  readonly expected: ReadonlySet<string>;
  /** Maps one raw event; never throws (a failure is a MapResult). */
  map(raw: Record<string, unknown>, ctx: MapContext): MapResult;
}
