// What makes findings "the same" for triage (docs/detections.md, Grouping): the same kind (the
// rule, the schedule, or for a vendor finding its title) and the same entity: the rule's group
// (group_by values), else the first of the user, host, source address or resource the finding
// (or, for a rule finding, the event it carries) names. Both are SQL expressions over a
// detections row, so listing, grouping and a group's bulk change agree by construction.
import { sql, type RawBuilder } from 'kysely';
import { errors } from '../../core/errors.js';

/** Where an entity is looked for, in order; the label is the OCSF path a person reads. */
const ENTITY_PATHS: { label: string; path: string[] }[] = [
  { label: 'actor.user.name', path: ['actor', 'user', 'name'] },
  { label: 'user.name', path: ['user', 'name'] },
  { label: 'actor.user.name', path: ['evidences', '0', 'data', 'actor', 'user', 'name'] },
  { label: 'user.name', path: ['evidences', '0', 'data', 'user', 'name'] },
  { label: 'user.name', path: ['evidences', '0', 'user', 'name'] },
  { label: 'device.hostname', path: ['device', 'hostname'] },
  { label: 'device.name', path: ['device', 'name'] },
  { label: 'device.hostname', path: ['evidences', '0', 'data', 'device', 'hostname'] },
  { label: 'src_endpoint.ip', path: ['src_endpoint', 'ip'] },
  { label: 'src_endpoint.ip', path: ['evidences', '0', 'data', 'src_endpoint', 'ip'] },
  { label: 'src_endpoint.ip', path: ['evidences', '0', 'src_endpoint', 'ip'] },
  { label: 'device.ip', path: ['device', 'ip'] },
  { label: 'resources.uid', path: ['resources', '0', 'uid'] },
  { label: 'cloud.account.uid', path: ['cloud', 'account', 'uid'] },
];

const pathLiteral = (p: string[]) => sql.lit(`{${p.join(',')}}`);

/** The entity of a detections row (alias `d` or the table): `field=value`, a rule group's JSON, or ''. */
export function entitySql(table = 'detections'): RawBuilder<string> {
  const finding = sql.ref(`${table}.finding`);
  const parts = [
    sql`case when jsonb_typeof(${finding} #> '{unmapped,weir_group}') = 'object' then (${finding} #> '{unmapped,weir_group}')::text end`,
    ...ENTITY_PATHS.map(
      (e) =>
        sql`case when coalesce(${finding} #>> ${pathLiteral(e.path)}, '') <> '' then ${sql.lit(`${e.label}=`)} || (${finding} #>> ${pathLiteral(e.path)}) end`,
    ),
    sql`''`,
  ];
  return sql<string>`left(coalesce(${sql.join(parts)}), 500)`;
}

/** The kind of a detections row: its rule, its schedule, or its title (vendor findings). */
export function kindSql(table = 'detections'): RawBuilder<string> {
  return sql<string>`coalesce(${sql.ref(`${table}.rule_id`)}, ${sql.ref(`${table}.schedule_id`)}, ${sql.ref(`${table}.title`)})`;
}

/** An entity as a person reads it: `actor.user.name=alice`, a rule group as `field=value, ...`. */
export function entityLabel(entity: string): string {
  if (!entity.startsWith('{')) return entity;
  try {
    return Object.entries(JSON.parse(entity) as Record<string, unknown>)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(', ');
  } catch {
    return entity;
  }
}

export interface GroupKey {
  organization_id: number;
  source: 'vendor' | 'rule' | 'schedule';
  kind: string;
  entity: string;
}

/** A group's key as it travels in URLs and bodies: base64url of its four parts. */
export function encodeGroup(g: GroupKey): string {
  return Buffer.from(JSON.stringify([g.organization_id, g.source, g.kind, g.entity])).toString('base64url');
}

export function decodeGroup(text: string, location: string): GroupKey {
  const bad = () =>
    errors.validation(`${location}: not a detection group key (take it from GET /api/detections/groups)`, {
      errors: [{ location, message: 'not a group key' }],
    });
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parts) || parts.length !== 4) throw bad();
  const [org, source, kind, entity] = parts as unknown[];
  if (
    typeof org !== 'number' ||
    !Number.isInteger(org) ||
    org < 1 ||
    org > 2_147_483_647 ||
    (source !== 'vendor' && source !== 'rule' && source !== 'schedule') ||
    typeof kind !== 'string' ||
    typeof entity !== 'string'
  )
    throw bad();
  return { organization_id: org, source, kind, entity };
}
