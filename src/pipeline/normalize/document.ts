// The mapping document's shape as a TypeBox schema: the API validates drafts against it and
// the OpenAPI document shows it. The schema has no $id/$ref (so it can be embedded in any
// route schema); conditions are described as objects here and checked by the compiler, which
// gives better messages for their many forms than a union of sixteen shapes would.
import { Type, type TSchema } from 'typebox';
import { Settings } from 'typebox/system';
import { Value } from 'typebox/value';
import { TYPE_CASTS } from './casts.js';
import type { MappingProblem } from './types.js';
import { PARSE_LIMITS, PARSERS } from '../parse/steps.js';
import { MAX_TEST_CASES } from './cases.js';
import { QUARANTINE_KINDS } from '../envelope.js';

/** How deep `each` may nest (an each inside an each's `set` is depth 2). */
export const MAX_EACH_DEPTH = 3;
export const MAX_RULES = 500;
export const MAX_ASSIGNMENTS = 1000;
export const MAX_KNOWN_FIELDS = 1000;
const MAX_SHAPE_ERRORS = 64;

const Str = (description: string, max = 1000) => Type.String({ minLength: 1, maxLength: max, description });

const SourcePath = Str(
  'A source path into the raw event: `a.b`, `a[0].b`, `a[*].b` (every element), `a[?type=User].b` (first match), `a["x.y"]`; `@` is the current value',
  1000,
);

const FromPaths = Type.Union([SourcePath, Type.Array(SourcePath, { minItems: 1, maxItems: 20 })], {
  description: 'A source path, or a list of them: the first present value (not null, not "", not []) wins',
  'x-expect': 'a path or a non-empty list of paths',
});

const Condition = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'A condition in the one condition language (docs/conditions.md, as routes): {field, op, value} with field a source path ' +
    'and op one of eq, ne, in, not_in, prefix, suffix, contains, regex (RE2), exists, not_exists, cidr, gt, gte, lt, lte; or ' +
    '{all: [conditions]}, {any: [conditions]}, {not: condition}. The old form {path, <op>: arg} (matches for regex, ' +
    'exists: true|false) is still read.',
});

const Lookup = Type.Object(
  {
    map: Type.Record(Type.String(), Type.Unknown(), { description: 'Source value (as text) -> output value' }),
    default: Type.Optional(
      Type.Unknown({ description: 'Output when the source value is not listed (else the target stays unset)' }),
    ),
    ignore_case: Type.Optional(Type.Boolean({ description: 'Compare keys case-insensitively' })),
  },
  { additionalProperties: false, description: 'Value lookup applied after the cast' },
);

const CastNameSchema = Type.Enum(
  TYPE_CASTS.map((c) => c.name),
  { description: 'Cast applied to the source value (GET /api/mappings/normalize/type-casts)' },
);

const FORMATS = [
  'auto',
  'epoch_s',
  'epoch_ms',
  'epoch_us',
  'epoch_ns',
  'rfc3339',
  'rfc2822',
  'clf',
  'syslog',
  'filetime',
] as const;
const TimestampFormatSchema = Type.Enum([...FORMATS], {
  description: 'How the timestamp and datetime casts read their input (default auto)',
});

function assignment(depth: number): TSchema {
  return Type.Object(
    {
      target: Str('OCSF attribute path in the event (`actor.user.name`, `resources[0].uid`, `labels[]` appends)', 300),
      from: Type.Optional(FromPaths),
      value: Type.Optional(Type.Unknown({ description: 'A constant' })),
      template: Type.Optional(
        Type.String({
          maxLength: 4096,
          description: 'Text with {path} and {path|fallback} placeholders; {{ and }} are literal braces',
        }),
      ),
      each: Type.Optional(SourcePath),
      set: Type.Optional(
        Type.Array(depth > 0 ? assignment(depth - 1) : Type.Record(Type.String(), Type.Unknown()), {
          maxItems: 200,
          description:
            'With `each`: the assignments building one output element per source element (paths relative to the element)',
        }),
      ),
      cast: Type.Optional(CastNameSchema),
      format: Type.Optional(TimestampFormatSchema),
      lookup: Type.Optional(Lookup),
      when: Type.Optional(Condition),
      default: Type.Optional(Type.Unknown({ description: 'Assigned as is when the source is absent' })),
      on_error: Type.Optional(
        Type.Enum(['fail', 'skip'], {
          description:
            'A failing cast: fail (default) quarantines the event as cast_failed; skip leaves the target unset',
        }),
      ),
    },
    { additionalProperties: false, description: 'One assignment: exactly one of from, value, template or each' },
  );
}

export const AssignmentSchema = assignment(MAX_EACH_DEPTH);

