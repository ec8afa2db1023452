// A CrowdStrike Falcon API simulator, written from the public API documentation (OAuth2 API,
// Alerts API v2, FQL): POST /oauth2/token (form client_id, client_secret, member_cid -> 201
// {access_token, token_type, expires_in}; 403 for wrong credentials), GET
// /alerts/queries/alerts/v2 (FQL filter, sort field|asc or field.asc, limit <= 1000,
// offset + limit <= 10000, meta.pagination {offset, limit, total}), POST
// /alerts/entities/alerts/v2 ({composite_ids}, <= 1000). Every answer carries the Falcon
// envelope {meta, resources, errors} and X-RateLimit-Limit/-Remaining; 429 carries
// X-RateLimit-RetryAfter (epoch seconds); 401 "access denied, invalid bearer token" for an
// unknown or expired token. Alerts are the fixtures with new ids and timestamps.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventPatch, FilteringSimulator, VendorSimulator } from './types.js';

type Alert = Record<string, unknown> & { composite_id: string; cid: string; updated_timestamp: string };

export interface CrowdstrikeFalconSimulatorOptions {
  clientId?: string;
  clientSecret?: string;
  /** The API client's own CID. */
  cid?: string;
  /** Flight Control children the client may act for (token requests with member_cid). */
  childCids?: string[];
  tokenTtlSeconds?: number;
  /** Falcon's per-CID quota (6000 a minute); exceeding it answers 429 until the minute ends. */
  requestsPerMinute?: number;
}

export interface CrowdstrikeFalconSimulator extends VendorSimulator, FilteringSimulator {
  /** Like VendorSimulator.addEvents; `cid` puts the alerts in a Flight Control child. */
  addEvents(
    stream: string,
    n: number,
    window?: { from: Date; to: Date },
    options?: { cid?: string; patch?: EventPatch },
  ): string[];
  /** An analyst changes the alert (status in_progress): its updated_timestamp becomes `at`. */
  updateAlert(compositeId: string, at: Date): void;
  alert(compositeId: string): Alert | undefined;
  /** Tokens issued so far. */
  readonly tokensIssued: number;
  /** Query strings of the alert queries received, for assertions on the FQL sent. */
  readonly queries: URLSearchParams[];
}

const FIXTURES = JSON.parse(
  readFileSync(new URL('../../../src/connectors/crowdstrike_falcon/fixtures/alerts.json', import.meta.url), 'utf8'),
) as Alert[];
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

interface Term {
  field: string;
  op: '=' | '!' | '>' | '>=' | '<' | '<=';
  value: string;
}

/** The FQL the connectors use: terms joined by + (AND), field:[op]'value' with ', " or bare values. */
function parseFql(filter: string): Term[] {
  const terms: Term[] = [];
  const re = /\s*([a-z_][a-z0-9_.]*):(>=|<=|>|<|!)?(?:'([^']*)'|"([^"]*)"|([^+'"\s]+))\s*(\+|$)/gy;
  let m: RegExpExecArray | null;
  let end = 0;
  let open = true;
  while (open && (m = re.exec(filter)) !== null) {
    terms.push({ field: m[1]!, op: (m[2] ?? '=') as Term['op'], value: m[3] ?? m[4] ?? m[5] ?? '' });
    end = re.lastIndex;
    open = m[6] === '+';
  }
  if (open || end !== filter.length) throw new Error('invalid filter');
  return terms;
}

function fieldOf(alert: Alert, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], alert);
}

function matches(alert: Alert, term: Term): boolean {
  const actual = fieldOf(alert, term.field);
  if (actual === undefined || actual === null) return term.op === '!';
  let a: number | string = String(actual);
  let b: number | string = term.value;
  if (/timestamp$/.test(term.field)) {
    a = Date.parse(a);
    b = Date.parse(b);
    if (Number.isNaN(b)) throw new Error('invalid filter');
  } else if (typeof actual === 'number') {
    a = actual;
    b = Number(term.value);
  }
  switch (term.op) {
    case '=':
      return a === b;
    case '!':
      return a !== b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
  }
}

