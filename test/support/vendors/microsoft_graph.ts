// Microsoft Graph and the Microsoft identity platform, as documented on learn.microsoft.com:
//   POST /{tenant}/oauth2/v2.0/token  (form: client_id, client_secret, scope=<graph>/.default,
//     grant_type=client_credentials) -> 200 {token_type, expires_in, ext_expires_in, access_token}.
//     Refusals are Entra's {error, error_description "AADSTSnnn: ...", error_codes, trace_id,
//     correlation_id}: unknown tenant 400 invalid_request AADSTS90002, unknown app 400
//     unauthorized_client AADSTS700016, wrong secret 401 invalid_client AADSTS7000215, bad
//     scope 400 invalid_scope AADSTS1002012, other grant 400 unsupported_grant_type AADSTS70003.
//     The simulator is one "cloud": its own origin + /.default is accepted as scope, like
//     https://graph.microsoft.com/.default.
//   GET /v1.0/auditLogs/signIns ($filter on createdDateTime, $top <= 1000, newest first)
//   GET /v1.0/auditLogs/directoryAudits ($filter on activityDateTime, $top <= 1000, newest first)
//       both paged by @odata.nextLink carrying an opaque $skiptoken.
//   GET /v1.0/security/alerts_v2 ($filter on createdDateTime/lastUpdateDateTime, $top <= 2000,
//       paged by @odata.nextLink with $skip)
//   GET /v1.0/tenantRelationships/delegatedAdminCustomers (the partner's GDAP customers,
//       {id, tenantId, displayName}, paged by @odata.nextLink)
// The bearer token decides the tenant whose data is answered: the partner's own, or a
// customer's when the multi-tenant app asked that customer's token endpoint. A missing, unknown
// or expired token is 401 {"error":{"code":"InvalidAuthenticationToken"}}; throttling is 429
// TooManyRequests with Retry-After (seconds); transient failures are 503/504. Events are clones
// of src/connectors/microsoft_graph/fixtures/<stream>.json with new ids and times. For
// security_alerts the ids handed out and listed are the connector's keys (id@lastUpdateDateTime).
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EventPatch, FilteringSimulator, VendorSimulator } from './types.js';
import {
  defaultWindow,
  header,
  listen,
  loadFixtures,
  readBody,
  sendJson,
  simControl,
  spreadTimes,
  uniqueIds,
  type Raw,
  type SimEvent,
} from './sim-kit.js';

export interface GraphCustomer {
  id: string;
  displayName: string;
}

export interface MicrosoftGraphSimulatorOptions {
  /** The app's home tenant (the partner's, for a managed provider). */
  tenantId?: string;
  clientId?: string;
  clientSecret?: string;
  /** GDAP customer tenants: listed by delegatedAdminCustomers, and the app may get tokens in them. */
  customers?: GraphCustomer[];
  tokenTtlSeconds?: number;
  /** Customers per delegatedAdminCustomers page (default 100). */
  customersPageSize?: number;
  /** Delay before each Graph answer, so a test can kill a collector mid-page. */
  latencyMs?: number;
}

type TenantOption = { tenant?: string };

export interface MicrosoftGraphSimulator extends VendorSimulator, FilteringSimulator {
  readonly tenantId: string;
  readonly clientId: string;
  /** Like VendorSimulator.addEvents; `tenant` puts the events in a customer tenant (default: the home tenant). */
  addEvents(
    stream: string,
    n: number,
    window?: { from: Date; to: Date },
    options?: TenantOption & { patch?: EventPatch },
  ): string[];
  eventIds(stream: string, options?: TenantOption): string[];
  setCustomers(customers: GraphCustomer[]): void;
  /** While on, Graph refuses every access token (401), as after the app's consent was revoked. */
  refuseTokens(on: boolean): void;
  /** An analyst changes an alert (status, default inProgress) at `at`: answers its new key. */
  updateAlert(key: string, at: Date, changes?: { status?: string } & TenantOption): string;
  /** Every token request: the tenant asked and whether a token was issued. */
  readonly tokenRequests: { tenant: string; issued: boolean }[];
  /** Graph requests: path, tenant of the token, query. */
  readonly queries: { path: string; tenant: string; params: URLSearchParams }[];
}

