// Microsoft Graph live queries: OData $filter (eq, startswith, and, or; strings single-quoted,
// a quote doubled; nested properties with "/") joined to the window on the stream's time field
// (learn.microsoft.com, "Use the $filter query parameter"; signIn and directoryAudit list
// operations). Graph compares strings case-insensitively: the local filter narrows.
import { NOTHING, nameOf, type LiveQuerySpec, type VendorFilter } from '../query.js';

/** An OData string literal. */
export function odataString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function text(f: VendorFilter, top: boolean): string | null {
  if ('field' in f) {
    const name = nameOf(f.field).replace(/\./g, '/');
    if (f.op === 'eq') return `${name} eq ${odataString(f.value)}`;
    if (f.op === 'prefix') return `startswith(${name}, ${odataString(f.value)})`;
    return null;
  }
  if ('and' in f) {
    // A part Graph cannot say is left out of an AND (the rest still holds).
    const parts = f.and.map((p) => text(p, false)).filter((p): p is string => p !== null);
    if (parts.length === 0) return null;
    return parts.length === 1 ? parts[0]! : top ? parts.join(' and ') : `(${parts.join(' and ')})`;
  }
  const parts = f.or.map((p) => text(p, false));
  if (parts.some((p) => p === null)) return null;
  return `(${parts.join(' or ')})`;
}

export const graphQuery: LiveQuerySpec = {
  // The same records exported by Azure Monitor (diagnostic settings) nest them under `properties`;
  // the Graph API never does, so a mapping's reads there do not fill anything live.
  absent: ['properties'],
  or: true,
  parameter: '$filter (eq, startswith, and, or) joined to the time window',
  streams: {
    signins: [
      { path: 'userPrincipalName', ops: ['eq', 'prefix'] },
      { path: 'userId', ops: ['eq'] },
      { path: 'appDisplayName', ops: ['eq', 'prefix'] },
      { path: 'appId', ops: ['eq'] },
      { path: 'correlationId', ops: ['eq'] },
      { path: 'resourceDisplayName', ops: ['eq'] },
      { path: 'location.city', ops: ['eq', 'prefix'] },
      { path: 'location.countryOrRegion', ops: ['eq'] },
    ],
    directory_audits: [
      { path: 'activityDisplayName', ops: ['eq', 'prefix'] },
      { path: 'loggedByService', ops: ['eq'] },
      { path: 'correlationId', ops: ['eq'] },
      { path: 'category', ops: ['eq'] },
      { path: 'initiatedBy.user.id', ops: ['eq'] },
      { path: 'initiatedBy.user.userPrincipalName', ops: ['eq', 'prefix'] },
      { path: 'initiatedBy.app.appId', ops: ['eq'] },
    ],
    security_alerts: [
      { path: 'serviceSource', ops: ['eq'] },
      { path: 'detectionSource', ops: ['eq'] },
      { path: 'title', ops: ['eq', 'prefix'] },
      { path: 'category', ops: ['eq'] },
    ],
  },
  render(_stream, filter) {
    const t = filter === null ? null : text(filter, true);
    return t === null ? NOTHING : { params: { $filter: t }, text: t };
  },
};
