// The GitHub audit-log REST API as GitHub documents it (docs.github.com, "Get the audit log
// for an organization / an enterprise", "Searching the audit log", "Rate limits for the REST API"):
//   GET /orgs/{org}/audit-log, /organizations/{org_id}/audit-log (the form of its next links),
//   GET /enterprises/{enterprise}/audit-log
//   ?phrase (search qualifiers: created:>=, >, <=, <, A..B, action:, actor:) &include=web|git|all
//   (default web) &order=asc|desc (default desc) &per_page (default 30, at most 100) &after &before
//   Authorization: Bearer <token> (or `token <token>`); 401 {"message":"Bad credentials"}.
//   Pages are chained by `Link: <...after=<cursor>&before=>; rel="next"`, the cursor being
//   base64("<@timestamp>|<_document_id>"). Every answer carries x-ratelimit-limit/-remaining/
//   -used/-reset/-resource; the primary limit exhausted is 403 with remaining 0; secondary
//   limits are 403 or 429 with retry-after.
// Events are clones of src/connectors/github/fixtures/audit_log.json with a fresh _document_id
// and @timestamp, all in the simulator's org (so both logs serve them).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EventPatch, FilteringSimulator, VendorSimulator } from './types.js';
import {
  decodeCursor,
  defaultWindow,
  encodeCursor,
  EventLog,
  Faults,
  header,
  listen,
  loadFixtures,
  sendJson,
  simControl,
  spreadTimes,
  uniqueIds,
  type SimEvent,
} from './sim-kit.js';

export interface GithubSimulatorOptions {
  token?: string;
  org?: string;
  orgId?: number;
  enterprise?: string;
  /** config() collects the enterprise log instead of the org's. */
  useEnterprise?: boolean;
  /** Primary rate limit per hour (default too high to reach). */
  rateLimitPerHour?: number;
}

export interface GithubSimulator extends VendorSimulator, FilteringSimulator {
  readonly token: string;
  /** The next `count` data requests answer a secondary rate limit: 403 with retry-after. */
  secondaryRateLimit(count: number, retryAfterSeconds: number): void;
}

const STREAMS = ['audit_log'] as const;
const API_VERSIONS = ['2022-11-28', '2026-03-10'];
const DOCS = 'https://docs.github.com/rest/orgs/orgs#get-the-audit-log-for-an-organization';

function ghError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { message, documentation_url: DOCS, status: String(status) }, headers);
}

/** A created: value: [start, end) of the instant or day it names, or null when unreadable. */
function parseCreated(v: string): { start: number; end: number } | null {
  const m = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}(?::\d{2})?)?(Z|[+-]\d{2}:\d{2})?$/.exec(v);
  if (!m) return null;
  const start = Date.parse(`${m[1]}${m[2] ?? 'T00:00:00'}${m[3] ?? 'Z'}`);
  if (Number.isNaN(start)) return null;
  const unit = m[2] ? (m[2].length > 6 ? 1000 : 60_000) : 86_400_000;
  return { start, end: start + unit };
}

type Filter = (e: SimEvent) => boolean;

/** The search phrase as predicates; a string describes what could not be read. */
function parsePhrase(phrase: string): Filter[] | string {
  const filters: Filter[] = [];
  for (const term of phrase.split(/\s+/).filter(Boolean)) {
    const m = /^(-?)([a-z_]+):(.+)$/.exec(term);
    if (!m) return `cannot read search term ${term}`;
    const [, neg, key, value] = m as unknown as [string, string, string, string];
    let f: Filter;
    if (key === 'created') {
      const range = /^(.+)\.\.(.+)$/.exec(value);
      const op = /^(>=|<=|>|<)(.+)$/.exec(value);
      if (range) {
        const a = range[1] === '*' ? { start: -Infinity, end: -Infinity } : parseCreated(range[1]!);
        const b = range[2] === '*' ? { start: Infinity, end: Infinity } : parseCreated(range[2]!);
        if (!a || !b) return `invalid date in ${term}`;
        f = (e) => e.timeMs >= a.start && e.timeMs < b.end;
      } else if (op) {
        const d = parseCreated(op[2]!);
        if (!d) return `invalid date in ${term}`;
        const bound = {
          '>=': (t: number) => t >= d.start,
          '>': (t: number) => t >= d.end,
          '<': (t: number) => t < d.start,
          '<=': (t: number) => t < d.end,
        }[op[1] as '>=' | '>' | '<' | '<='];
        f = (e) => bound(e.timeMs);
      } else {
        const d = parseCreated(value);
        if (!d) return `invalid date in ${term}`;
        f = (e) => e.timeMs >= d.start && e.timeMs < d.end;
      }
    } else if (key === 'action' || key === 'actor') {
      f = (e) =>
        e.raw[key] === value ||
        (key === 'action' && !value.includes('.') && String(e.raw.action).startsWith(`${value}.`));
    } else {
      return `the simulator does not implement the ${key}: qualifier`;
    }
    filters.push(neg ? (e) => !f(e) : f);
  }
  return filters;
}

