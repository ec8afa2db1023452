// The Falcon API calls the connector makes: OAuth2 client credentials (a token per API client
// and, for Flight Control, per child CID), and the two steps of the Alerts API v2: query the
// composite ids with FQL, then fetch the alert entities. Rate limits (X-RateLimit-*, 429 with
// X-RateLimit-RetryAfter) and 5xx retries are the shared HTTP client's.
import { VendorError, configString, type ConnectorContext } from '../sdk.js';
import type { VendorRequest, VendorResponse } from '../http.js';

export const DEFAULT_BASE_URL = 'https://api.crowdstrike.com';
/** Falcon's own cap on ids per entities request. */
export const MAX_IDS_PER_REQUEST = 1000;

interface FalconError {
  code?: number;
  message?: string;
}

interface FalconEnvelope<T> {
  meta?: { pagination?: { offset?: number; limit?: number; total?: number } };
  resources?: T[] | null;
  errors?: FalconError[] | null;
}

export function baseUrl(ctx: ConnectorContext): string {
  const raw = ctx.config.base_url;
  return (typeof raw === 'string' && raw !== '' ? raw : DEFAULT_BASE_URL).replace(/\/+$/, '');
}

/** The child CID collected: a managed-provider child's tenant, else config.member_cid, else the API client's own CID. */
function memberCid(ctx: ConnectorContext): string | undefined {
  if (ctx.tenantId) return ctx.tenantId;
  const v = ctx.config.member_cid;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function tokenKey(ctx: ConnectorContext): string {
  return `falcon:${baseUrl(ctx)}:${configString(ctx.config, 'client_id')}:${memberCid(ctx) ?? ''}`;
}

function errorText(body: FalconEnvelope<unknown>): string {
  const messages = (body.errors ?? []).map((e) => e.message).filter((m): m is string => typeof m === 'string');
  return messages.length ? messages.join('; ').slice(0, 200) : 'no error message';
}

async function issueToken(ctx: ConnectorContext): Promise<{ token: string; expiresInMs: number }> {
  const form = new URLSearchParams({
    client_id: configString(ctx.config, 'client_id'),
    client_secret: configString(ctx.config, 'client_secret'),
  });
  const member = memberCid(ctx);
  if (member) form.set('member_cid', member);
  // 401/403 (wrong client or secret, or a member CID the client may not act for) are raised as auth by the client.
  const res = await ctx.http.request({
    method: 'POST',
    url: `${baseUrl(ctx)}/oauth2/token`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  const body = res.json<{ access_token?: unknown; expires_in?: unknown }>();
  if (typeof body.access_token !== 'string' || body.access_token === '') {
    throw new VendorError(
      'invalid_response',
      `${new URL(baseUrl(ctx)).host}: the OAuth2 token answer has no access_token`,
    );
  }
  const expiresIn = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 1799;
  return { token: body.access_token, expiresInMs: expiresIn * 1000 };
}

/** Forgets the cached token, so the next call proves the credentials afresh (connection tests). */
export function forgetToken(ctx: ConnectorContext): void {
  ctx.tokens.invalidate(tokenKey(ctx));
}

/** An API call with the bearer token; a 401 (expired or revoked token) gets one new token and one retry. */
export async function falconRequest(
  ctx: ConnectorContext,
  req: Omit<VendorRequest, 'url' | 'accept'> & { path: string },
): Promise<VendorResponse> {
  const key = tokenKey(ctx);
  const { path, ...rest } = req;
  for (let attempt = 1; ; attempt++) {
    const token = await ctx.tokens.get(key, () => issueToken(ctx));
    const res = await ctx.http.request({
      ...rest,
      url: `${baseUrl(ctx)}${path}`,
      headers: { ...rest.headers, authorization: `Bearer ${token}` },
      accept: [401],
    });
    if (res.status !== 401) return res;
    ctx.tokens.invalidate(key);
    if (attempt >= 2) {
      throw new VendorError(
        'auth',
        `${new URL(baseUrl(ctx)).host}: HTTP 401 after a new access token (${errorText(safeJson(res))})`,
        { status: 401 },
      );
    }
  }
}

function safeJson(res: VendorResponse): FalconEnvelope<unknown> {
  try {
    return res.json<FalconEnvelope<unknown>>();
  } catch {
    return {};
  }
}

function envelope<T>(res: VendorResponse, what: string): FalconEnvelope<T> & { resources: T[] } {
  const body = res.json<FalconEnvelope<T>>();
  if (typeof body !== 'object' || body === null || (body.resources != null && !Array.isArray(body.resources))) {
    throw new VendorError('invalid_response', `${what}: the answer is not a Falcon envelope`);
  }
  // Falcon answers an empty result with resources: null or [] alike.
  return { ...body, resources: body.resources ?? [] };
}

export interface AlertQuery {
  filter: string;
  sort: string;
  limit: number;
  offset: number;
}

/** GET /alerts/queries/alerts/v2: composite ids in the sort order, and the total matching the filter. */
export async function queryAlertIds(
  ctx: ConnectorContext,
  q: AlertQuery,
): Promise<{ ids: string[]; total: number | undefined }> {
  const res = await falconRequest(ctx, {
    path: '/alerts/queries/alerts/v2',
    query: { filter: q.filter, sort: q.sort, limit: q.limit, offset: q.offset },
  });
  const body = envelope<unknown>(res, 'alerts query');
  if (!body.resources.every((id): id is string => typeof id === 'string'))
    throw new VendorError('invalid_response', 'alerts query: resources are not composite ids');
  const total = body.meta?.pagination?.total;
  return { ids: body.resources, total: typeof total === 'number' ? total : undefined };
}

/** POST /alerts/entities/alerts/v2: the alerts of the given ids (at most 1000 per request). */
export async function alertEntities(ctx: ConnectorContext, ids: string[]): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < ids.length; i += MAX_IDS_PER_REQUEST) {
    const res = await falconRequest(ctx, {
      method: 'POST',
      path: '/alerts/entities/alerts/v2',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ composite_ids: ids.slice(i, i + MAX_IDS_PER_REQUEST) }),
    });
    const body = envelope<unknown>(res, 'alert entities');
    for (const alert of body.resources) {
      if (typeof alert !== 'object' || alert === null || Array.isArray(alert))
        throw new VendorError('invalid_response', 'alert entities: a resource is not an object');
      out.push(alert as Record<string, unknown>);
    }
  }
  return out;
}
