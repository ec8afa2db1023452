// The evidence a person reads (docs/detections.md, Evidence): for each evidence event, the
// values of the fields that matter (the rule's condition and group_by fields first, then the
// actor, addresses, host, process, file and resources a finding names), read from the event as
// the event store keeps it, else from what the finding carries (a vendor finding is its own
// event; a rule finding carries its first event whole).
import type { Condition } from '../../pipeline/conditions/types.js';

/** OCSF paths worth showing when a finding names them; `[*]` walks a list. */
export const EVIDENCE_FIELDS = [
  'actor.user.name',
  'actor.user.uid',
  'actor.user.email_addr',
  'user.name',
  'user.uid',
  'src_endpoint.ip',
  'src_endpoint.hostname',
  'src_endpoint.port',
  'dst_endpoint.ip',
  'dst_endpoint.hostname',
  'dst_endpoint.port',
  'device.hostname',
  'device.ip',
  'actor.process.name',
  'actor.process.cmd_line',
  'process.name',
  'process.pid',
  'process.cmd_line',
  'process.file.path',
  'process.parent_process.name',
  'file.name',
  'file.path',
  'file.hashes[*].value',
  'query.hostname',
  'http_request.url.url_string',
  'api.operation',
  'cloud.account.uid',
  'resources[*].uid',
  'evidences[*].user.name',
  'evidences[*].src_endpoint.ip',
  'evidences[*].dst_endpoint.hostname',
  'evidences[*].process.name',
  'evidences[*].process.cmd_line',
  'evidences[*].file.name',
  'evidences[*].file.path',
];

const MAX_VALUES = 20;

/** The fields a condition names (envelope.* aside), in order of appearance. */
export function conditionFields(c: Condition | null | undefined, out: string[] = []): string[] {
  if (!c || typeof c !== 'object') return out;
  if ('all' in c) for (const x of c.all) conditionFields(x, out);
  else if ('any' in c) for (const x of c.any) conditionFields(x, out);
  else if ('not' in c) conditionFields(c.not, out);
  else if (typeof c.field === 'string' && !c.field.startsWith('envelope.') && !out.includes(c.field)) out.push(c.field);
  return out;
}

function walk(value: unknown, parts: string[], out: unknown[]): void {
  if (value === undefined || value === null) return;
  if (parts.length === 0) {
    if (Array.isArray(value)) for (const v of value) walk(v, [], out);
    else out.push(value);
    return;
  }
  const [head, ...rest] = parts as [string, ...string[]];
  const many = head.endsWith('[*]');
  const key = many ? head.slice(0, -3) : head;
  const next = (value as Record<string, unknown>)[key];
  if (many) {
    if (Array.isArray(next)) for (const v of next) walk(v, rest, out);
    return;
  }
  walk(next, rest, out);
}

function text(v: unknown): string | undefined {
  if (typeof v === 'string') return v === '' ? undefined : v.slice(0, 500);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** The values of a path in an event, as text (objects left out). */
export function valuesAt(event: Record<string, unknown>, path: string): string[] {
  const found: unknown[] = [];
  walk(event, path.split('.'), found);
  return [...new Set(found.map(text).filter((v): v is string => v !== undefined))].slice(0, MAX_VALUES);
}

export interface EvidenceEvent {
  event_id: string;
  time: string | null;
  /** Where the fields were read: the event store, or the finding (the store no longer has it). */
  from: 'event_store' | 'finding' | 'none';
  fields: { field: string; value: string }[];
}

export interface Evidence {
  fields: { field: string; values: string[] }[];
  events: EvidenceEvent[];
}

/** The evidence of a detection from its events (those not found: null). */
export function evidenceOf(
  ids: string[],
  found: Map<string, { time: string | null; event: Record<string, unknown>; from: 'event_store' | 'finding' }>,
  fields: string[],
): Evidence {
  const summary = new Map<string, Set<string>>(fields.map((f) => [f, new Set()]));
  const events: EvidenceEvent[] = ids.map((id) => {
    const e = found.get(id);
    if (!e) return { event_id: id, time: null, from: 'none', fields: [] };
    const pairs: { field: string; value: string }[] = [];
    for (const f of fields)
      for (const value of valuesAt(e.event, f)) {
        pairs.push({ field: f, value });
        const s = summary.get(f)!;
        if (s.size < MAX_VALUES) s.add(value);
      }
    return { event_id: id, time: e.time, from: e.from, fields: pairs };
  });
  return {
    fields: [...summary].filter(([, v]) => v.size > 0).map(([field, v]) => ({ field, values: [...v] })),
    events,
  };
}
