// Microsoft Graph for a daemon app: OAuth2 client credentials against the Microsoft identity
// platform (POST {login}/{tenant}/oauth2/v2.0/token, scope {graph}/.default), then Graph
// calls with the bearer token. A managed provider's multi-tenant app asks the CUSTOMER
// tenant's token endpoint with its own credentials (GDAP): the token decides whose data
// Graph answers with. Graph answers collections as {value: [...], "@odata.nextLink"}.
import { configString, VendorError, type ConnectorContext } from '../sdk.js';
import { configUrl, isUnder, under } from '../vendor-url.js';

export const DEFAULT_LOGIN_URL = 'https://login.microsoftonline.com';
export const DEFAULT_GRAPH_URL = 'https://graph.microsoft.com';

/** A tenant GUID or a verified domain (contoso.onmicrosoft.com): it becomes a path segment. */
export const TENANT_PATTERN =
  '^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[A-Za-z0-9]([A-Za-z0-9-]{0,62}\\.)+[A-Za-z]{2,63})$';
const TENANT_RE = new RegExp(TENANT_PATTERN);

export interface GraphTarget {
  login: URL;
  graph: URL;
  /** The tenant whose token (and so whose data) is asked for. */
  tenant: string;
  clientId: string;
}

/** Where this call goes: a child collects its customer's tenant, anyone else the configured one. */
export function graphTarget(ctx: ConnectorContext): GraphTarget {
  const tenant = ctx.tenantId ?? configString(ctx.config, 'tenant_id');
  if (!TENANT_RE.test(tenant))
    throw new VendorError('config', 'the tenant id is neither a tenant GUID nor a domain name');
  return {
    login: configUrl(ctx.config, 'login_url', DEFAULT_LOGIN_URL),
    graph: configUrl(ctx.config, 'graph_url', DEFAULT_GRAPH_URL),
    tenant,
    clientId: configString(ctx.config, 'client_id'),
  };
}

interface TokenAnswer {
  access_token?: unknown;
  expires_in?: unknown;
}
interface TokenError {
  error?: unknown;
  error_description?: unknown;
}
interface GraphErrorBody {
  error?: { code?: unknown; message?: unknown };
}

/** The first line of an Entra error (AADSTS code and reason), without its trace and correlation ids. */
function entraReason(body: TokenError): string {
  // Entra appends trace, correlation ids and a timestamp on lines of their own: noise in a status.
  const description =
    typeof body.error_description === 'string' ? body.error_description.split(/\r?\n|\s+Trace ID:/)[0]!.trim() : '';
  const code = typeof body.error === 'string' ? body.error : 'refused';
  return description ? `${code}: ${description.slice(0, 300)}` : code;
}

async function requestToken(ctx: ConnectorContext, t: GraphTarget): Promise<{ token: string; expiresInMs: number }> {
  const url = under(t.login, `/${encodeURIComponent(t.tenant)}/oauth2/v2.0/token`);
  const body = new URLSearchParams({
    client_id: t.clientId,
    client_secret: configString(ctx.config, 'client_secret'),
    // The resource is the Graph of the configured cloud (global, US Gov, China...).
    scope: `${t.graph.origin}/.default`,
    grant_type: 'client_credentials',
  }).toString();
  const res = await ctx.http.request({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
    accept: [400, 401],
  });
  if (res.status === 400 || res.status === 401) {
    throw new VendorError(
      'auth',
      `${t.login.host}: Microsoft Entra ID refused the app credentials for tenant ${t.tenant} (${entraReason(res.json<TokenError>())})`,
      { status: res.status },
    );
  }
  const answer = res.json<TokenAnswer>();
  const expires = Number(answer.expires_in);
  if (
    typeof answer.access_token !== 'string' ||
    answer.access_token === '' ||
    !Number.isFinite(expires) ||
    expires <= 0
  ) {
    throw new VendorError('invalid_response', `${t.login.host}: the token answer has no access_token or expires_in`);
  }
  return { token: answer.access_token, expiresInMs: expires * 1000 };
}

const tokenKey = (t: GraphTarget) => `graph:${t.login.host}:${t.tenant}:${t.clientId}`;

/**
 * GET a Graph URL with the tenant's token. A 401 (the token expired or was revoked before its
 * announced lifetime) gets one fresh token and one retry; a second 401 is an auth failure.
 */
export async function graphGet<T>(ctx: ConnectorContext, t: GraphTarget, url: URL): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const token = await ctx.tokens.get(tokenKey(t), () => requestToken(ctx, t));
    const res = await ctx.http.request({ url, headers: { authorization: `Bearer ${token}` }, accept: [401] });
    if (res.status !== 401) return res.json<T>();
    ctx.tokens.invalidate(tokenKey(t));
    if (attempt >= 2) {
      let reason = 'the access token was refused';
      try {
        const err = res.json<GraphErrorBody>().error;
        if (typeof err?.code === 'string')
          reason = `${err.code}${typeof err.message === 'string' ? `: ${err.message.slice(0, 200)}` : ''}`;
      } catch {
        // A 401 without Graph's error body still is a refusal.
      }
      throw new VendorError('auth', `${url.host}: HTTP 401 (${reason})`, { status: 401 });
    }
  }
}

export interface Collection {
  value: Record<string, unknown>[];
  nextLink: string | null;
}

/** A Graph collection page; its nextLink must stay on the configured Graph. */
export function collection(body: unknown, t: GraphTarget, what: string): Collection {
  const b = body as { value?: unknown; '@odata.nextLink'?: unknown } | null;
  if (typeof b !== 'object' || b === null || !Array.isArray(b.value))
    throw new VendorError('invalid_response', `${t.graph.host}: ${what} did not answer a collection (value[])`);
  for (const item of b.value) {
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new VendorError('invalid_response', `${t.graph.host}: ${what} answered a value that is not an object`);
  }
  const link = b['@odata.nextLink'];
  if (link === undefined || link === null) return { value: b.value as Record<string, unknown>[], nextLink: null };
  let next: URL;
  try {
    next = new URL(String(link));
  } catch {
    throw new VendorError('invalid_response', `${t.graph.host}: ${what} answered a nextLink that is not a URL`);
  }
  // The link is followed with the bearer token: it must not lead anywhere else.
  if (!isUnder(next, t.graph))
    throw new VendorError(
      'invalid_response',
      `${t.graph.host}: ${what} answered a nextLink outside the configured Graph URL (${next.origin})`,
    );
  return { value: b.value as Record<string, unknown>[], nextLink: next.href };
}

/**
 * A URL under the configured Graph with OData query options, spelled as Graph's own examples
 * are ($filter=a%20ge%20b): URLSearchParams would write spaces as "+", which OData does not
 * promise to read as spaces.
 */
export function graphUrl(t: GraphTarget, path: string, query: Record<string, string>): URL {
  const url = under(t.graph, path);
  url.search = Object.entries(query)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');
  return url;
}
