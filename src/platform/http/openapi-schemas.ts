// How the route schemas become the schemas of the API document, in one place:
// - only what JSON Schema and OpenAPI define reaches the document: the schema library's own
//   keys (TypeBox's `~kind`, `~optional`, `~unsafe`, ...) are left out, and the validator's
//   words for a broken rule (`errorMessage`, ajv-errors) become the extension x-weir-error-message;
// - a schema that names itself with an `$id` (TypeBox's option, e.g. `{ $id: 'Integration' }`) is
//   a shared component: every response that embeds it refers to #/components/schemas/<$id>.
//   Request parts stay inline (their copies carry the input bounds, input.ts), without `$id`.
// The route schemas themselves are never changed: validation and serialization keep theirs.

/** Marks a shared schema between the route transform and the document transform. */
const COMPONENT = 'x-weir-component';
/** Keywords whose value is data, not a schema. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);
/** Keywords whose value maps names (property names, ...) to schemas. */
const MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords only the validator reads, and the extension that publishes each. */
const VALIDATOR_KEYWORDS: Record<string, string> = { errorMessage: 'x-weir-error-message' };

type Node = Record<string, unknown>;
export type SchemaPart = 'request' | 'response';

const isObject = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A copy of one schema of a route for the document: own enumerable keys only, none of the
 * schema library's keys, the validator's as extensions; in a response, each `$id` marks a
 * component (named by it), in a request part it is dropped.
 */
export function documentSchema(schema: unknown, part: SchemaPart): unknown {
  if (Array.isArray(schema)) return schema.map((s) => documentSchema(s, part));
  if (!isObject(schema)) return schema;
  const out: Node = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith('~')) continue;
    const extension = VALIDATOR_KEYWORDS[key];
    if (extension) {
      out[extension] = value;
    } else if (key === '$id') {
      if (part === 'response' && typeof value === 'string' && !value.startsWith('#')) out[COMPONENT] = value;
    } else if (DATA_KEYWORDS.has(key)) {
      out[key] = value;
    } else if (MAP_KEYWORDS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, documentSchema(s, part)]));
    } else {
      out[key] = documentSchema(value, part);
    }
  }
  return out;
}

const ROUTE_PARTS: Record<string, SchemaPart> = {
  body: 'request',
  querystring: 'request',
  params: 'request',
  headers: 'request',
};

/** A route's schema for the document: each part through documentSchema. */
export function documentRouteSchema<S extends object>(schema: S): S {
  const out: Node = { ...(schema as Node) };
  for (const [key, part] of Object.entries(ROUTE_PARTS)) {
    if (out[key] !== undefined) out[key] = documentSchema(out[key], part);
  }
  const response = out.response;
  if (isObject(response)) {
    out.response = Object.fromEntries(
      Object.entries(response).map(([status, s]) => [status, documentSchema(s, 'response')]),
    );
  }
  return out as S;
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}

/**
 * Replaces every marked schema of the finished document (`node`) by a reference to its
 * component, added to `schemas`. Two different schemas may not share a name: that is a
 * programming error, refused where the document is built (the build's type generation and
 * the tests build it), never published ambiguous.
 */
export function hoistComponents(node: unknown, schemas: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((n) => hoistComponents(n, schemas));
  if (!isObject(node)) return node;
  const out: Node = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = DATA_KEYWORDS.has(key) ? value : hoistComponents(value, schemas);
  }
  const name = out[COMPONENT];
  if (typeof name !== 'string') return out;
  delete out[COMPONENT];
  const existing = schemas[name];
  if (existing !== undefined && canonical(existing) !== canonical(out)) {
    throw new Error(`Two different schemas are named ${name} ($id): give one of them another $id`);
  }
  schemas[name] = out;
  return { $ref: `#/components/schemas/${name}` };
}
