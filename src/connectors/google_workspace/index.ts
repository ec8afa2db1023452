// Google Workspace Admin SDK Reports API (developers.google.com/admin-sdk/reports,
// "activities.list"): GET /admin/reports/v1/activity/users/all/applications/{login|admin}
// ?startTime&endTime&maxResults(<=1000)&pageToken[&customerId], answered
// {kind, items (newest first), nextPageToken}. Auth: a service account acting as a delegated
// admin (auth.ts). Rate limits come as 429, or as 403 with reason rateLimitExceeded.
import type { VendorResponse } from '../http.js';
import { waitFromHeaders } from '../http.js';
import {
  HOUR_MS,
  MINUTE_MS,
  pullConfigSchema,
  urlField,
  VendorError,
  type Connector,
  type ConnectorContext,
  type FetchRequest,
  type Page,
  type StreamSpec,
} from '../sdk.js';
import { googleQuery } from './query.js';
import { configUrl, under } from '../vendor-url.js';
import { accessToken, GOOGLE_TOKEN_URI, invalidateToken } from './auth.js';

export const GOOGLE_API = 'https://admin.googleapis.com';
const MAX_RESULTS = 1000;
const APPLICATIONS = { login: 'Login', admin: 'Admin console' } as const;
type Application = keyof typeof APPLICATIONS;

interface Activity {
  id: { time: string; uniqueQualifier: string; applicationName: string };
  [field: string]: unknown;
}

/** The dedup key: Google's uniqueQualifier is unique only with the time and application. */
export function activityKey(a: Activity): string {
  return `${a.id.uniqueQualifier}|${a.id.time}|${a.id.applicationName}`;
}

const RATE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'quotaExceeded', 'dailyLimitExceeded']);

function reasons(text: string): string[] {
  try {
    const body = JSON.parse(text) as { error?: { errors?: { reason?: unknown }[]; status?: unknown } };
    return [...(body.error?.errors ?? []).map((e) => e.reason), body.error?.status].filter(
      (r): r is string => typeof r === 'string',
    );
  } catch {
    return [];
  }
}

/** One Reports API call with the delegated token; a 401 gets one fresh token, then is auth. */
async function call(
  ctx: ConnectorContext,
  app: Application,
  query: Record<string, string | number | undefined>,
  userKey = 'all',
): Promise<VendorResponse> {
  const base = configUrl(ctx.config, 'base_url', GOOGLE_API);
  const url = under(base, `/admin/reports/v1/activity/users/${encodeURIComponent(userKey)}/applications/${app}`);
  for (let attempt = 1; ; attempt++) {
    const token = await accessToken(ctx);
    const res = await ctx.http.request({
      url,
      query,
      headers: { authorization: `Bearer ${token}` },
      accept: [401, 403],
    });
    if (res.status === 401) {
      invalidateToken(ctx);
      if (attempt < 2) continue;
      throw new VendorError('auth', `${url.host}: the Reports API refused a fresh access token (HTTP 401)`, {
        status: 401,
      });
    }
    if (res.status === 403) {
      const why = reasons(res.text);
      if (why.some((r) => RATE_REASONS.has(r))) {
        const retryAfterMs = waitFromHeaders(res.headers, ctx.now().getTime()) ?? MINUTE_MS;
        throw new VendorError(
          'rate_limited',
          `${url.host}: rate limited (HTTP 403 ${why.join(', ')}), retry in ${Math.ceil(retryAfterMs / 1000)} s`,
          { status: 403, retryAfterMs },
        );
      }
      throw new VendorError(
        'auth',
        `${url.host}: HTTP 403: config.subject may not read the ${APPLICATIONS[app]} audit report (it must be an admin with Reports access)`,
        { status: 403 },
      );
    }
    return res;
  }
}

function activities(res: VendorResponse, host: string): { items: Activity[]; nextPageToken: string | null } {
  const body = res.json<{ kind?: unknown; items?: unknown; nextPageToken?: unknown }>();
  if (typeof body !== 'object' || body === null || body.kind !== 'admin#reports#activities') {
    throw new VendorError('invalid_response', `${host}: the answer is not an admin#reports#activities list`);
  }
  const items = body.items ?? [];
  if (!Array.isArray(items)) throw new VendorError('invalid_response', `${host}: items is not an array`);
  for (const item of items) {
    const id = (item as Partial<Activity> | null)?.id;
    if (
      typeof id !== 'object' ||
      id === null ||
      typeof id.time !== 'string' ||
      Number.isNaN(Date.parse(id.time)) ||
      typeof id.uniqueQualifier !== 'string' ||
      typeof id.applicationName !== 'string'
    ) {
      throw new VendorError(
        'invalid_response',
        `${host}: an activity has no id.time, id.uniqueQualifier or id.applicationName`,
      );
    }
  }
  const next = typeof body.nextPageToken === 'string' && body.nextPageToken !== '' ? body.nextPageToken : null;
  return { items: items as Activity[], nextPageToken: next };
}

