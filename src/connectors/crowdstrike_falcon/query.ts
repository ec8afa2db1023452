// CrowdStrike Falcon live queries: FQL in the alerts query's `filter` (falcon.crowdstrike.com,
// "Falcon Query Language"): field:'value' an exact match, `+` AND, `,` OR, parentheses; inside
// single quotes a quote or a backslash is escaped with a backslash. Joined to the window on
// updated_timestamp.
import { NOTHING, nameOf, type LiveQuerySpec, type VendorFilter } from '../query.js';

/** An FQL string literal. */
export function fqlString(value: string): string {
  return `'${value.replace(/['\\]/g, (c) => `\\${c}`)}'`;
}

function text(f: VendorFilter, top: boolean): string | null {
  if ('field' in f) return f.op === 'eq' ? `${nameOf(f.field)}:${fqlString(f.value)}` : null;
  if ('and' in f) {
    const parts = f.and.map((p) => text(p, false)).filter((p): p is string => p !== null);
    if (parts.length === 0) return null;
    return parts.length === 1 ? parts[0]! : top ? parts.join('+') : `(${parts.join('+')})`;
  }
  const parts = f.or.map((p) => text(p, false));
  return parts.some((p) => p === null) ? null : `(${parts.join(',')})`;
}

export const falconQuery: LiveQuerySpec = {
  or: true,
  parameter: "filter in FQL (field:'value', + for AND, ',' for OR) joined to the updated_timestamp window",
  streams: {
    alerts: [
      { path: 'composite_id', ops: ['eq'] },
      { path: 'aggregate_id', ops: ['eq'] },
      { path: 'product', ops: ['eq'] },
      { path: 'name', ops: ['eq'] },
      { path: 'objective', ops: ['eq'] },
      { path: 'device.device_id', ops: ['eq'] },
      { path: 'device.hostname', ops: ['eq'] },
      { path: 'user_name', ops: ['eq'] },
      { path: 'filename', ops: ['eq'] },
    ],
  },
  render(_stream, filter) {
    const t = filter === null ? null : text(filter, true);
    return t === null ? NOTHING : { params: { filter: t }, text: t };
  },
};
