// The Parquet schema of an OCSF class for Security Lake objects (docs/destinations-s3.md,
// "Parquet schema"). Built once per class from the OCSF 1.8.0 catalog; each object's schema is
// that class schema pruned to what its batch carries (pruneSchema), so the type of a column
// never depends on the batch and files of one class merge by column name:
//   - objects are Parquet groups (structs), and a column path has at most OBJECT_DEPTH (3)
//     attribute names: `actor` and `actor.user` are structs, so `actor.user.name` is a
//     column; an object on the third level (`actor.user.account`,
//     `actor.process.parent_process`, `metadata.product.feature`) is a string column holding
//     the object's JSON text. OCSF objects are recursive (process.parent_process,
//     user.groups...): the whole class is ~1,500 columns at this depth, 2,000 to 5,000 one
//     level deeper, and the third level is where events rarely carry more than a few values;
//   - arrays are LISTs (three-level, element optional), of scalars or of structs;
//   - scalars: integer_t INT32, long_t INT64, timestamp_t INT64 epoch milliseconds (as in
//     Security Lake's own tables), datetime_t TIMESTAMP(MILLIS, UTC), float_t DOUBLE,
//     boolean_t BOOLEAN, json_t and string types UTF8;
//   - `unmapped` is MAP<string, string>, as in Security Lake's own tables (parquet.ts fills it).
import type { SchemaElement } from 'hyparquet-writer';
import { FREE_OBJECT, ocsfCatalog } from '../../../ocsf/catalog.js';
import type { OcsfAttribute, OcsfCatalog } from '../../../ocsf/types.js';

/** Attribute names in a column path at most; an object at this level is JSON text. */
export const OBJECT_DEPTH = 3;
export const UNMAPPED = 'unmapped';

export type Leaf = 'int32' | 'int64' | 'double' | 'boolean' | 'string' | 'timestamp' | 'json';

export type LakeNode =
  | { readonly kind: 'leaf'; readonly name: string; readonly leaf: Leaf; readonly list: boolean }
  | {
      readonly kind: 'struct';
      readonly name: string;
      readonly children: readonly LakeNode[];
      readonly byName: ReadonlyMap<string, LakeNode>;
      readonly list: boolean;
    }
  | { readonly kind: 'map'; readonly name: string };

export interface LakeSchema {
  /** Top-level columns, in the catalog's order (`unmapped` last when the class lacks it). */
  readonly columns: readonly LakeNode[];
  readonly byName: ReadonlyMap<string, LakeNode>;
  /** The leaves every object keeps, even when no event of its batch has them (ALWAYS). */
  readonly always: ReadonlySet<LakeNode>;
}

/**
 * Kept in every object, null or not: the attributes OCSF requires of every event (base_event:
 * activity_id, category_uid, class_uid, severity_id, time, type_uid, metadata.version,
 * metadata.product) with the product's name and vendor_name, which identify a source in
 * Security Lake. A file of a class thus always has these columns, whatever its batch held.
 */
export const ALWAYS: readonly string[] = [
  'class_uid',
  'category_uid',
  'activity_id',
  'type_uid',
  'severity_id',
  'time',
  'metadata.version',
  'metadata.product.name',
  'metadata.product.vendor_name',
];

function scalarLeaf(catalog: OcsfCatalog, attr: OcsfAttribute): Leaf {
  if (attr.type === 'datetime_t') return 'timestamp';
  if (attr.type === 'json_t') return 'json';
  const base = catalog.type(attr.type)?.base ?? attr.type;
  switch (base) {
    case 'integer_t':
      return 'int32';
    case 'long_t':
      return 'int64';
    case 'float_t':
      return 'double';
    case 'boolean_t':
      return 'boolean';
    default:
      return 'string';
  }
}

function attributeNode(catalog: OcsfCatalog, attr: OcsfAttribute, level: number): LakeNode {
  if (attr.type !== 'object_t')
    return { kind: 'leaf', name: attr.name, leaf: scalarLeaf(catalog, attr), list: attr.isArray };
  const def = attr.objectType === FREE_OBJECT ? undefined : catalog.object(attr.objectType ?? '');
  // A free-form object, or one level too deep: the value (object or array) as JSON text.
  if (!def || level >= OBJECT_DEPTH) return { kind: 'leaf', name: attr.name, leaf: 'json', list: false };
  return structNode(
    attr.name,
    Object.values(def.attributes).map((a) => attributeNode(catalog, a, level + 1)),
    attr.isArray,
  );
}

function structNode(name: string, children: LakeNode[], list: boolean): LakeNode {
  return Object.freeze({
    kind: 'struct',
    name,
    children: Object.freeze(children),
    byName: new Map(children.map((c) => [c.name, c])),
    list,
  });
}

const STRING = { type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } } as const;

function leafType(leaf: Leaf): Omit<SchemaElement, 'name'> {
  switch (leaf) {
    case 'int32':
      return { type: 'INT32' };
    case 'int64':
      return { type: 'INT64' };
    case 'double':
      return { type: 'DOUBLE' };
    case 'boolean':
      return { type: 'BOOLEAN' };
    case 'timestamp':
      return {
        type: 'INT64',
        converted_type: 'TIMESTAMP_MILLIS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
      };
    default:
      return STRING;
  }
}