const STREAMS = ['signins', 'directory_audits', 'security_alerts'] as const;
type Stream = (typeof STREAMS)[number];

interface Resource {
  stream: Stream | 'customers';
  context: string;
  maxTop: number;
  /** $filter fields. */
  filterable: string[];
  paging: 'skiptoken' | 'skip';
}

const RESOURCES: Record<string, Resource> = {
  '/v1.0/auditLogs/signIns': {
    stream: 'signins',
    context: 'auditLogs/signIns',
    maxTop: 1000,
    filterable: ['createdDateTime'],
    paging: 'skiptoken',
  },
  '/v1.0/auditLogs/directoryAudits': {
    stream: 'directory_audits',
    context: 'auditLogs/directoryAudits',
    maxTop: 1000,
    filterable: ['activityDateTime'],
    paging: 'skiptoken',
  },
  '/v1.0/security/alerts_v2': {
    stream: 'security_alerts',
    context: 'security/alerts_v2',
    maxTop: 2000,
    filterable: ['createdDateTime', 'lastUpdateDateTime'],
    paging: 'skip',
  },
  '/v1.0/tenantRelationships/delegatedAdminCustomers': {
    stream: 'customers',
    context: 'tenantRelationships/delegatedAdminCustomers',
    maxTop: 300,
    filterable: [],
    paging: 'skiptoken',
  },
};

const OPS = {
  eq: (a: number, b: number) => a === b,
  ge: (a: number, b: number) => a >= b,
  gt: (a: number, b: number) => a > b,
  le: (a: number, b: number) => a <= b,
  lt: (a: number, b: number) => a < b,
};
const DATE_LITERAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?(Z|[+-]\d{2}:\d{2})$/;

/** Graph writes DateTimeOffset with seven fraction digits (100 ns ticks). */
const graphTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 23)}0000Z`;
const guid = () => randomUUID();
const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

function graphError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const date = new Date().toISOString().slice(0, 19);
  sendJson(
    res,
    status,
    { error: { code, message, innerError: { date, 'request-id': guid(), 'client-request-id': guid() } } },
    headers,
  );
}

function entraError(res: ServerResponse, status: number, error: string, code: number, message: string): void {
  const trace = guid();
  const correlation = guid();
  const timestamp = new Date().toISOString().replace('T', ' ').slice(0, 19) + 'Z';
  sendJson(res, status, {
    error,
    error_description: `AADSTS${code}: ${message}\r\nTrace ID: ${trace}\r\nCorrelation ID: ${correlation}\r\nTimestamp: ${timestamp}`,
    error_codes: [code],
    timestamp,
    trace_id: trace,
    correlation_id: correlation,
    error_uri: `https://login.microsoftonline.com/error?code=${code}`,
  });
}

/**
 * OData $filter as far as Weir sends it: date comparisons (eq, ge, gt, le, lt) on the
 * resource's time fields, string `eq` and `startswith(field, 'text')` on any property (nested
 * with "/"; quotes doubled), and, or, parentheses. Strings compare case-insensitively, as
 * Graph does. null when Graph would refuse the filter.
 */