export async function startCrowdstrikeFalconSimulator(
  options: CrowdstrikeFalconSimulatorOptions = {},
): Promise<CrowdstrikeFalconSimulator> {
  const clientId = options.clientId ?? hex(16);
  const clientSecret = options.clientSecret ?? randomBytes(30).toString('base64url');
  const cid = options.cid ?? hex(16);
  const children = new Set(options.childCids ?? []);
  const ttl = options.tokenTtlSeconds ?? 1799;
  const perMinute = options.requestsPerMinute ?? 6000;
  const alerts: Alert[] = [];
  const tokens = new Map<string, { cid: string; expiresAt: number }>();
  const queries: URLSearchParams[] = [];
  let tokensIssued = 0;
  let requests = 0;
  let seq = 400_000;
  const faults: ({ kind: 'rate'; seconds: number } | { kind: 'server' })[] = [];
  let minute = { start: Date.now(), used: 0 };

  const meta = (extra: Record<string, unknown> = {}) => ({
    query_time: 0.004,
    powered_by: 'crowdstrike-api-gateway',
    trace_id: randomUUID(),
    ...extra,
  });

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json', 'x-cs-traceid': randomUUID(), ...headers });
    res.end(JSON.stringify(body));
  }
  const fail = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) =>
    send(res, status, { meta: meta(), resources: null, errors: [{ code: status, message }] }, headers);

  function quotaHeaders(): Record<string, string> {
    if (Date.now() - minute.start >= 60_000) minute = { start: Date.now(), used: 0 };
    minute.used += 1;
    return {
      'x-ratelimit-limit': String(perMinute),
      'x-ratelimit-remaining': String(Math.max(0, perMinute - minute.used)),
    };
  }

  function token(req: IncomingMessage, res: ServerResponse, body: string): void {
    if (!/^application\/x-www-form-urlencoded/.test(req.headers['content-type'] ?? ''))
      return fail(res, 400, 'Content-Type must be application/x-www-form-urlencoded');
    const form = new URLSearchParams(body);
    const member = form.get('member_cid') ?? '';
    if (
      form.get('client_id') !== clientId ||
      form.get('client_secret') !== clientSecret ||
      (member !== '' && !children.has(member))
    ) {
      return fail(res, 403, 'Failed to issue access token - Not Authorized');
    }
    const accessToken = randomBytes(48).toString('base64url');
    tokens.set(accessToken, { cid: member || cid, expiresAt: Date.now() + ttl * 1000 });
    tokensIssued += 1;
    send(res, 201, { access_token: accessToken, token_type: 'bearer', expires_in: ttl });
  }

  function query(res: ServerResponse, url: URL, tokenCid: string, headers: Record<string, string>): void {
    queries.push(url.searchParams);
    const limit = Number(url.searchParams.get('limit') ?? 100);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    // Documented maximum 10000; the service refuses more than 1000 in practice.
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      return fail(res, 400, 'limit must be between 1 and 1000', headers);
    if (!Number.isInteger(offset) || offset < 0)
      return fail(res, 400, 'offset must be a non-negative integer', headers);
    if (offset + limit > 10_000) return fail(res, 400, 'offset + limit must be less than or equal to 10000', headers);
    let terms: Term[] = [];
    const filter = url.searchParams.get('filter');
    try {
      if (filter) terms = parseFql(filter);
    } catch {
      return fail(res, 400, `Invalid filter: ${filter}`, headers);
    }
    const sort = /^([a-z_]+)(?:[|.](asc|desc))?$/.exec(url.searchParams.get('sort') ?? 'timestamp|desc');
    if (!sort) return fail(res, 400, 'Invalid sort', headers);
    const [, sortField = 'timestamp', dir = 'asc'] = sort;
    const found = alerts
      .filter((a) => a.cid === tokenCid && terms.every((t) => matches(a, t)))
      .sort((a, b) => {
        const x = String(a[sortField] ?? '');
        const y = String(b[sortField] ?? '');
        const c = /timestamp$/.test(sortField) ? Date.parse(x) - Date.parse(y) : x < y ? -1 : x > y ? 1 : 0;
        return (dir === 'desc' ? -c : c) || (a.composite_id < b.composite_id ? -1 : 1);
      });
    const page = found.slice(offset, offset + limit).map((a) => a.composite_id);
    send(
      res,
      200,
      {
        meta: meta({ powered_by: 'msa-api', pagination: { offset, limit, total: found.length } }),
        resources: page,
        errors: [],
      },
      headers,
    );
  }

  function entities(res: ServerResponse, body: string, tokenCid: string, headers: Record<string, string>): void {
    let ids: unknown;
    try {
      ids = (JSON.parse(body) as { composite_ids?: unknown }).composite_ids;
    } catch {
      return fail(res, 400, 'Invalid JSON body', headers);
    }
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((i) => typeof i === 'string'))
      return fail(res, 400, 'composite_ids is required', headers);
    if (ids.length > 1000) return fail(res, 400, 'a maximum of 1000 composite_ids is allowed', headers);
    const found = ids
      .map((id) => alerts.find((a) => a.composite_id === id && a.cid === tokenCid))
      .filter((a): a is Alert => a !== undefined);
    send(
      res,
      200,
      { meta: meta({ powered_by: 'detectsapi' }), resources: found.map((a) => structuredClone(a)), errors: [] },
      headers,
    );
  }

  function handle(req: IncomingMessage, res: ServerResponse, body: string): void {
    const url = new URL(req.url ?? '/', 'http://falcon');
    if (req.method === 'POST' && url.pathname === '/oauth2/token') return token(req, res, body);
    const known =
      (req.method === 'GET' && url.pathname === '/alerts/queries/alerts/v2') ||
      (req.method === 'POST' && url.pathname === '/alerts/entities/alerts/v2');
    if (!known) return fail(res, 404, 'Not Found');
    requests += 1;
    const fault = faults.shift();
    if (fault?.kind === 'server')
      return fail(res, requests % 2 ? 500 : 503, requests % 2 ? 'Internal Server Error' : 'Service Unavailable');
    const headers = quotaHeaders();
    const retryAt = (seconds: number) => String(Math.ceil(Date.now() / 1000) + seconds);
    if (fault?.kind === 'rate')
      return fail(res, 429, 'API rate limit exceeded.', {
        ...headers,
        'x-ratelimit-remaining': '0',
        'x-ratelimit-retryafter': retryAt(fault.seconds),
      });
    if (minute.used > perMinute) {
      return fail(res, 429, 'API rate limit exceeded.', {
        ...headers,
        'x-ratelimit-retryafter': retryAt(Math.ceil((minute.start + 60_000 - Date.now()) / 1000)),
      });
    }
    const auth = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '');
    const grant = auth ? tokens.get(auth[1]!) : undefined;
    if (!grant || grant.expiresAt <= Date.now()) return fail(res, 401, 'access denied, invalid bearer token', headers);
    if (req.method === 'GET') return query(res, url, grant.cid, headers);
    return entities(res, body, grant.cid, headers);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const checkStream = (stream: string) => {
    if (stream !== 'alerts') throw new Error(`crowdstrike_falcon has no stream ${stream}`);
  };

  const sim: CrowdstrikeFalconSimulator = {
    url,
    platform: 'crowdstrike_falcon',
    config: () => ({ collect: true, base_url: url, client_id: clientId, client_secret: clientSecret }),
    addPatched(stream, n, window, patch) {
      return sim.addEvents(stream, n, window, { patch });
    },
    get filters() {
      // The terms beside the updated_timestamp window are a live query's filter.
      return queries.flatMap((q) => {
        const extra = (q.get('filter') ?? '').split('+').filter((t) => t !== '' && !t.startsWith('updated_timestamp:'));
        return extra.length > 0 ? [extra.join('+')] : [];
      });
    },
    addEvents(stream, n, window, opts = {}) {
      checkStream(stream);
      const to = window?.to ?? new Date(Date.now() - 2 * 60_000);
      const from = window?.from ?? new Date(to.getTime() - 30 * 60_000);
      const span = to.getTime() - from.getTime();
      const owner = opts.cid ?? cid;
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const at = new Date(from.getTime() + Math.floor((i * span) / n)).toISOString();
        const agent = hex(16);
        seq += 1;
        const a = structuredClone(FIXTURES[i % FIXTURES.length]!);
        opts.patch?.(a, i);
        const compositeId = `${owner}:ind:${agent}:${seq}`;
        Object.assign(a, {
          composite_id: compositeId,
          aggregate_id: `aggind:${agent}:${seq - 17}`,
          cid: owner,
          agent_id: agent,
          created_timestamp: at,
          updated_timestamp: at,
          timestamp: at,
          falcon_host_link: `https://falcon.crowdstrike.com/activity-v2/detections/${compositeId}?_cid=${owner}`,
        });
        const device = a.device as Record<string, unknown> | undefined;
        if (device) Object.assign(device, { device_id: agent, agent_id: agent, cid: owner });
        alerts.push(a);
        ids.push(compositeId);
      }
      return ids;
    },
    updateAlert(compositeId, at) {
      const a = alerts.find((x) => x.composite_id === compositeId);
      if (!a) throw new Error(`no alert ${compositeId}`);
      Object.assign(a, { updated_timestamp: at.toISOString(), status: 'in_progress' });
    },
    alert: (compositeId) => alerts.find((a) => a.composite_id === compositeId),
    eventIds(stream) {
      checkStream(stream);
      return [...alerts]
        .sort((a, b) => Date.parse(a.updated_timestamp) - Date.parse(b.updated_timestamp))
        .map((a) => a.composite_id);
    },
    rateLimit(count, retryAfterSeconds) {
      for (let i = 0; i < count; i++) faults.push({ kind: 'rate', seconds: retryAfterSeconds });
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
    get tokensIssued() {
      return tokensIssued;
    },
    queries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return sim;
}