export async function startGithubSimulator(options: GithubSimulatorOptions = {}): Promise<GithubSimulator> {
  const token = options.token ?? `ghp_${randomBytes(27).toString('base64url')}`;
  const org = options.org ?? 'example-corp';
  const orgId = options.orgId ?? 90412377;
  const enterprise = options.enterprise ?? 'example-enterprise';
  const perHour = options.rateLimitPerHour ?? 1_000_000;
  const log = new EventLog();
  const faults = new Faults();
  const secondary = { count: 0, seconds: 0 };
  const templates = loadFixtures('github', 'audit_log');
  const newId = uniqueIds(() => randomBytes(16).toString('base64url'));
  let requests = 0;
  const seenFilters: string[] = [];
  let hour = { start: 0, used: 0 };

  async function auditLog(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    scope: { org: string | null },
  ): Promise<void> {
    requests += 1;
    const now = Date.now();
    const auth = /^(?:bearer|token)\s+(\S+)$/i.exec(header(req, 'authorization') ?? '');
    if (!auth) return ghError(res, 401, 'Requires authentication');
    if (auth[1] !== token) return ghError(res, 401, 'Bad credentials');
    const version = header(req, 'x-github-api-version');
    if (version !== undefined && !API_VERSIONS.includes(version)) {
      return ghError(
        res,
        400,
        `Unsupported 'X-GitHub-Api-Version' header. Supported versions are: ${API_VERSIONS.join(', ')}`,
      );
    }
    if (now - hour.start >= 3_600_000) hour = { start: now, used: 0 };
    hour.used += 1;
    const reset = Math.ceil((hour.start + 3_600_000) / 1000);
    const limits = {
      'x-ratelimit-limit': String(perHour),
      'x-ratelimit-remaining': String(Math.max(0, perHour - hour.used)),
      'x-ratelimit-used': String(Math.min(perHour, hour.used)),
      'x-ratelimit-reset': String(reset),
      'x-ratelimit-resource': 'core',
      'x-github-api-version-selected': version ?? API_VERSIONS[0]!,
    };
    if (hour.used > perHour)
      return ghError(
        res,
        403,
        `API rate limit exceeded for user. (But here's the good news: Authenticated requests get a higher rate limit.)`,
        limits,
      );
    if (secondary.count > 0) {
      secondary.count -= 1;
      return ghError(
        res,
        403,
        'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
        { ...limits, 'retry-after': String(secondary.seconds) },
      );
    }
    const fault = faults.next();
    if (fault?.kind === 'rate_limit') {
      return ghError(
        res,
        429,
        'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
        { ...limits, 'retry-after': String(fault.seconds) },
      );
    }
    if (fault?.kind === 'server_error')
      return ghError(res, fault.status, fault.status === 500 ? 'Server Error' : 'Service Unavailable');

    const q = url.searchParams;
    const phrase = q.get('phrase') ?? '';
    // The qualifiers beside created: are a live query's filter.
    const extra = phrase.split(/\s+/).filter((term) => term !== '' && !term.startsWith('created:'));
    if (extra.length > 0) seenFilters.push(extra.join(' '));
    const filters = parsePhrase(phrase);
    if (typeof filters === 'string') return ghError(res, 422, `Validation Failed: ${filters}`, limits);
    const include = q.get('include') ?? 'web';
    const order = q.get('order') ?? 'desc';
    const perPageRaw = q.get('per_page') ?? '30';
    if (!['web', 'git', 'all'].includes(include) || !['asc', 'desc'].includes(order) || !/^\d+$/.test(perPageRaw)) {
      return ghError(
        res,
        422,
        'Validation Failed: include must be web, git or all; order asc or desc; per_page a number',
        limits,
      );
    }
    const perPage = Math.min(100, Math.max(1, Number(perPageRaw)));
    const afterRaw = q.get('after') || null;
    const beforeRaw = q.get('before') || null;
    const position = (raw: string | null) => {
      if (raw === null) return null;
      const p = decodeCursor(raw);
      return p && p.length === 2 && /^\d+$/.test(p[0]!)
        ? ({ timeMs: Number(p[0]), id: p[1]!, raw: {} } as SimEvent)
        : undefined;
    };
    const after = position(afterRaw);
    const before = position(beforeRaw);
    if (after === undefined || before === undefined)
      return ghError(res, 422, 'Validation Failed: invalid cursor', limits);

    let matching = log.all().filter((e) => {
      if (scope.org !== null && e.raw.org !== scope.org) return false;
      const git = String(e.raw.action).startsWith('git.');
      if ((include === 'web' && git) || (include === 'git' && !git)) return false;
      return filters.every((f) => f(e));
    });
    if (order === 'desc') matching = [...matching].reverse();
    const beyond = (e: SimEvent, p: SimEvent) =>
      order === 'asc' ? EventLog.compare(e, p) > 0 : EventLog.compare(e, p) < 0;
    if (after) matching = matching.filter((e) => beyond(e, after));
    if (before) matching = matching.filter((e) => beyond(before, e));
    const page = matching.slice(0, perPage);
    const last = page[page.length - 1];
    // Next links of an org log name it by id, as api.github.com does.
    const path = scope.org !== null ? `/organizations/${orgId}/audit-log` : url.pathname;
    const link = (cursor: { after?: string; before?: string }) => {
      const next = new URL(path, `http://${header(req, 'host') ?? '127.0.0.1'}`);
      for (const [k, v] of q) if (k !== 'after' && k !== 'before') next.searchParams.set(k, v);
      next.searchParams.set('after', cursor.after ?? '');
      next.searchParams.set('before', cursor.before ?? '');
      return next.href;
    };
    const links: string[] = [];
    if (last && matching.length > page.length)
      links.push(`<${link({ after: encodeCursor(last.timeMs, last.id) })}>; rel="next"`);
    if (afterRaw || beforeRaw) links.push(`<${link({})}>; rel="first"`);
    sendJson(
      res,
      200,
      page.map((e) => e.raw),
      { ...limits, ...(links.length ? { link: links.join(', ') } : {}) },
    );
  }

  let closed = false;
  const server = await listen(async (req, res, url) => {
    if (simControl(sim, STREAMS, req, res, url)) return;
    const m = /^\/(orgs|organizations|enterprises)\/([^/]+)\/audit-log$/.exec(url.pathname);
    const known =
      m &&
      ((m[1] === 'orgs' && m[2] === org) ||
        (m[1] === 'organizations' && m[2] === String(orgId)) ||
        (m[1] === 'enterprises' && m[2] === enterprise));
    if (!m || !known) return ghError(res, 404, 'Not Found');
    if (req.method !== 'GET') return ghError(res, 404, 'Not Found');
    await auditLog(req, res, url, { org: m[1] === 'enterprises' ? null : org });
  });

  const sim: GithubSimulator = {
    url: server.url,
    platform: 'github',
    token,
    config: () => ({
      collect: true,
      base_url: server.url,
      token,
      ...(options.useEnterprise ? { enterprise } : { org }),
    }),
    addEvents: (stream, n, window) => sim.addPatched(stream, n, window ?? defaultWindow(), () => undefined),
    filters: seenFilters,
    addPatched(stream: string, n: number, window: { from: Date; to: Date }, patch: EventPatch) {
      if (stream !== 'audit_log') throw new Error(`github simulator: no stream ${stream}`);
      return spreadTimes(n, window).map((timeMs, i) => {
        const id = newId();
        const raw = structuredClone(templates[i % templates.length]!);
        patch(raw, i);
        raw._document_id = id;
        raw['@timestamp'] = timeMs;
        raw.created_at = timeMs;
        // Every event belongs to this org, so that what addEvents returns is what config() collects.
        Object.assign(raw, { org, org_id: orgId, business: enterprise });
        log.add({ id, timeMs, raw });
        return id;
      });
    },
    eventIds(stream) {
      if (stream !== 'audit_log') throw new Error(`github simulator: no stream ${stream}`);
      return log.ids();
    },
    rateLimit: (count, seconds) => faults.rateLimit(count, seconds),
    serverError: (count) => faults.serverError(count),
    secondaryRateLimit(count, seconds) {
      secondary.count = count;
      secondary.seconds = seconds;
    },
    expireTokens() {
      // Personal access tokens do not expire during a test.
    },
    get requests() {
      return requests;
    },
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
    },
  };
  return sim;
}
