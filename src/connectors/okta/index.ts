// Okta System Log (developer.okta.com, "System Log API"): GET /api/v1/logs with a bounded
// query (since, until) in ascending order, pages chained by Link rel="next" until the window
// is exhausted. Authorization: SSWS <api token>. Rate limits are per endpoint and minute;
// the shared HTTP client reads X-Rate-Limit-Remaining/-Reset and waits or gives up.
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
import { configUrl, isUnder, nextLink, under } from '../vendor-url.js';
import { oktaQuery } from './query.js';

const STREAM = 'system_log';
/** Okta's largest page. */
const MAX_LIMIT = 1000;

interface LogEvent {
  uuid: string;
  published: string;
  [field: string]: unknown;
}

function auth(ctx: ConnectorContext): Record<string, string> {
  return { authorization: `SSWS ${configString(ctx.config, 'api_token')}` };
}

function firstPage(base: URL, from: Date, to: Date, limit: number, filter?: Readonly<Record<string, string>>): URL {
  const url = under(base, '/api/v1/logs');
  if (filter?.filter) url.searchParams.set('filter', filter.filter);
  url.searchParams.set('since', from.toISOString());
  url.searchParams.set('until', to.toISOString());
  url.searchParams.set('limit', String(Math.max(1, Math.min(MAX_LIMIT, limit))));
  url.searchParams.set('sortOrder', 'ASCENDING');
  return url;
}

/**
 * The stored next link, when it still belongs to this org and this window. After a base_url
 * change (or a cursor of another window) the window starts over from its first page: the
 * events already accepted carry the same uuids and are dropped as duplicates.
 */
function resumable(cursor: string | null, base: URL, from: Date, to: Date): URL | null {
  if (!cursor) return null;
  let url: URL;
  try {
    url = new URL(cursor);
  } catch {
    return null;
  }
  const since = Date.parse(url.searchParams.get('since') ?? '');
  const until = Date.parse(url.searchParams.get('until') ?? '');
  return isUnder(url, base) && since === from.getTime() && until === to.getTime() ? url : null;
}

function events(body: unknown, host: string): LogEvent[] {
  if (!Array.isArray(body))
    throw new VendorError('invalid_response', `${host}: /api/v1/logs did not answer an array of log events`);
  for (const e of body) {
    const ev = e as Partial<LogEvent> | null;
    if (
      typeof ev !== 'object' ||
      ev === null ||
      typeof ev.uuid !== 'string' ||
      typeof ev.published !== 'string' ||
      Number.isNaN(Date.parse(ev.published))
    ) {
      throw new VendorError('invalid_response', `${host}: a log event has no uuid or published time`);
    }
  }
  return body as LogEvent[];
}

async function fetchPage(ctx: ConnectorContext, req: FetchRequest): Promise<Page> {
  if (req.stream !== STREAM) throw new VendorError('config', `okta has no stream ${req.stream}`);
  if (!req.to) throw new VendorError('config', `${STREAM} is collected in time windows: the window end is required`);
  const base = configUrl(ctx.config, 'base_url');
  const url =
    resumable(req.cursor, base, req.from, req.to) ?? firstPage(base, req.from, req.to, req.pageSize, req.filter);
  const res = await ctx.http.request({ url, headers: auth(ctx) });
  const page = events(res.json(), base.host);
  const from = req.from.getTime();
  const to = req.to.getTime();
  // Okta bounds by `published` already; the check keeps [from, to) exact whatever its edges.
  const inWindow = page.filter((e) => {
    const t = Date.parse(e.published);
    return t >= from && t < to;
  });
  const next = nextLink(res.header('link'), url, base);
  return {
    events: inWindow,
    keys: inWindow.map((e) => e.uuid),
    // A bounded query has no next link once exhausted; an empty page ends the window too, so
    // a vendor that always links onwards cannot keep a cycle spinning.
    next: page.length === 0 ? null : next,
  };
}

export const oktaConnector: Connector = {
  platform: 'okta',
  display_name: 'Okta',
  vendor: 'Okta',
  description:
    'Okta System Log events (sign-ins, MFA, user lifecycle, admin changes) read from the Okta API with an API token.',
  auth: 'api_token',
  config_schema: pullConfigSchema(
    {
      base_url: urlField('Your Okta org URL, e.g. https://example.okta.com'),
      api_token: {
        type: 'string',
        minLength: 1,
        maxLength: 4096,
        writeOnly: true,
        description: 'An Okta API token (sent as SSWS) of an administrator allowed to read the System Log',
      },
    },
    ['base_url', 'api_token'],
  ),
  streams: [
    {
      name: STREAM,
      display_name: 'System Log',
      description: 'Every event of the Okta System Log (LogEvent objects), keyed by uuid, ordered by published.',
      cursor: 'date',
      defaultWindowMs: HOUR_MS,
      intervalMs: MINUTE_MS,
      retentionDays: 90,
      pageSize: MAX_LIMIT,
      maxWindowMs: 6 * HOUR_MS,
      // Okta's System Log is eventually consistent: events show up within seconds, rarely later.
      settleMs: MINUTE_MS,
    },
  ],
  fetchPage,
  query: oktaQuery,
  async test(ctx) {
    const base = configUrl(ctx.config, 'base_url');
    const now = ctx.now();
    const res = await ctx.http.request({
      url: firstPage(base, new Date(now.getTime() - DAY_MS), now, 1),
      headers: auth(ctx),
    });
    events(res.json(), base.host);
    return `the API token read the System Log of ${base.host}`;
  },
};