function customer(ctx: ConnectorContext): string | undefined {
  const id = ctx.config.customer_id;
  // my_customer is the caller's own account, what the API assumes without the parameter.
  return typeof id === 'string' && id !== '' && id !== 'my_customer' ? id : undefined;
}

async function fetchPage(ctx: ConnectorContext, req: FetchRequest): Promise<Page> {
  if (!(req.stream in APPLICATIONS)) throw new VendorError('config', `google_workspace has no stream ${req.stream}`);
  if (!req.to)
    throw new VendorError('config', `${req.stream} is collected in time windows: the window end is required`);
  const res = await call(
    ctx,
    req.stream as Application,
    {
      startTime: req.from.toISOString(),
      endTime: req.to.toISOString(),
      maxResults: Math.max(1, Math.min(MAX_RESULTS, req.pageSize)),
      pageToken: req.cursor ?? undefined,
      customerId: customer(ctx),
      eventName: req.filter?.eventName,
      filters: req.filter?.filters,
    },
    req.filter?.userKey,
  );
  const { items, nextPageToken } = activities(res, configUrl(ctx.config, 'base_url', GOOGLE_API).host);
  const from = req.from.getTime();
  const to = req.to.getTime();
  // The API's time bounds are not documented as half-open: keep [from, to) exact here.
  const inWindow = items.filter((a) => {
    const t = Date.parse(a.id.time);
    return t >= from && t < to;
  });
  return { events: inWindow, keys: inWindow.map(activityKey), next: items.length === 0 ? null : nextPageToken };
}

function streamSpec(name: Application, description: string): StreamSpec {
  return {
    name,
    display_name: `${APPLICATIONS[name]} audit`,
    description,
    cursor: 'date',
    defaultWindowMs: HOUR_MS,
    intervalMs: 5 * MINUTE_MS,
    retentionDays: 180,
    pageSize: MAX_RESULTS,
    maxWindowMs: 6 * HOUR_MS,
    // Login and Admin console activities are near real time but can take minutes to be listed.
    settleMs: 3 * MINUTE_MS,
  };
}

export const googleWorkspaceConnector: Connector = {
  platform: 'google_workspace',
  display_name: 'Google Workspace',
  vendor: 'Google',
  description:
    'Google Workspace login and Admin console audit activities read from the Admin SDK Reports API with a service account and domain-wide delegation.',
  auth: 'service_account_jwt',
  config_schema: pullConfigSchema(
    {
      client_email: { type: 'string', format: 'email', description: "The service account's client_email" },
      private_key: {
        type: 'string',
        minLength: 1,
        maxLength: 16_384,
        writeOnly: true,
        description: "The service account's private_key (PEM, as in its JSON key file)",
      },
      subject: {
        type: 'string',
        format: 'email',
        description: 'The admin the service account acts as (domain-wide delegation of admin.reports.audit.readonly)',
      },
      customer_id: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        default: 'my_customer',
        description: "The Workspace customer id (my_customer: the subject's own account)",
      },
      base_url: urlField('The Admin SDK API root', GOOGLE_API),
      token_uri: urlField('The OAuth 2.0 token endpoint (token_uri of the key file)', GOOGLE_TOKEN_URI),
    },
    ['client_email', 'private_key', 'subject'],
  ),
  streams: [
    streamSpec(
      'login',
      'Sign-in activities of every user (success, failure, challenges, suspicious logins), keyed by id.uniqueQualifier, time and application.',
    ),
    streamSpec(
      'admin',
      'Admin console activities (user, group, security and settings changes), keyed by id.uniqueQualifier, time and application.',
    ),
  ],
  fetchPage,
  query: googleQuery,
  async test(ctx) {
    const now = ctx.now();
    const res = await call(ctx, 'login', {
      startTime: new Date(now.getTime() - HOUR_MS).toISOString(),
      endTime: now.toISOString(),
      maxResults: 1,
      customerId: customer(ctx),
    });
    activities(res, configUrl(ctx.config, 'base_url', GOOGLE_API).host);
    return `the service account, acting as ${String(ctx.config.subject)}, read the login audit report`;
  },
};