function parseFilter(filter: string, allowed: string[]): ((raw: Raw) => boolean) | null {
  type Pred = (raw: Raw) => boolean;
  const toks = filter.match(/\s*('(?:[^']|'')*'|\(|\)|,|[^\s(),']+)/gy)?.map((x) => x.trim());
  if (!toks || toks.join('').length !== filter.replace(/\s+/g, '').length) return null;
  let i = 0;
  const text = (lit: string | undefined) =>
    lit?.startsWith("'") ? lit.slice(1, -1).replace(/''/g, "'").toLowerCase() : null;
  const valueAt = (raw: Raw, path: string) =>
    path.split('/').reduce<unknown>((o, k) => (o as Raw | undefined)?.[k], raw);
  const primary = (): Pred | null => {
    if (toks[i] === '(') {
      i++;
      const inner = expr();
      return toks[i++] === ')' ? inner : null;
    }
    if (toks[i]?.toLowerCase() === 'startswith') {
      const [open, field, comma, lit, close] = toks.slice(i + 1, i + 6);
      i += 6;
      const want = text(lit);
      if (open !== '(' || comma !== ',' || close !== ')' || !field || want === null) return null;
      return (raw) => {
        const v = valueAt(raw, field);
        return typeof v === 'string' && v.toLowerCase().startsWith(want);
      };
    }
    const [field, op, lit] = [toks[i], toks[i + 1]?.toLowerCase(), toks[i + 2]];
    i += 3;
    if (!field || !op || !lit || !(op in OPS)) return null;
    const want = text(lit);
    if (want !== null) {
      if (op !== 'eq') return null;
      return (raw) => {
        const v = valueAt(raw, field);
        return typeof v === 'string' && v.toLowerCase() === want;
      };
    }
    if (!allowed.includes(field) || !DATE_LITERAL.test(lit)) return null;
    const bound = Date.parse(lit);
    return (raw) => OPS[op as keyof typeof OPS](Date.parse(String(raw[field])), bound);
  };
  const chain = (next: () => Pred | null, word: string, join: (a: Pred, b: Pred) => Pred) => (): Pred | null => {
    let left = next();
    while (left && toks[i]?.toLowerCase() === word) {
      i++;
      const right = next();
      if (!right) return null;
      const l: Pred = left;
      left = join(l, right);
    }
    return left;
  };
  const and = chain(primary, 'and', (a, b) => (r) => a(r) && b(r));
  const expr = chain(and, 'or', (a, b) => (r) => a(r) || b(r));
  const out = expr();
  return out && i === toks.length ? out : null;
}

