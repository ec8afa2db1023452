// GitHub audit log (docs.github.com, "Get the audit log for an organization / an enterprise"):
// GET /orgs/{org}/audit-log or /enterprises/{enterprise}/audit-log with a search phrase that
// bounds `created`, oldest first, pages chained by Link rel="next" (after=<cursor>).
// Authorization: Bearer <token>, X-GitHub-Api-Version pinned. GitHub answers rate limits with
// 429 or 403: 429 is the shared client's; a 403 that is a rate limit (retry-after, or
// x-ratelimit-remaining 0) is told apart here from a 403 that refuses the token.
import { waitFromHeaders } from '../http.js';
import {
  configString,
  DAY_MS,
  HOUR_MS,
  MINUTE_MS,
  pullConfigSchema,
  urlField,
  VendorError,
  type Connector,
  type ConnectorContext,
  type FetchRequest,
  type Page,
} from '../sdk.js';
import { githubQuery } from './query.js';
import { configUrl, isUnder, nextLink, under } from '../vendor-url.js';
import type { VendorResponse } from '../http.js';

const STREAM = 'audit_log';
const MAX_PER_PAGE = 100;
const API_VERSION = '2022-11-28';
export const GITHUB_API = 'https://api.github.com';

interface AuditEntry {
  _document_id: string;
  '@timestamp': number;
  [field: string]: unknown;
}

function headers(ctx: ConnectorContext): Record<string, string> {
  return {
    authorization: `Bearer ${configString(ctx.config, 'token')}`,
    accept: 'application/vnd.github+json',
    'x-github-api-version': API_VERSION,
  };
}

/** The audit log collected: the enterprise's when configured, else the organization's. */
function target(ctx: ConnectorContext): { path: string; what: string } {
  const enterprise = ctx.config.enterprise;
  if (typeof enterprise === 'string' && enterprise !== '')
    return { path: `/enterprises/${encodeURIComponent(enterprise)}/audit-log`, what: `enterprise ${enterprise}` };
  const org = ctx.config.org;
  if (typeof org === 'string' && org !== '')
    return { path: `/orgs/${encodeURIComponent(org)}/audit-log`, what: `organization ${org}` };
  throw new VendorError('config', 'config.org or config.enterprise is required for collection');
}

/** created: qualifiers are read to the second: widen to whole seconds, then filter exactly by @timestamp. */
function phrase(from: Date, to: Date, extra?: string): string {
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');
  return `created:>=${iso(Math.floor(from.getTime() / 1000) * 1000)} created:<${iso(Math.ceil(to.getTime() / 1000) * 1000)}${extra ? ` ${extra}` : ''}`;
}

function firstPage(base: URL, path: string, from: Date, to: Date, perPage: number, extra?: string): URL {
  const url = under(base, path);
  url.searchParams.set('phrase', phrase(from, to, extra));
  url.searchParams.set('include', 'all');
  url.searchParams.set('order', 'asc');
  url.searchParams.set('per_page', String(Math.max(1, Math.min(MAX_PER_PAGE, perPage))));
  return url;
}

/** A stored next link of this window on this base URL; otherwise the window starts over (keys deduplicate). */
function resumable(cursor: string | null, base: URL, from: Date, to: Date, extra?: string): URL | null {
  if (!cursor) return null;
  try {
    const url = new URL(cursor);
    return isUnder(url, base) && url.searchParams.get('phrase') === phrase(from, to, extra) ? url : null;
  } catch {
    return null;
  }
}

async function get(ctx: ConnectorContext, url: URL, what: string): Promise<VendorResponse> {
  const res = await ctx.http.request({ url, headers: headers(ctx), accept: [403, 404] });
  if (res.status === 404) {
    // GitHub answers 404, not 403, when the token may not see the organization.
    throw new VendorError(
      'config',
      `${url.host}: ${what} not found, or the token may not read its audit log (HTTP 404)`,
      { status: 404 },
    );
  }
  if (res.status === 403) {
    const wait = waitFromHeaders(res.headers, ctx.now().getTime());
    const limited =
      res.header('retry-after') !== undefined ||
      res.header('x-ratelimit-remaining') === '0' ||
      /rate limit/i.test(res.text);
    if (limited) {
      // Without a header GitHub asks for at least a minute before the next try.
      const retryAfterMs = wait ?? MINUTE_MS;
      throw new VendorError(
        'rate_limited',
        `${url.host}: rate limited (HTTP 403), retry in ${Math.ceil(retryAfterMs / 1000)} s`,
        { status: 403, retryAfterMs },
      );
    }
    throw new VendorError(
      'auth',
      `${url.host}: HTTP 403: the token may not read the audit log of ${what} (it needs read:audit_log, and an owner's access)`,
      { status: 403 },
    );
  }
  return res;
}

