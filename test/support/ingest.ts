// Setting up push ingestion against a running Weir over HTTP (end-to-end tests and
// benchmarks): a platform administrator, an organization, integrations and their tokens.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface HttpAnswer {
  status: number;
  json: Record<string, unknown>;
  cookie?: string;
}

export async function http(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const cookie = res.headers.get('set-cookie')?.split(';')[0];
  return {
    status: res.status,
    json: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    ...(cookie ? { cookie } : {}),
  };
}

export interface IngestSetup {
  /** Session cookie of the platform administrator. */
  cookie: string;
  organizationId: number;
  integrations: { id: number; platform: string; token: string }[];
}

/** Bootstraps (or logs in) an administrator, creates an organization and one integration with an ingestion token per platform. */
export async function setUpIngestion(base: string, platforms: string[]): Promise<IngestSetup> {
  const creds = { username: 'pipeline-admin', password: 'pipeline-password-123', email: 'pipeline-admin@example.com' };
  await http(base, 'POST', '/api/auth/bootstrap', creds);
  const login = await http(base, 'POST', '/api/auth/login', { username: creds.username, password: creds.password });
  if (!login.cookie) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.json)}`);
  const headers = { cookie: login.cookie };
  const org = await http(base, 'POST', '/api/organizations/', { name: `pipeline-${Date.now()}` }, headers);
  if (org.status !== 201) throw new Error(`organization: ${org.status} ${JSON.stringify(org.json)}`);
  const organizationId = Number(org.json.id);
  const integrations: IngestSetup['integrations'] = [];
  for (const [i, platform] of platforms.entries()) {
    const created = await http(
      base,
      'POST',
      '/api/integrations/',
      { name: `${platform}-${i}`, platform, organization_id: organizationId },
      headers,
    );
    if (created.status !== 201) throw new Error(`integration: ${created.status} ${JSON.stringify(created.json)}`);
    const id = Number(created.json.id);
    const token = await http(base, 'POST', `/api/ingest/integrations/${id}/token`, {}, headers);
    if (token.status !== 201) throw new Error(`ingestion token: ${token.status} ${JSON.stringify(token.json)}`);
    integrations.push({ id, platform, token: String(token.json.token) });
  }
  return { cookie: login.cookie, organizationId, integrations };
}

/** Events processed by the workers for an integration (normalized + quarantined), from its ingest status. */
export async function processedEvents(base: string, cookie: string, integrationId: number): Promise<number> {
  const res = await http(base, 'GET', `/api/ingest/integrations/${integrationId}`, undefined, { cookie });
  if (res.status !== 200) throw new Error(`ingest status: ${res.status} ${JSON.stringify(res.json)}`);
  const stats = res.json.stats as { events_in?: number } | undefined;
  return Number(stats?.events_in ?? 0);
}

/**
 * The organization's event store (every organization made through the API has one, with a route
 * sending it everything): how many events it holds (any time in the last ten years), and how many of them it
 * holds more than once (0: exactly once).
 */
export async function storedEvents(
  base: string,
  cookie: string,
  organizationId: number,
): Promise<{ events: number; repeated: number }> {
  const res = await http(
    base,
    'POST',
    '/api/search',
    {
      query: {
        organization_id: organizationId,
        time: { last: '3650d' },
        limit: 0,
        aggregations: [{ type: 'count' }, { type: 'top', field: 'envelope.id', size: 1 }],
      },
      wait_ms: 60_000,
    },
    { cookie },
  );
  if (res.status !== 200) throw new Error(`search: ${res.status} ${JSON.stringify(res.json)}`);
  const [count, top] = res.json.aggregations as [{ value: number }, { values: { count: number }[] }];
  return { events: count.value, repeated: Math.max(0, (top.values[0]?.count ?? 1) - 1) };
}

/** Okta's System Log sample events (src/connectors/okta/fixtures: origin and licence there). */
const oktaSamples = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../src/connectors/okta/fixtures/system_log.json'), 'utf8'),
) as Record<string, unknown>[];

/** An Okta integration of the organization, with its ingestion token. */
export async function oktaIntegration(
  base: string,
  headers: Record<string, string>,
  organizationId: number,
  name: string,
): Promise<{ id: number; token: string }> {
  const created = await http(
    base,
    'POST',
    '/api/integrations/',
    { name, platform: 'okta', organization_id: organizationId },
    headers,
  );
  if (created.status !== 201) throw new Error(`integration: ${created.status} ${JSON.stringify(created.json)}`);
  const id = Number(created.json.id);
  const token = await http(base, 'POST', `/api/ingest/integrations/${id}/token`, {}, headers);
  if (token.status !== 201) throw new Error(`ingestion token: ${token.status} ${JSON.stringify(token.json)}`);
  return { id, token: String(token.json.token) };
}

/** Pushes `events` Okta sample events to system_log, each tagged `weir_test_seq: <tag>-<i>`. */
export async function pushOkta(
  base: string,
  token: string,
  tag: string,
  events: number,
): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
  const lines = Array.from({ length: events }, (_, i) =>
    JSON.stringify({ ...oktaSamples[i % oktaSamples.length], weir_test_seq: `${tag}-${i}` }),
  );
  const res = await fetch(`${base}/api/ingest/system_log`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: lines.join('\n'),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as Record<string, unknown>,
  };
}