export const MappingRuleSchema = Type.Object(
  {
    name: Str('Shown in dry runs and quarantine details', 200),
    when: Type.Optional(Condition),
    class_uid: Type.Integer({
      minimum: 0,
      description:
        'OCSF class of the events this rule maps; 0 is Base Event, for vendor events OCSF has no specific class for',
    }),
    activity_id: Type.Union(
      [Type.Integer({ minimum: 0 }), Type.Object({ from: FromPaths, lookup: Lookup }, { additionalProperties: false })],
      {
        description:
          'A constant activity_id, or {from, lookup} (unlisted values give 99 Other with the source value as activity_name)',
        'x-expect': 'an integer or {from, lookup}',
      },
    ),
    set: Type.Optional(Type.Array(AssignmentSchema, { maxItems: MAX_ASSIGNMENTS })),
  },
  { additionalProperties: false, description: 'The first rule whose `when` holds maps the event' },
);

const Limit = (limit: { max: number }, description: string) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: limit.max, description }));

export const ParseStepSchema = Type.Object(
  {
    parser: Type.Enum([...PARSERS], {
      description: 'syslog (RFC 5424/3164 header), kv (key=value), csv, cef, leef, regex (named groups), xml, json',
    }),
    from: Type.Optional(Str("The text to read (a source path); default message, where a text event's line is", 1000)),
    into: Type.Optional(
      Str('Where the fields go: a dotted path of plain keys; default the top level of the event', 300),
    ),
    when: Type.Optional(Condition),
    on_error: Type.Optional(
      Type.Enum(['fail', 'skip'], {
        description: "fail (default): quarantine the event as parse_failed; skip: go on without this step's fields",
      }),
    ),
    keep_source: Type.Optional(
      Type.Boolean({
        description:
          "The text read stays under unmapped unless an assignment reads it (default: a step's source counts as read)",
      }),
    ),
    pattern: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'regex: an RE2 pattern with named groups (?P<name>...), unanchored',
      }),
    ),
    pair_separator: Type.Optional(
      Type.String({ minLength: 1, maxLength: 8, description: 'kv: between pairs (default spaces and tabs)' }),
    ),
    value_separator: Type.Optional(
      Type.String({ minLength: 1, maxLength: 8, description: 'kv: between a key and its value (default =)' }),
    ),
    quotes: Type.Optional(
      Type.String({ maxLength: 4, description: 'kv: characters that may quote a value (default "\')' }),
    ),
    doubled_quotes: Type.Optional(
      Type.Boolean({ description: 'kv: inside a quoted value, the quote written twice stands for one ("" as in CSV)' }),
    ),
    lenient: Type.Optional(
      Type.Boolean({
        description:
          'kv: a quoted value left open at the end of the text (a line cut short in transit) runs to the end; text glued after a closing quote stays with the value',
      }),
    ),
    columns: Type.Optional(
      Type.Array(Type.String({ maxLength: 200 }), {
        minItems: 1,
        maxItems: 1000,
        description: 'csv: the header, in order ("" or "_" skips a column)',
      }),
    ),
    delimiter: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 8,
        description: "csv (default ,) and leef (default tab, or the LEEF 2.0 header's)",
      }),
    ),
    quote: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1, description: 'csv: the quote character (default ")' }),
    ),
    allow_extra: Type.Optional(
      Type.Boolean({ description: 'csv: ignore fields beyond the columns instead of failing' }),
    ),
    format: Type.Optional(
      Type.Enum(['generic', 'windows_event'], {
        description: 'xml: generic (default) or windows_event (System.*, EventData.<Name>)',
      }),
    ),
    max_length: Limit(
      PARSE_LIMITS.maxLength,
      `Longest text read, in characters (default ${PARSE_LIMITS.maxLength.default})`,
    ),
    max_fields: Limit(PARSE_LIMITS.maxFields, `Most fields produced (default ${PARSE_LIMITS.maxFields.default})`),
    max_depth: Limit(PARSE_LIMITS.maxDepth, `xml and json: deepest nesting (default ${PARSE_LIMITS.maxDepth.default})`),
  },
  {
    additionalProperties: false,
    description: 'One parser step, run before the rules (docs/mappings.md, Parsing text)',
  },
);

export const TestCaseSchema = Type.Object(
  {
    name: Str('Shown when the case fails', 200),
    input: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The raw event' })),
    input_text: Type.Optional(
      Type.String({ maxLength: 1_048_576, description: 'A text event\'s line, read as {"message": <line>}' }),
    ),
    received_at: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'When the event was received (the time fallback); default 2024-01-01T00:00:00Z',
      }),
    ),
    output: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The whole OCSF event expected' })),
    expect: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'OCSF path -> the value expected (null: absent)' }),
    ),
    quarantine: Type.Optional(
      Type.Enum([...QUARANTINE_KINDS], { description: 'The event is expected to be quarantined, for this reason' }),
    ),
  },
  {
    additionalProperties: false,
    description: 'A test case: one input and one expectation (output, expect or quarantine)',
  },
);

