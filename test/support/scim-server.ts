// A small SCIM 2.0 service provider for tests, written from RFC 7644: GET /Users with
// startIndex (1-based) and count paging answers a ListResponse (totalResults, itemsPerPage,
// startIndex, Resources); a bearer token is required; errors use the SCIM error schema.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScimTestUser {
  id: string;
  userName: string;
  externalId?: string;
  active?: boolean;
  emails?: string[];
  groups?: string[];
}

export interface ScimTestServer {
  baseUrl: string;
  token: string;
  users: Map<string, ScimTestUser>;
  /** Requests seen (path and query), to check paging. */
  requests: string[];
  close(): Promise<void>;
}

const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

export async function startScimServer(options: { token: string; pageSize?: number }): Promise<ScimTestServer> {
  const users = new Map<string, ScimTestUser>();
  const requests: string[] = [];
  const maxPage = options.pageSize ?? 2;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://scim.test');
    requests.push(`${url.pathname}${url.search}`);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/scim+json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${options.token}`)
      return send(401, { schemas: [ERROR], status: '401', detail: 'Authorization failure' });
    if (req.method !== 'GET' || url.pathname !== '/scim/v2/Users')
      return send(404, { schemas: [ERROR], status: '404', detail: 'Resource not found' });
    // RFC 7644 §3.4.2.4: startIndex below 1 is read as 1; count is capped by the provider.
    const startIndex = Math.max(1, Number(url.searchParams.get('startIndex') ?? 1) || 1);
    const count = Math.min(maxPage, Math.max(0, Number(url.searchParams.get('count') ?? maxPage) || 0));
    const all = [...users.values()].sort((a, b) => a.id.localeCompare(b.id));
    const page = all.slice(startIndex - 1, startIndex - 1 + count);
    send(200, {
      schemas: [LIST],
      totalResults: all.length,
      itemsPerPage: page.length,
      startIndex,
      Resources: page.map((u) => ({
        schemas: [USER],
        id: u.id,
        ...(u.externalId ? { externalId: u.externalId } : {}),
        userName: u.userName,
        active: u.active ?? true,
        emails: (u.emails ?? []).map((value, i) => ({ value, type: 'work', primary: i === 0 })),
        groups: (u.groups ?? []).map((display) => ({ value: `g-${display}`, display })),
        meta: { resourceType: 'User' },
      })),
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/scim/v2`,
    token: options.token,
    users,
    requests,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}
