// Google's OAuth 2.0 token endpoint for service accounts and the Admin SDK Reports API, as
// Google documents them ("Using OAuth 2.0 for Server to Server Applications",
// "Reports API: activities.list", "Admin SDK error codes"):
//   POST /token  grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<RS256 JWT>
//     The JWT's signature is checked with the service account's public key, then iss
//     (client_email), aud (this token URI), scope (admin.reports.audit.readonly) and the
//     lifetime (exp - iat <= 1 h). Answers {access_token, expires_in, token_type} or 400
//     {error: invalid_grant | unsupported_grant_type, error_description}, 401 unauthorized_client.
//   GET /admin/reports/v1/activity/users/{all|email}/applications/{app}
//     ?startTime&endTime (RFC 3339, both inclusive)&maxResults (1-1000)&pageToken&customerId
//     -> {kind: "admin#reports#activities", etag, items (newest first, omitted when none), nextPageToken}
//     401 for a missing, unknown or expired token; 403 when the delegated subject is not the
//     admin; 429 RESOURCE_EXHAUSTED (with Retry-After) and 500/503 on injected faults.
// Activities are clones of src/connectors/google_workspace/fixtures/<app>.json with a fresh
// id.uniqueQualifier and id.time. Vendor ids are "<uniqueQualifier>|<time>|<application>".
import { generateKeyPairSync, randomBytes, createPublicKey, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { jwtVerify, errors as joseErrors } from 'jose';
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
  readBody,
  sendJson,
  simControl,
  spreadTimes,
  uniqueIds,
  type SimEvent,
} from './sim-kit.js';

export interface GoogleWorkspaceSimulatorOptions {
  clientEmail?: string;
  /** The admin the service account may act as. */
  subject?: string;
  customerId?: string;
  /** The service account's key pair (PEM); generated when absent. */
  privateKeyPem?: string;
  publicKeyPem?: string;
  tokenTtlSeconds?: number;
}

export interface GoogleWorkspaceSimulator extends VendorSimulator, FilteringSimulator {
  readonly privateKeyPem: string;
  /** Token requests answered so far. */
  readonly tokenRequests: number;
  /** The next `count` data requests answer 403 rateLimitExceeded (Admin SDK's other form of a rate limit). */
  rateLimit403(count: number): void;
}

const STREAMS = ['login', 'admin'] as const;
const SCOPE = 'https://www.googleapis.com/auth/admin.reports.audit.readonly';
const KNOWN_APPS = new Set([
  'access_transparency',
  'admin',
  'calendar',
  'chat',
  'chrome',
  'context_aware_access',
  'data_studio',
  'drive',
  'gcp',
  'groups',
  'groups_enterprise',
  'jamboard',
  'keep',
  'login',
  'meet',
  'mobile',
  'rules',
  'saml',
  'token',
  'user_accounts',
]);
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

function apiError(
  res: ServerResponse,
  code: number,
  status: string,
  message: string,
  reason: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, code, { error: { code, message, errors: [{ message, domain: 'global', reason }], status } }, headers);
}

