// A SCIM 2.0 client for the one thing the sync needs: every user of the provider
// (RFC 7644 §3.4.2: GET /Users with startIndex/count paging, a ListResponse with
// totalResults, itemsPerPage, startIndex and Resources; RFC 7643 §4.1 User attributes).
import { createRedactor } from '../../core/redaction.js';
import type { GuardedFetch } from './outbound.js';

export interface ScimUser {
  id: string;
  externalId: string | null;
  userName: string;
  active: boolean;
  emails: string[];
  groups: string[];
}

const PAGE = 100;
/** A provider that keeps answering pages is stopped here. */
const MAX_USERS = 100_000;

function parseUser(r: Record<string, unknown>): ScimUser | null {
  if (typeof r.id !== 'string' || typeof r.userName !== 'string') return null;
  const list = (v: unknown) => (Array.isArray(v) ? (v as Record<string, unknown>[]) : []);
  const emails = list(r.emails)
    .sort((a, b) => Number(Boolean(b.primary)) - Number(Boolean(a.primary)))
    .map((e) => e.value)
    .filter((v): v is string => typeof v === 'string');
  const groups = list(r.groups)
    .map((g) => (typeof g.display === 'string' ? g.display : g.value))
    .filter((v): v is string => typeof v === 'string');
  return {
    id: r.id,
    externalId: typeof r.externalId === 'string' ? r.externalId : null,
    userName: r.userName,
    active: r.active !== false,
    emails,
    groups,
  };
}

export async function* scimUsers(
  fetch: GuardedFetch,
  baseUrl: string,
  token: string,
  onTotal: (n: number) => void,
): AsyncGenerator<ScimUser> {
  const base = baseUrl.replace(/\/+$/, '');
  let startIndex = 1;
  let seen = 0;
  for (;;) {
    const url = `${base}/Users?startIndex=${startIndex}&count=${PAGE}`;
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/scim+json, application/json' },
    });
    if (res.status !== 200) {
      const detail = await res.text().then((t) => {
        try {
          return String((JSON.parse(t) as { detail?: unknown }).detail ?? '');
        } catch {
          return '';
        }
      });
      // The provider's text, without the token should it echo the request's Authorization header.
      throw new Error(
        `SCIM GET /Users answered HTTP ${res.status}${detail ? `: ${createRedactor([token])(detail).slice(0, 200)}` : ''}`,
      );
    }
    const body = (await res.json()) as { totalResults?: unknown; Resources?: unknown; itemsPerPage?: unknown };
    const total = typeof body.totalResults === 'number' ? body.totalResults : 0;
    onTotal(total);
    const resources = Array.isArray(body.Resources) ? (body.Resources as Record<string, unknown>[]) : [];
    for (const r of resources) {
      const user = parseUser(r);
      if (user) yield user;
    }
    seen += resources.length;
    startIndex += resources.length;
    if (resources.length === 0 || seen >= total || seen >= MAX_USERS) return;
  }
}
