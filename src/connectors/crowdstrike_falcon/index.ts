// CrowdStrike Falcon connector: the alerts stream from the Alerts API v2, windowed on
// updated_timestamp so an alert that changes (status, assignment, new behaviour) is collected
// again as a new event (key = composite_id@updated_timestamp).
//
// Paging inside a window is keyset, not plain offset: each page asks for
// updated_timestamp >= the last timestamp seen, skipping only the alerts already taken at that
// exact timestamp. Falcon refuses offset + limit beyond 10 000, and an alert updated between two
// pages would shift plain offsets and lose another alert; keyset paging has neither problem and
// at worst fetches a tie twice (the dedup keys drop it).
import {
  DAY_MS,
  HOUR_MS,
  MINUTE_MS,
  VendorError,
  pullConfigSchema,
  urlField,
  type Connector,
  type ConnectorContext,
  type FetchRequest,
  type Page,
} from '../sdk.js';
import { falconQuery } from './query.js';
import { DEFAULT_BASE_URL, MAX_IDS_PER_REQUEST, alertEntities, baseUrl, forgetToken, queryAlertIds } from './client.js';

const STREAM = 'alerts';
const SORT = 'updated_timestamp|asc';
/** Vendor timestamps go into FQL literals: nothing but digits and date punctuation may. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T[0-9:.]+(Z|[+-]\d{2}:?\d{2})$/;

interface PageToken {
  /** Lower bound of the rest of the window (inclusive): the last updated_timestamp taken. */
  since: string;
  /** Alerts at exactly `since` already taken. */
  skip: number;
}

function encodeToken(t: PageToken): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decodeToken(cursor: string): PageToken {
  try {
    const t = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<PageToken>;
    if (typeof t.since === 'string' && TIMESTAMP.test(t.since) && Number.isInteger(t.skip) && (t.skip as number) >= 0)
      return t as PageToken;
  } catch {
    // falls through to the error below
  }
  throw new VendorError('bad_request', 'the stored page token is not one this connector wrote; reset the cursor');
}

function timestampOf(alert: Record<string, unknown>): string {
  const ts = alert.updated_timestamp;
  if (typeof ts !== 'string' || !TIMESTAMP.test(ts) || Number.isNaN(Date.parse(ts))) {
    throw new VendorError('invalid_response', 'alert entities: an alert has no valid updated_timestamp');
  }
  return ts;
}

async function fetchAlerts(ctx: ConnectorContext, req: FetchRequest): Promise<Page> {
  const to = req.to ?? ctx.now();
  const token: PageToken = req.cursor ? decodeToken(req.cursor) : { since: req.from.toISOString(), skip: 0 };
  const limit = Math.min(Math.max(1, Math.floor(req.pageSize)), MAX_IDS_PER_REQUEST);
  const filter = `updated_timestamp:>='${token.since}'+updated_timestamp:<'${to.toISOString()}'${req.filter?.filter ? `+${req.filter.filter}` : ''}`;
  const { ids, total } = await queryAlertIds(ctx, { filter, sort: SORT, limit, offset: token.skip });
  if (ids.length === 0) return { events: [], keys: [], next: null };

  const byId = new Map<string, Record<string, unknown>>();
  for (const alert of await alertEntities(ctx, ids)) {
    if (typeof alert.composite_id !== 'string')
      throw new VendorError('invalid_response', 'alert entities: an alert has no composite_id');
    byId.set(alert.composite_id, alert);
  }
  // The query's order is the window's order; an id gone meanwhile (deleted alert) is skipped.
  const events = ids.map((id) => byId.get(id)).filter((a): a is Record<string, unknown> => a !== undefined);
  const keys = events.map((a) => `${a.composite_id as string}@${timestampOf(a)}`);

  const done = ids.length < limit || (total !== undefined && token.skip + ids.length >= total);
  return { events, keys, next: done ? null : encodeToken(nextToken(token, events, to)) };
}

/**
 * The keyset position after this page. Only alerts still inside the window count: one updated
 * between the query and the entities call carries a later timestamp, and jumping to it would
 * skip the rest of the window.
 */
function nextToken(token: PageToken, events: Record<string, unknown>[], to: Date): PageToken {
  const sinceMs = Date.parse(token.since);
  const inWindow = events.map(timestampOf).filter((ts) => Date.parse(ts) >= sinceMs && Date.parse(ts) < to.getTime());
  const last = inWindow[inWindow.length - 1];
  if (last === undefined) return { since: token.since, skip: token.skip + events.length };
  const ties = inWindow.filter((ts) => ts === last).length;
  return last === token.since ? { since: last, skip: token.skip + ties } : { since: last, skip: ties };
}

export const crowdstrikeFalconConnector: Connector = {
  platform: 'crowdstrike_falcon',
  display_name: 'CrowdStrike Falcon',
  vendor: 'CrowdStrike',
  description: 'Falcon alerts from the Alerts API v2 (OAuth2 API client with the Alerts: Read scope).',
  auth: 'oauth2_client_credentials',
  config_schema: pullConfigSchema(
    {
      base_url: urlField(
        'Falcon API base URL of your cloud: US-1 https://api.crowdstrike.com, US-2 https://api.us-2.crowdstrike.com, ' +
          'EU-1 https://api.eu-1.crowdstrike.com, US-GOV-1 https://api.laggar.gcw.crowdstrike.com, US-GOV-2 https://api.us-gov-2.crowdstrike.mil',
        DEFAULT_BASE_URL,
      ),
      client_id: {
        type: 'string',
        minLength: 1,
        maxLength: 256,
        description: 'API client id (Falcon console, Support and resources > API clients and keys)',
      },
      client_secret: {
        type: 'string',
        minLength: 1,
        maxLength: 256,
        writeOnly: true,
        description: 'API client secret',
      },
      member_cid: {
        type: 'string',
        pattern: '^[0-9a-fA-F]{32}(-[0-9a-fA-F]{2})?$',
        errorMessage: { pattern: 'must be a CID: 32 hexadecimal digits, optionally followed by "-" and 2 more' },
        description: "Flight Control (MSSP): the child CID to collect; empty for the API client's own CID",
      },
    },
    ['client_id', 'client_secret'],
  ),
  streams: [
    {
      name: STREAM,
      display_name: 'Alerts',
      description:
        'Endpoint, identity and cloud alerts (Alerts API v2), by updated_timestamp: each change of an alert is a new event.',
      cursor: 'date',
      defaultWindowMs: HOUR_MS,
      intervalMs: 2 * MINUTE_MS,
      retentionDays: 90,
      pageSize: MAX_IDS_PER_REQUEST,
      maxWindowMs: 6 * HOUR_MS,
      settleMs: 2 * MINUTE_MS,
    },
  ],
  query: falconQuery,
  async fetchPage(ctx, req) {
    if (req.stream !== STREAM) throw new VendorError('config', `crowdstrike_falcon has no stream ${req.stream}`);
    return fetchAlerts(ctx, req);
  },
  async test(ctx) {
    forgetToken(ctx);
    const since = new Date(ctx.now().getTime() - DAY_MS).toISOString();
    const { total } = await queryAlertIds(ctx, {
      filter: `updated_timestamp:>='${since}'`,
      sort: SORT,
      limit: 1,
      offset: 0,
    });
    return `OAuth2 token issued by ${new URL(baseUrl(ctx)).host} and the Alerts API answered (${total ?? 'unknown number of'} alerts updated in the last 24 h)`;
  },
};