export async function startGoogleWorkspaceSimulator(
  options: GoogleWorkspaceSimulatorOptions = {},
): Promise<GoogleWorkspaceSimulator> {
  const clientEmail = options.clientEmail ?? 'weir-reports@example-project.iam.gserviceaccount.com';
  const subject = options.subject ?? 'it.admin@example.com';
  const customerId = options.customerId ?? 'C03az79cb';
  const ttl = options.tokenTtlSeconds ?? 3599;
  let privateKeyPem = options.privateKeyPem;
  let publicKey: KeyObject;
  if (options.publicKeyPem) publicKey = createPublicKey(options.publicKeyPem);
  else if (privateKeyPem) publicKey = createPublicKey(privateKeyPem);
  else {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    privateKeyPem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    publicKey = pair.publicKey;
  }
  const logs = { login: new EventLog(), admin: new EventLog() };
  const templates = {
    login: loadFixtures('google_workspace', 'login'),
    admin: loadFixtures('google_workspace', 'admin'),
  };
  const faults = new Faults();
  let forbidden = 0;
  const tokens = new Map<string, { sub: string | undefined; expiresAt: number; revoked: boolean }>();
  const newQualifier = uniqueIds(() => BigInt.asIntN(64, randomBytes(8).readBigUInt64BE()).toString());
  let requests = 0;
  const seenFilters: string[] = [];
  let tokenRequests = 0;
  let tokenUri = '';

  async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    tokenRequests += 1;
    const form = new URLSearchParams(await readBody(req));
    const grant = (description: string) =>
      sendJson(res, 400, { error: 'invalid_grant', error_description: description });
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      return sendJson(res, 400, {
        error: 'unsupported_grant_type',
        error_description: `Invalid grant_type: ${form.get('grant_type') ?? ''}`,
      });
    }
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(form.get('assertion') ?? '', publicKey, { algorithms: ['RS256'] }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired)
        return grant(
          'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
        );
      return grant('Invalid JWT Signature.');
    }
    if (claims.iss !== clientEmail) return grant('Invalid grant: account not found');
    if (claims.aud !== tokenUri) return grant('Invalid JWT: Failed audience check. The expected value was ' + tokenUri);
    const now = Math.floor(Date.now() / 1000);
    if (
      typeof claims.iat !== 'number' ||
      typeof claims.exp !== 'number' ||
      claims.exp - claims.iat > 3600 ||
      claims.iat > now + 300
    ) {
      return grant(
        'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
      );
    }
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
    if (
      !scopes.includes(SCOPE) ||
      scopes.some((s) => s !== SCOPE && s !== 'https://www.googleapis.com/auth/admin.reports.usage.readonly')
    ) {
      return sendJson(res, 401, {
        error: 'unauthorized_client',
        error_description:
          'Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.',
      });
    }
    const accessToken = `ya29.${randomBytes(48).toString('base64url')}`;
    tokens.set(accessToken, { sub: claims.sub, expiresAt: Date.now() + ttl * 1000, revoked: false });
    sendJson(res, 200, { access_token: accessToken, expires_in: ttl, token_type: 'Bearer' });
  }

  function activities(req: IncomingMessage, res: ServerResponse, url: URL, userKey: string, app: string): void {
    requests += 1;
    const bearer = /^Bearer\s+(\S+)$/i.exec(header(req, 'authorization') ?? '')?.[1];
    const grant = bearer ? tokens.get(bearer) : undefined;
    if (!grant || grant.revoked || grant.expiresAt <= Date.now()) {
      return apiError(
        res,
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
        'authError',
        {
          'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"',
        },
      );
    }
    if (grant.sub !== subject)
      return apiError(res, 403, 'PERMISSION_DENIED', 'Not Authorized to access this resource/api', 'forbidden');
    if (forbidden > 0) {
      forbidden -= 1;
      return apiError(res, 403, 'PERMISSION_DENIED', 'Rate Limit Exceeded', 'rateLimitExceeded');
    }
    const fault = faults.next();
    if (fault?.kind === 'rate_limit') {
      return apiError(
        res,
        429,
        'RESOURCE_EXHAUSTED',
        "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user'.",
        'rateLimitExceeded',
        { 'retry-after': String(fault.seconds) },
      );
    }
    if (fault?.kind === 'server_error') {
      return fault.status === 500
        ? apiError(res, 500, 'INTERNAL', 'Internal error encountered.', 'backendError')
        : apiError(res, 503, 'UNAVAILABLE', 'The service is currently unavailable.', 'backendError');
    }
    if (!KNOWN_APPS.has(app))
      return apiError(
        res,
        400,
        'INVALID_ARGUMENT',
        `Invalid value '${app}'. Values must match the following regular expression: '(access_transparency)|(admin)|...'`,
        'invalid',
      );
    const q = url.searchParams;
    const bad = (message: string) => apiError(res, 400, 'INVALID_ARGUMENT', message, 'invalid');
    const customer = q.get('customerId');
    if (customer !== null && customer !== customerId)
      return apiError(res, 403, 'PERMISSION_DENIED', 'Not Authorized to access this resource/api', 'forbidden');
    const start = q.get('startTime');
    const end = q.get('endTime');
    for (const v of [start, end])
      if (v !== null && (!RFC3339.test(v) || Number.isNaN(Date.parse(v))))
        return bad(`Invalid value '${v}'. Values must match the RFC 3339 format.`);
    const lower = start === null ? -Infinity : Date.parse(start);
    const upper = end === null ? Date.now() : Date.parse(end);
    if (lower > upper) return bad('Start time must be less than or equal to the end time.');
    const maxRaw = q.get('maxResults') ?? '1000';
    if (!/^\d+$/.test(maxRaw) || Number(maxRaw) < 1 || Number(maxRaw) > 1000)
      return bad(`Invalid value '${maxRaw}'. Values must be within the range: [1, 1000]`);
    const tokenRaw = q.get('pageToken');
    const position = tokenRaw ? decodeCursor(tokenRaw) : null;
    if (tokenRaw && (!position || position.length < 2 || !/^\d+$/.test(position[0]!))) return bad('Invalid pageToken');
    const pos: SimEvent | null = position
      ? { timeMs: Number(position[0]), id: position.slice(1).join('|'), raw: {} }
      : null;
    const eventName = q.get('eventName');
    const filterRaw = q.get('filters');
    const seen = [
      userKey === 'all' ? '' : `userKey=${userKey}`,
      eventName === null ? '' : `eventName=${eventName}`,
      filterRaw === null ? '' : `filters=${filterRaw}`,
    ]
      .filter(Boolean)
      .join(' ');
    if (seen !== '') seenFilters.push(seen);
    const params: [string, string][] = [];
    for (const f of filterRaw === null ? [] : filterRaw.split(',')) {
      const m = /^(\w+)==(.*)$/.exec(f);
      if (!m) return bad(`Invalid value '${filterRaw}' for filters`);
      params.push([m[1]!, m[2]!]);
    }
    // An activity matches when one of its events has the name and every parameter asked.
    const eventMatches = (raw: Record<string, unknown>) =>
      ((raw.events ?? []) as { name?: string; parameters?: { name?: string; value?: unknown }[] }[]).some(
        (ev) =>
          (eventName === null || ev.name === eventName) &&
          params.every(([k, v]) => (ev.parameters ?? []).some((p) => p.name === k && String(p.value) === v)),
      );
    const stream = app === 'login' || app === 'admin' ? logs[app] : null;
    const matching = (stream?.all() ?? [])
      .filter((e) => e.timeMs >= lower && e.timeMs <= upper)
      .filter((e) => userKey === 'all' || (e.raw.actor as { email?: string } | undefined)?.email === userKey)
      .filter((e) => (eventName === null && params.length === 0) || eventMatches(e.raw))
      .reverse()
      .filter((e) => !pos || EventLog.compare(e, pos) < 0);
    const page = matching.slice(0, Number(maxRaw));
    const last = page[page.length - 1];
    sendJson(res, 200, {
      kind: 'admin#reports#activities',
      etag: `"${randomBytes(12).toString('base64url')}"`,
      ...(page.length ? { items: page.map((e) => e.raw) } : {}),
      ...(last && matching.length > page.length ? { nextPageToken: encodeCursor(last.timeMs, last.id) } : {}),
    });
  }

  let closed = false;
  const server = await listen(async (req, res, url) => {
    if (simControl(sim, STREAMS, req, res, url)) return;
    if (url.pathname === '/token' && req.method === 'POST') return token(req, res);
    const m = /^\/admin\/reports\/v1\/activity\/users\/([^/]+)\/applications\/([^/]+)$/.exec(url.pathname);
    if (m && req.method === 'GET')
      return activities(req, res, url, decodeURIComponent(m[1]!), decodeURIComponent(m[2]!));
    apiError(res, 404, 'NOT_FOUND', `The requested URL ${url.pathname} was not found on this server.`, 'notFound');
  });
  tokenUri = `${server.url}/token`;

  function streamLog(stream: string): EventLog {
    if (stream !== 'login' && stream !== 'admin') throw new Error(`google_workspace simulator: no stream ${stream}`);
    return logs[stream];
  }

  const sim: GoogleWorkspaceSimulator = {
    url: server.url,
    platform: 'google_workspace',
    privateKeyPem: privateKeyPem ?? '',
    config: () => ({
      collect: true,
      client_email: clientEmail,
      private_key: privateKeyPem,
      subject,
      customer_id: customerId,
      base_url: server.url,
      token_uri: tokenUri,
    }),
    addEvents: (stream, n, window) => sim.addPatched(stream, n, window ?? defaultWindow(), () => undefined),
    filters: seenFilters,
    addPatched(stream: string, n: number, window: { from: Date; to: Date }, patch: EventPatch) {
      const log = streamLog(stream);
      const pool = templates[stream as 'login' | 'admin'];
      return spreadTimes(n, window).map((timeMs, i) => {
        const raw = structuredClone(pool[i % pool.length]!);
        patch(raw, i);
        const time = new Date(timeMs).toISOString();
        raw.id = { time, uniqueQualifier: newQualifier(), applicationName: stream, customerId };
        raw.etag = `"${randomBytes(12).toString('base64url')}"`;
        const id = `${(raw.id as { uniqueQualifier: string }).uniqueQualifier}|${time}|${stream}`;
        log.add({ id, timeMs, raw });
        return id;
      });
    },
    eventIds: (stream) => streamLog(stream).ids(),
    rateLimit: (count, seconds) => faults.rateLimit(count, seconds),
    serverError: (count) => faults.serverError(count),
    rateLimit403(count) {
      forbidden = count;
    },
    expireTokens() {
      for (const t of tokens.values()) t.revoked = true;
    },
    get requests() {
      return requests;
    },
    get tokenRequests() {
      return tokenRequests;
    },
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
    },
  };
  return sim;
}
