// A fake managed-provider vendor for tests of the integration operations (connection tests,
// tenant discovery, filters, health): a loopback server with a tiny documented-looking API
// and the connector that speaks it. Not a real vendor: it exists so that those operations
// are tested against real HTTP, without depending on any one vendor connector.
//
// API (all under the base URL, `Authorization: Bearer <api_key>` required, 401 otherwise):
//   GET /v1/whoami                      -> {account}
//   GET /v1/customers?page=N            -> {customers: [{id, name, domain}], next_page: N|null}
//   GET /v1/events?stream&from&to&cursor&limit (header X-Customer-Id for a tenant) -> {events, next}
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  configString,
  HOUR_MS,
  MINUTE_MS,
  pullConfigSchema,
  VendorError,
  type Connector,
} from '../../../src/connectors/sdk.js';
import type { VendorSimulator } from './types.js';

export const FAKE_API_KEY = 'fake-provider-key-1f2e3d4c';

export interface FakeCustomer {
  id: string;
  name: string;
  domain?: string;
}

export interface FakeProvider extends VendorSimulator {
  /** The customer tenants the partner account sees. */
  setCustomers(customers: FakeCustomer[]): void;
  /** The next `count` requests of any kind answer this status (with a body naming it). */
  failNext(status: number, count?: number): void;
  /** Every request received: path and the tenant header, for assertions. */
  readonly log: { path: string; customer: string | undefined; authorized: boolean }[];
}

interface FakeEvent {
  id: string;
  time: string;
  stream: string;
  customer: string | null;
  type: string;
  actor: { name: string };
}

const CUSTOMERS_PAGE = 2;

export async function startFakeProvider(
  options: { apiKey?: string; customers?: FakeCustomer[] } = {},
): Promise<FakeProvider> {
  const apiKey = options.apiKey ?? FAKE_API_KEY;
  let customers = options.customers ?? [];
  const events: FakeEvent[] = [];
  const failures: number[] = [];
  const log: FakeProvider['log'] = [];
  let requests = 0;
  let seq = 0;

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const customer = req.headers['x-customer-id'] as string | undefined;
    const authorized = req.headers.authorization === `Bearer ${apiKey}`;
    log.push({ path: url.pathname, customer, authorized });
    const failure = failures.shift();
    if (failure !== undefined) {
      send(res, failure, { error: `simulated HTTP ${failure}` }, failure === 429 ? { 'retry-after': '3600' } : {});
      return;
    }
    if (!authorized) return send(res, 401, { error: 'invalid api key' });
    if (url.pathname === '/v1/whoami')
      return send(res, 200, { account: 'partner-account', customer: customer ?? null });
    if (url.pathname === '/v1/customers') {
      const page = Math.max(1, Number(url.searchParams.get('page') ?? '1'));
      const slice = customers.slice((page - 1) * CUSTOMERS_PAGE, page * CUSTOMERS_PAGE);
      return send(res, 200, {
        customers: slice,
        next_page: page * CUSTOMERS_PAGE < customers.length ? page + 1 : null,
      });
    }
    if (url.pathname === '/v1/events') {
      requests += 1;
      const stream = url.searchParams.get('stream');
      const from = Date.parse(url.searchParams.get('from') ?? '');
      const to = url.searchParams.get('to') ? Date.parse(url.searchParams.get('to')!) : Infinity;
      const offset = Number(url.searchParams.get('cursor') ?? '0');
      const limit = Number(url.searchParams.get('limit') ?? '100');
      const matching = events.filter(
        (e) =>
          e.stream === stream &&
          e.customer === (customer ?? null) &&
          Date.parse(e.time) >= from &&
          Date.parse(e.time) < to,
      );
      const page = matching.slice(offset, offset + limit);
      return send(res, 200, { events: page, next: offset + limit < matching.length ? String(offset + limit) : null });
    }
    send(res, 404, { error: 'no such endpoint' });
  }

  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    platform: 'fake_provider',
    log,
    get requests() {
      return requests;
    },
    config: () => ({ collect: true, base_url: url, api_key: apiKey }),
    setCustomers(list) {
      customers = list;
    },
    failNext(status, count = 1) {
      for (let i = 0; i < count; i++) failures.push(status);
    },
    addEvents(stream, n, window) {
      const to = window?.to.getTime() ?? Date.now() - 2 * MINUTE_MS;
      const from = window?.from.getTime() ?? to - 30 * MINUTE_MS;
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const id = `evt-${++seq}`;
        events.push({
          id,
          stream,
          customer: null,
          time: new Date(from + ((to - from) * i) / n).toISOString(),
          type: i % 2 ? 'user.login' : 'system.heartbeat',
          actor: { name: `user${i}` },
        });
        ids.push(id);
      }
      return ids;
    },
    eventIds: (stream) => events.filter((e) => e.stream === stream).map((e) => e.id),
    rateLimit(count) {
      for (let i = 0; i < count; i++) failures.push(429);
    },
    serverError(count) {
      for (let i = 0; i < count; i++) failures.push(503);
    },
    expireTokens() {},
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function headers(config: Readonly<Record<string, unknown>>, tenantId: string | null): Record<string, string> {
  return {
    authorization: `Bearer ${configString(config, 'api_key')}`,
    ...(tenantId ? { 'x-customer-id': tenantId } : {}),
  };
}