/** The node's elements, depth first (Parquet's flattened schema order). */
function elementsOf(node: LakeNode, out: SchemaElement[]): void {
  if (node.kind === 'map') {
    out.push(
      {
        name: node.name,
        repetition_type: 'OPTIONAL',
        converted_type: 'MAP',
        logical_type: { type: 'MAP' },
        num_children: 1,
      },
      { name: 'key_value', repetition_type: 'REPEATED', num_children: 2 },
      { name: 'key', repetition_type: 'REQUIRED', ...STRING },
      { name: 'value', repetition_type: 'OPTIONAL', ...STRING },
    );
    return;
  }
  let name = node.name;
  if (node.list) {
    out.push(
      {
        name,
        repetition_type: 'OPTIONAL',
        converted_type: 'LIST',
        logical_type: { type: 'LIST' },
        num_children: 1,
      },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    );
    name = 'element';
  }
  if (node.kind === 'leaf') {
    out.push({ name, repetition_type: 'OPTIONAL', ...leafType(node.leaf) });
    return;
  }
  out.push({ name, repetition_type: 'OPTIONAL', num_children: node.children.length });
  for (const c of node.children) elementsOf(c, out);
}

function nodeAt(columns: ReadonlyMap<string, LakeNode>, path: string): LakeNode | undefined {
  let node: LakeNode | undefined;
  let names: ReadonlyMap<string, LakeNode> | undefined = columns;
  for (const name of path.split('.')) {
    node = names?.get(name);
    names = node?.kind === 'struct' ? node.byName : undefined;
  }
  return node?.kind === 'leaf' ? node : undefined;
}

export function lakeSchema(columns: LakeNode[]): LakeSchema {
  if (!columns.some((c) => c.name === UNMAPPED)) columns.push({ kind: 'map', name: UNMAPPED });
  const byName = new Map(columns.map((c) => [c.name, c]));
  const always = new Set(ALWAYS.map((p) => nodeAt(byName, p)).filter((n): n is LakeNode => n !== undefined));
  return Object.freeze({ columns: Object.freeze(columns), byName, always });
}

/** The node with only the leaves in `keep` (and the structs and lists above them), or null. */
function pruneNode(node: LakeNode, keep: ReadonlySet<LakeNode>): LakeNode | null {
  if (node.kind !== 'struct') return keep.has(node) ? node : null;
  const children: LakeNode[] = [];
  for (const c of node.children) {
    const p = pruneNode(c, keep);
    if (p) children.push(p);
  }
  if (children.length === node.children.length) return node;
  return children.length > 0 ? structNode(node.name, children, node.list) : null;
}

/**
 * The Parquet schema of one object: the schema's columns pruned to the leaves in `used` (those
 * a value of the batch went to) and the ALWAYS leaves, every kept node typed as in the class
 * schema; flattened (root first) as hyparquet-writer takes it.
 */
export function pruneSchema(
  schema: LakeSchema,
  used: ReadonlySet<LakeNode>,
): { columns: LakeNode[]; elements: SchemaElement[] } {
  const keep = new Set([...used, ...schema.always]);
  const columns: LakeNode[] = [];
  for (const c of schema.columns) {
    const p = pruneNode(c, keep);
    if (p) columns.push(p);
  }
  const elements: SchemaElement[] = [{ name: 'root', num_children: columns.length }];
  for (const c of columns) elementsOf(c, elements);
  return { columns, elements };
}

const cache = new Map<number, LakeSchema | null>();

/** The schema of a class the catalog knows, or null. Built once per class. */
export function classSchema(classUid: number, catalog: OcsfCatalog = ocsfCatalog()): LakeSchema | null {
  const cached = catalog === ocsfCatalog() ? cache.get(classUid) : undefined;
  if (cached !== undefined) return cached;
  const def = catalog.classByUid(classUid);
  const schema = def
    ? lakeSchema(
        Object.values(def.attributes).map((a) =>
          a.name === UNMAPPED ? { kind: 'map', name: UNMAPPED } : attributeNode(catalog, a, 1),
        ),
      )
    : null;
  if (catalog === ocsfCatalog()) cache.set(classUid, schema);
  return schema;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function valueLeaf(v: unknown): Leaf {
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isSafeInteger(v) ? 'int64' : 'double';
  return 'json';
}

/**
 * The schema of a class the catalog does not know, from the events' top-level values (sorted
 * by name): scalars typed, objects and arrays as JSON text, a column whose values disagree as
 * JSON text too (integers and decimals together are DOUBLE).
 */
export function inferSchema(events: readonly Record<string, unknown>[]): LakeSchema {
  const kinds = new Map<string, Leaf>();
  for (const e of events) {
    if (!isPlainObject(e)) continue;
    for (const [name, v] of Object.entries(e)) {
      if (v === null || v === undefined || name === UNMAPPED) continue;
      const k = valueLeaf(v);
      const seen = kinds.get(name);
      if (seen === undefined || seen === k) kinds.set(name, k);
      else
        kinds.set(
          name,
          (seen === 'int64' || seen === 'double') && (k === 'int64' || k === 'double') ? 'double' : 'json',
        );
    }
  }
  const names = [...kinds.keys()].sort();
  return lakeSchema(names.map((name) => ({ kind: 'leaf', name, leaf: kinds.get(name)!, list: false })));
}