export const MappingDocumentSchema = Type.Object(
  {
    format_version: Type.Optional(Type.Literal(1, { description: 'Document format (only 1 exists)' })),
    parse: Type.Optional(
      Type.Array(ParseStepSchema, {
        maxItems: PARSE_LIMITS.steps,
        description: 'Parsers run in order before the rules, for text events',
      }),
    ),
    tests: Type.Optional(
      Type.Array(TestCaseSchema, {
        maxItems: MAX_TEST_CASES,
        description: 'Test cases; publication refuses a version whose cases fail',
      }),
    ),
    platform: Type.Optional(Type.String({ maxLength: 64, description: 'Informational' })),
    stream: Type.Optional(Type.String({ maxLength: 128, description: 'Informational' })),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    product: Type.Object(
      {
        name: Str('metadata.product.name', 200),
        vendor_name: Str('metadata.product.vendor_name', 200),
        version: Type.Optional(Str('metadata.product.version', 100)),
      },
      { additionalProperties: false, description: 'Constants for metadata.product' },
    ),
    profiles: Type.Optional(
      Type.Array(Str('OCSF profile', 64), {
        maxItems: 20,
        uniqueItems: true,
        description: 'Declared in metadata.profiles',
      }),
    ),
    defaults: Type.Optional(
      Type.Array(AssignmentSchema, {
        maxItems: MAX_ASSIGNMENTS,
        description: "Applied to every event before the matching rule's own assignments",
      }),
    ),
    rules: Type.Array(MappingRuleSchema, { minItems: 1, maxItems: MAX_RULES }),
    keep_unmapped: Type.Optional(
      Type.Boolean({ description: 'Keep raw fields the mapping does not read under `unmapped` (default true)' }),
    ),
    observables: Type.Optional(
      Type.Boolean({ description: 'Build `observables` from assigned observable attributes (default true)' }),
    ),
    known_fields: Type.Optional(
      Type.Array(Str('A source path (`a.b`, `a[*].b` or `a[].b`, `a["x.y"]`); it covers its subtree', 1000), {
        maxItems: MAX_KNOWN_FIELDS,
        description:
          'Fields the source is known to send that the mapping deliberately does not read: they stay under `unmapped`, and drift does not report them',
      }),
    ),
  },
  { additionalProperties: false, description: 'A mapping document (docs/mappings.md)' },
);

function schemaAt(root: unknown, pointer: string): Record<string, unknown> | undefined {
  let node: unknown = root;
  for (const part of pointer.replace(/^#\/?/, '').split('/')) {
    if (part === '') continue;
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return typeof node === 'object' && node !== null ? (node as Record<string, unknown>) : undefined;
}

/** TypeBox buffers 8 errors by default; a document's author wants to see more of them at once. */
function errorsOf(doc: unknown) {
  const saved = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: MAX_SHAPE_ERRORS });
  try {
    return Value.Errors(MappingDocumentSchema, doc);
  } finally {
    Settings.Set({ maxErrors: saved });
  }
}

/** Shape problems of a document (empty when it matches the schema), with JSON-pointer locations. */
export function shapeProblems(doc: unknown): MappingProblem[] {
  if (Value.Check(MappingDocumentSchema, doc)) return [];
  const out: MappingProblem[] = [];
  const seen = new Set<string>();
  const push = (at: string, message: string) => {
    const key = `${at}\u0000${message}`;
    if (!seen.has(key)) out.push({ at: at === '' ? '/' : at, message });
    seen.add(key);
  };
  for (const e of errorsOf(doc)) {
    // Each union branch reports its own mismatch; the union's own error says it better.
    if (e.schemaPath.includes('/anyOf/')) continue;
    if (e.keyword === 'boolean') continue;
    if (e.keyword === 'anyOf') {
      const expect = schemaAt(MappingDocumentSchema, e.schemaPath)?.['x-expect'];
      push(e.instancePath, `must be ${typeof expect === 'string' ? expect : 'one of the allowed forms'}`);
    } else if (e.keyword === 'enum') {
      const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues ?? [];
      push(e.instancePath, `must be one of ${allowed.join(', ')}`);
    } else if (e.keyword === 'additionalProperties') {
      const names = (e.params as { additionalProperties?: string[] }).additionalProperties ?? [];
      for (const n of names) push(`${e.instancePath}/${n}`, 'unknown property');
    } else {
      push(e.instancePath, e.message);
    }
  }
  return out;
}