/** The connector of the fake provider, under a platform name of the test's choosing. */
export function fakeProviderConnector(platform = 'fake_provider'): Connector {
  return {
    platform,
    display_name: 'Fake provider',
    vendor: 'Fake',
    description: 'A fake managed-provider vendor used by tests.',
    auth: 'api_token',
    config_schema: pullConfigSchema(
      {
        base_url: { type: 'string', format: 'uri', description: 'API base URL' },
        api_key: { type: 'string', minLength: 8, writeOnly: true, description: 'API key' },
        partner: { type: 'boolean', default: false, description: 'A partner account: discovers customer tenants' },
      },
      ['base_url', 'api_key'],
    ),
    streams: [
      {
        name: 'events',
        display_name: 'Events',
        description: 'Audit events',
        cursor: 'date',
        defaultWindowMs: HOUR_MS,
        intervalMs: 5 * MINUTE_MS,
        retentionDays: 30,
        pageSize: 100,
        maxWindowMs: 6 * HOUR_MS,
        settleMs: MINUTE_MS,
      },
      {
        name: 'alerts',
        display_name: 'Alerts',
        description: 'Security alerts',
        cursor: 'opaque',
        defaultWindowMs: HOUR_MS,
        intervalMs: MINUTE_MS,
        retentionDays: 365,
        pageSize: 50,
        maxWindowMs: 24 * HOUR_MS,
        settleMs: 0,
      },
    ],
    async fetchPage(ctx, req) {
      const res = await ctx.http.request({
        url: `${configString(ctx.config, 'base_url')}/v1/events`,
        query: {
          stream: req.stream,
          from: req.from.toISOString(),
          to: req.to?.toISOString(),
          cursor: req.cursor ?? undefined,
          limit: req.pageSize,
        },
        headers: headers(ctx.config, ctx.tenantId),
      });
      const body = res.json<{ events?: Record<string, unknown>[]; next?: string | null }>();
      if (!Array.isArray(body.events)) throw new VendorError('invalid_response', 'events is not a list');
      return {
        events: body.events,
        keys: body.events.map((e) => String(e.id)),
        next: body.next ?? null,
        more: body.next != null,
      };
    },
    async test(ctx) {
      const res = await ctx.http.request({
        url: `${configString(ctx.config, 'base_url')}/v1/whoami`,
        headers: headers(ctx.config, ctx.tenantId),
      });
      const body = res.json<{ account?: string }>();
      if (typeof body.account !== 'string') throw new VendorError('invalid_response', 'whoami has no account');
      return `authenticated as ${body.account}${ctx.tenantId ? ` for customer ${ctx.tenantId}` : ''}`;
    },
    tenants: {
      async discover(ctx) {
        const out: { external_id: string; name: string; domain: string | null }[] = [];
        for (let page: number | null = 1; page !== null;) {
          const res = await ctx.http.request({
            url: `${configString(ctx.config, 'base_url')}/v1/customers`,
            query: { page },
            headers: headers(ctx.config, null),
          });
          const body = res.json<{ customers?: FakeCustomer[]; next_page?: number | null }>();
          if (!Array.isArray(body.customers)) throw new VendorError('invalid_response', 'customers is not a list');
          for (const c of body.customers) out.push({ external_id: c.id, name: c.name, domain: c.domain ?? null });
          page = body.next_page ?? null;
        }
        return out;
      },
    },
  };
}