export async function startMicrosoftGraphSimulator(
  options: MicrosoftGraphSimulatorOptions = {},
): Promise<MicrosoftGraphSimulator> {
  const home = options.tenantId ?? guid();
  const clientId = options.clientId ?? guid();
  const clientSecret =
    options.clientSecret ?? `${randomBytes(3).toString('hex')}~${randomBytes(27).toString('base64url')}`;
  const ttl = options.tokenTtlSeconds ?? 3599;
  const customersPage = options.customersPageSize ?? 100;
  let customers = [...(options.customers ?? [])];
  const templates = Object.fromEntries(STREAMS.map((s) => [s, loadFixtures('microsoft_graph', s)])) as Record<
    Stream,
    Raw[]
  >;
  const store = new Map<string, SimEvent[]>();
  const tokens = new Map<string, { tenant: string; expiresAt: number }>();
  const tokenRequests: MicrosoftGraphSimulator['tokenRequests'] = [];
  const queries: MicrosoftGraphSimulator['queries'] = [];
  const faults: ({ kind: 'rate'; seconds: number } | { kind: 'server' })[] = [];
  const newUuid = uniqueIds(() => guid());
  let requests = 0;
  let serverErrors = 0;
  let refuseAll = false;
  let seq = 0;

  const tenants = () => new Set([home, ...customers.map((c) => c.id)]);
  const bucket = (tenant: string, stream: Stream): SimEvent[] => {
    const k = `${tenant}/${stream}`;
    if (!store.has(k)) store.set(k, []);
    return store.get(k)!;
  };
  const checkStream = (stream: string): Stream => {
    if (!(STREAMS as readonly string[]).includes(stream))
      throw new Error(`microsoft_graph simulator: no stream ${stream}`);
    return stream as Stream;
  };
  const checkTenant = (tenant = home): string => {
    if (!tenants().has(tenant)) throw new Error(`microsoft_graph simulator: unknown tenant ${tenant}`);
    return tenant;
  };
  /** Graph's order: newest first, ties by id. */
  const newestFirst = (a: SimEvent, b: SimEvent) => b.timeMs - a.timeMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

  function makeEvent(stream: Stream, tenant: string, timeMs: number, i: number): SimEvent {
    const raw = structuredClone(templates[stream][i % templates[stream].length]!);
    const at = graphTime(timeMs);
    if (stream === 'signins') {
      Object.assign(raw, { id: newUuid(), createdDateTime: at, correlationId: guid() });
      return { id: raw.id as string, timeMs, raw };
    }
    if (stream === 'directory_audits') {
      Object.assign(raw, {
        id: `Directory_${newUuid()}_${randomBytes(3).toString('hex').toUpperCase().slice(0, 5)}_${++seq}`,
        activityDateTime: at,
        correlationId: guid(),
      });
      return { id: raw.id as string, timeMs, raw };
    }
    const id = `da${String(638_000_000_000_000_000n + BigInt(timeMs) * 10_000n + BigInt(++seq))}_${randomBytes(4).readUInt32BE(0) % 2_000_000_000}`;
    const link = (what: string, uid: string) => `https://security.microsoft.com/${what}/${uid}?tid=${tenant}`;
    Object.assign(raw, {
      id,
      providerAlertId: id,
      tenantId: tenant,
      createdDateTime: at,
      lastUpdateDateTime: at,
      firstActivityDateTime: at,
      lastActivityDateTime: at,
      alertWebUrl: link('alerts', id),
      incidentWebUrl: link('incidents', String(raw.incidentId)),
    });
    return { id: `${id}@${at}`, timeMs, raw };
  }

  async function token(req: IncomingMessage, res: ServerResponse, url: URL, tenant: string): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    const refuse = (status: number, error: string, code: number, message: string) => {
      tokenRequests.push({ tenant, issued: false });
      entraError(res, status, error, code, message);
    };
    if (!/^application\/x-www-form-urlencoded/.test(header(req, 'content-type') ?? ''))
      return refuse(
        400,
        'invalid_request',
        900144,
        "The request body must contain the following parameter: 'grant_type'.",
      );
    for (const p of ['grant_type', 'client_id', 'scope'])
      if (!form.get(p))
        return refuse(400, 'invalid_request', 900144, `The request body must contain the following parameter: '${p}'.`);
    if (!tenants().has(tenant))
      return refuse(
        400,
        'invalid_request',
        90002,
        `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
      );
    if (form.get('grant_type') !== 'client_credentials')
      return refuse(400, 'unsupported_grant_type', 70003, 'The app requested an unsupported grant type.');
    if (form.get('client_id') !== clientId) {
      return refuse(
        400,
        'unauthorized_client',
        700016,
        `Application with identifier '${form.get('client_id')}' was not found in the directory '${tenant}'.`,
      );
    }
    const scope = form.get('scope')!;
    const origin = `http://${header(req, 'host') ?? url.host}`;
    if (scope !== `${origin}/.default` && scope !== 'https://graph.microsoft.com/.default') {
      return refuse(
        400,
        'invalid_scope',
        1002012,
        `The provided value for scope ${scope} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`,
      );
    }
    if (form.get('client_secret') !== clientSecret) {
      return refuse(
        401,
        'invalid_client',
        7000215,
        `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${clientId}'.`,
      );
    }
    const exp = Math.floor(Date.now() / 1000) + ttl;
    const accessToken = `${b64url({ typ: 'JWT', alg: 'RS256' })}.${b64url({ aud: scope.replace('/.default', ''), tid: tenant, appid: clientId, exp })}.${randomBytes(32).toString('base64url')}`;
    tokens.set(accessToken, { tenant, expiresAt: exp * 1000 });
    tokenRequests.push({ tenant, issued: true });
    sendJson(res, 200, { token_type: 'Bearer', expires_in: ttl, ext_expires_in: ttl, access_token: accessToken });
  }

  async function graph(req: IncomingMessage, res: ServerResponse, url: URL, resource: Resource): Promise<void> {
    requests += 1;
    if (options.latencyMs) await sleep(options.latencyMs);
    const fault = faults.shift();
    if (fault?.kind === 'rate')
      return graphError(res, 429, 'TooManyRequests', 'Too many requests', { 'retry-after': String(fault.seconds) });
    if (fault?.kind === 'server') {
      serverErrors += 1;
      if (serverErrors % 2 === 1) return graphError(res, 503, 'serviceNotAvailable', 'Service unavailable');
      return graphError(
        res,
        504,
        'GatewayTimeout',
        'The gateway did not receive a response within the specified time period.',
      );
    }
    const bearer = /^Bearer (\S+)$/.exec(header(req, 'authorization') ?? '');
    const grant = bearer ? tokens.get(bearer[1]!) : undefined;
    const challenge = {
      'www-authenticate':
        'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", client_id="00000003-0000-0000-c000-000000000000"',
    };
    if (!bearer) return graphError(res, 401, 'InvalidAuthenticationToken', 'Access token is empty.', challenge);
    if (!grant)
      return graphError(
        res,
        401,
        'InvalidAuthenticationToken',
        'Access token validation failure. Invalid audience.',
        challenge,
      );
    if (refuseAll)
      return graphError(
        res,
        401,
        'InvalidAuthenticationToken',
        'Access token validation failure. Invalid audience.',
        challenge,
      );
    if (grant.expiresAt <= Date.now())
      return graphError(
        res,
        401,
        'InvalidAuthenticationToken',
        'Lifetime validation failed, the token is expired.',
        challenge,
      );
    queries.push({ path: url.pathname, tenant: grant.tenant, params: new URLSearchParams(url.search) });

    const params = url.searchParams;
    for (const key of params.keys()) {
      if (key.startsWith('$') && !['$filter', '$top', '$skiptoken', '$skip'].includes(key))
        return graphError(res, 400, 'BadRequest', `Query option '${key}' is not allowed.`);
    }
    const topRaw = params.get('$top');
    const top = topRaw === null ? (resource.stream === 'customers' ? customersPage : resource.maxTop) : Number(topRaw);
    if (!/^\d+$/.test(topRaw ?? '1') || top < 1)
      return graphError(res, 400, 'BadRequest', `Invalid value '${topRaw}' for query option '$top'.`);
    if (top > resource.maxTop)
      return graphError(
        res,
        400,
        'BadRequest',
        `The limit of '${resource.maxTop}' for Top query has been exceeded. The value from the incoming request is '${top}'.`,
      );
    let match: (raw: Raw) => boolean = () => true;
    const filter = params.get('$filter');
    if (filter !== null) {
      const parsed = parseFilter(filter, resource.filterable);
      if (!parsed) return graphError(res, 400, 'BadRequest', `Invalid filter clause: ${filter}`);
      match = parsed;
    }

    let items: SimEvent[];
    if (resource.stream === 'customers') {
      // Listed in the order they were added; timeMs is the position, so keyset paging works on it.
      items =
        grant.tenant === home
          ? customers.map((c, i) => ({
              id: c.id,
              timeMs: -i,
              raw: { tenantId: c.id, displayName: c.displayName, id: c.id },
            }))
          : [];
    } else {
      items = bucket(grant.tenant, resource.stream)
        .filter((e) => match(e.raw))
        .sort(newestFirst);
    }
    let start = 0;
    const skiptoken = params.get('$skiptoken');
    const skip = params.get('$skip');
    if (skiptoken !== null) {
      if (resource.paging !== 'skiptoken')
        return graphError(res, 400, 'BadRequest', "Query option '$skiptoken' is not allowed.");
      let after: { t?: unknown; id?: unknown };
      try {
        after = JSON.parse(Buffer.from(skiptoken, 'base64url').toString('utf8')) as { t?: unknown; id?: unknown };
      } catch {
        return graphError(res, 400, 'BadRequest', 'The $skiptoken is invalid.');
      }
      if (typeof after.t !== 'number' || typeof after.id !== 'string')
        return graphError(res, 400, 'BadRequest', 'The $skiptoken is invalid.');
      // Keyset paging: the page starts after the last item handed out, whatever was added since.
      const pos: SimEvent = { id: after.id, timeMs: after.t, raw: {} };
      start = items.findIndex((e) => newestFirst(e, pos) > 0);
      if (start < 0) start = items.length;
    } else if (skip !== null) {
      if (resource.paging !== 'skip' || !/^\d+$/.test(skip))
        return graphError(res, 400, 'BadRequest', `Invalid value '${skip}' for query option '$skip'.`);
      start = Number(skip);
    }
    const page = items.slice(start, start + top);
    const origin = `http://${header(req, 'host') ?? url.host}`;
    const body: Record<string, unknown> = {
      '@odata.context': `${origin}/v1.0/$metadata#${resource.context}`,
      value: page.map((e) => e.raw),
    };
    if (start + top < items.length) {
      const next = new URL(url.pathname, origin);
      const keep = [...params].filter(([k]) => k !== '$skiptoken' && k !== '$skip');
      const last = page[page.length - 1]!;
      const token =
        resource.paging === 'skip'
          ? ['$skip', String(start + top)]
          : ['$skiptoken', b64url({ t: last.timeMs, id: last.id })];
      next.search = [...keep, token].map(([k, v]) => `${k}=${encodeURIComponent(v!)}`).join('&');
      body['@odata.nextLink'] = next.href;
    }
    sendJson(res, 200, body, {
      'request-id': guid(),
      'client-request-id': guid(),
      'x-ms-ags-diagnostic': '{"ServerInfo":{"DataCenter":"Simulated"}}',
    });
  }

  let closed = false;
  const server = await listen(async (req, res, url) => {
    if (simControl(sim, STREAMS, req, res, url)) return;
    const tokenPath = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname);
    if (tokenPath) {
      if (req.method !== 'POST')
        return entraError(res, 405, 'invalid_request', 900561, 'The endpoint only accepts POST requests.');
      return token(req, res, url, decodeURIComponent(tokenPath[1]!));
    }
    const resource = RESOURCES[url.pathname];
    if (!resource)
      return graphError(
        res,
        400,
        'BadRequest',
        `Resource not found for the segment '${url.pathname.split('/').pop()}'.`,
      );
    if (req.method !== 'GET')
      return graphError(res, 405, 'Request_BadRequest', 'The HTTP method is not allowed for the resource.');
    return graph(req, res, url, resource);
  });

  const sim: MicrosoftGraphSimulator = {
    url: server.url,
    platform: 'microsoft_graph',
    tenantId: home,
    clientId,
    tokenRequests,
    queries,
    config: () => ({
      collect: true,
      tenant_id: home,
      client_id: clientId,
      client_secret: clientSecret,
      login_url: server.url,
      graph_url: server.url,
    }),
    addPatched(stream, n, window, patch) {
      return sim.addEvents(stream, n, window, { patch });
    },
    get filters() {
      return queries.flatMap((q) => {
        const f = q.params.get('$filter');
        // Only filters beyond the time window (a live query's) are listed.
        return f !== null && /eq '|startswith\(/i.test(f) ? [f] : [];
      });
    },
    addEvents(stream, n, window, opts = {}) {
      const s = checkStream(stream);
      const tenant = checkTenant(opts.tenant);
      return spreadTimes(n, window ?? defaultWindow()).map((timeMs, i) => {
        const e = makeEvent(s, tenant, timeMs, i);
        opts.patch?.(e.raw, i);
        bucket(tenant, s).push(e);
        return e.id;
      });
    },
    eventIds(stream, opts = {}) {
      const s = checkStream(stream);
      return [...bucket(checkTenant(opts.tenant), s)].sort((a, b) => -newestFirst(a, b)).map((e) => e.id);
    },
    refuseTokens(on) {
      refuseAll = on;
    },
    setCustomers(list) {
      customers = [...list];
    },
    updateAlert(key, at, changes = {}) {
      const list = bucket(checkTenant(changes.tenant), 'security_alerts');
      const e = list.find((x) => x.id === key);
      if (!e) throw new Error(`microsoft_graph simulator: no alert ${key}`);
      const when = graphTime(at.getTime());
      Object.assign(e.raw, { lastUpdateDateTime: when, status: changes.status ?? 'inProgress' });
      e.timeMs = at.getTime();
      e.id = `${String(e.raw.id)}@${when}`;
      return e.id;
    },
    rateLimit(count, seconds) {
      for (let i = 0; i < count; i++) faults.push({ kind: 'rate', seconds });
    },
    serverError(count) {
      for (let i = 0; i < count; i++) faults.push({ kind: 'server' });
    },
    expireTokens() {
      for (const grant of tokens.values()) grant.expiresAt = 0;
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