function entries(body: unknown, host: string): AuditEntry[] {
  if (!Array.isArray(body))
    throw new VendorError('invalid_response', `${host}: the audit log did not answer an array of entries`);
  for (const e of body) {
    const entry = e as Partial<AuditEntry> | null;
    if (
      typeof entry !== 'object' ||
      entry === null ||
      typeof entry._document_id !== 'string' ||
      typeof entry['@timestamp'] !== 'number'
    ) {
      throw new VendorError('invalid_response', `${host}: an audit log entry has no _document_id or @timestamp`);
    }
  }
  return body as AuditEntry[];
}

async function fetchPage(ctx: ConnectorContext, req: FetchRequest): Promise<Page> {
  if (req.stream !== STREAM) throw new VendorError('config', `github has no stream ${req.stream}`);
  if (!req.to) throw new VendorError('config', `${STREAM} is collected in time windows: the window end is required`);
  const base = configUrl(ctx.config, 'base_url', GITHUB_API);
  const { path, what } = target(ctx);
  const url =
    resumable(req.cursor, base, req.from, req.to, req.filter?.phrase) ??
    firstPage(base, path, req.from, req.to, req.pageSize, req.filter?.phrase);
  const res = await get(ctx, url, what);
  const page = entries(res.json(), base.host);
  const from = req.from.getTime();
  const to = req.to.getTime();
  const inWindow = page.filter((e) => e['@timestamp'] >= from && e['@timestamp'] < to);
  const next = nextLink(res.header('link'), url, base);
  return { events: inWindow, keys: inWindow.map((e) => e._document_id), next: page.length === 0 ? null : next };
}

const SLUG = '^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,98}[A-Za-z0-9])?$';

function configSchema() {
  const schema = pullConfigSchema(
    {
      base_url: urlField(
        'The REST API root: https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server',
        GITHUB_API,
      ),
      org: {
        type: 'string',
        pattern: SLUG,
        errorMessage: {
          pattern:
            'must be a slug: letters, digits, "_", "." and "-", starting and ending with a letter or a digit, up to 100 characters',
        },
        description: 'The organization whose audit log is collected (unless enterprise is set)',
      },
      enterprise: {
        type: 'string',
        pattern: SLUG,
        errorMessage: {
          pattern:
            'must be a slug: letters, digits, "_", "." and "-", starting and ending with a letter or a digit, up to 100 characters',
        },
        description: 'The enterprise slug: collects the enterprise audit log (every organization) instead',
      },
      token: {
        type: 'string',
        minLength: 1,
        maxLength: 4096,
        writeOnly: true,
        description:
          'A token of an owner with read:audit_log (classic) or "Administration: read" / enterprise audit log access (fine-grained or GitHub App)',
      },
    },
    ['token'],
  );
  return { ...schema, then: { required: ['token'], anyOf: [{ required: ['org'] }, { required: ['enterprise'] }] } };
}

export const githubConnector: Connector = {
  platform: 'github',
  display_name: 'GitHub',
  vendor: 'GitHub',
  description:
    'GitHub organization or enterprise audit log entries (web and Git events) read from the REST API with a token.',
  auth: 'bearer_token',
  config_schema: configSchema(),
  streams: [
    {
      name: STREAM,
      display_name: 'Audit log',
      description:
        'The organization (or enterprise) audit log, web and Git events, keyed by _document_id, ordered by @timestamp. GitHub keeps 180 days (Git events 7 days).',
      cursor: 'date',
      defaultWindowMs: HOUR_MS,
      intervalMs: 5 * MINUTE_MS,
      retentionDays: 180,
      pageSize: MAX_PER_PAGE,
      maxWindowMs: DAY_MS,
      settleMs: MINUTE_MS,
    },
  ],
  fetchPage,
  query: githubQuery,
  async test(ctx) {
    const base = configUrl(ctx.config, 'base_url', GITHUB_API);
    const { path, what } = target(ctx);
    const now = ctx.now();
    const res = await get(ctx, firstPage(base, path, new Date(now.getTime() - DAY_MS), now, 1), what);
    entries(res.json(), base.host);
    return `the token read the audit log of ${what} on ${base.host}`;
  },
};
