// Microsoft Graph (learn.microsoft.com/graph): Entra ID sign-ins (GET /v1.0/auditLogs/signIns),
// directory audits (/v1.0/auditLogs/directoryAudits) and Defender XDR alerts
// (/v1.0/security/alerts_v2), each read in time windows with $filter on its time field and
// $top, pages chained by @odata.nextLink. Graph answers newest first; the engine only moves the
// watermark once a window is complete, so order inside a window does not matter.
//
// security_alerts are filtered on lastUpdateDateTime, not createdDateTime: an alert changes
// after it is raised (status, classification, new evidence, resolution), and a window on
// createdDateTime would never see those changes. Each change moves lastUpdateDateTime into a
// later window, so the alert is collected again there; its key is id@lastUpdateDateTime, so
// every version is kept while a page read twice is still deduplicated.
//
// Managed providers (GDAP): a parent with `partner: true` lists its customers
// (tenantRelationships/delegatedAdminCustomers) and collects nothing; each child collects its
// customer's tenant (ctx.tenantId) with the parent's multi-tenant app credentials.
import {
  DAY_MS,
  HOUR_MS,
  MINUTE_MS,
  pullConfigSchema,
  urlField,
  VendorError,
  type Connector,
  type ConnectorContext,
  type FetchRequest,
  type Page,
  type TenantInfo,
} from '../sdk.js';
import { graphQuery } from './query.js';
import { isUnder } from '../vendor-url.js';
import {
  collection,
  DEFAULT_GRAPH_URL,
  DEFAULT_LOGIN_URL,
  graphGet,
  graphTarget,
  graphUrl,
  TENANT_PATTERN,
  type GraphTarget,
} from './client.js';

interface GraphStream {
  path: string;
  /** The DateTimeOffset property windows are filtered on. */
  timeField: string;
  /** Graph's largest $top for the resource. */
  maxTop: number;
  key(item: Record<string, unknown>): string;
}

const GRAPH_STREAMS: Record<string, GraphStream> = {
  signins: { path: '/v1.0/auditLogs/signIns', timeField: 'createdDateTime', maxTop: 1000, key: (e) => String(e.id) },
  directory_audits: {
    path: '/v1.0/auditLogs/directoryAudits',
    timeField: 'activityDateTime',
    maxTop: 1000,
    key: (e) => String(e.id),
  },
  security_alerts: {
    path: '/v1.0/security/alerts_v2',
    timeField: 'lastUpdateDateTime',
    maxTop: 2000,
    key: (e) => `${String(e.id)}@${String(e.lastUpdateDateTime)}`,
  },
};

const CUSTOMERS_PATH = '/v1.0/tenantRelationships/delegatedAdminCustomers';
const GUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
/** Discovery stops here: a provider with more customer pages than this is answering in a loop. */
const MAX_CUSTOMER_PAGES = 500;

function windowFilter(s: GraphStream, from: Date, to: Date): string {
  return `${s.timeField} ge ${from.toISOString()} and ${s.timeField} lt ${to.toISOString()}`;
}

/**
 * Our page token: the window it belongs to and Graph's nextLink. Graph's nextLinks are opaque
 * (some keep $filter, some only carry a $skiptoken), so the window is recorded beside it: a
 * token of another window or another Graph URL starts the window over, and the events
 * already accepted come again with the same keys and are dropped as duplicates.
 */
interface PageToken {
  from: number;
  to: number;
  link: string;
}

function resumable(cursor: string | null, t: GraphTarget, s: GraphStream, from: Date, to: Date): URL | null {
  if (!cursor) return null;
  let token: Partial<PageToken>;
  try {
    token = JSON.parse(cursor) as Partial<PageToken>;
  } catch {
    return null;
  }
  if (token.from !== from.getTime() || token.to !== to.getTime() || typeof token.link !== 'string') return null;
  let url: URL;
  try {
    url = new URL(token.link);
  } catch {
    return null;
  }
  return isUnder(url, t.graph) && url.pathname.endsWith(s.path) ? url : null;
}

function checkItems(items: Record<string, unknown>[], s: GraphStream, host: string): void {
  for (const e of items) {
    if (typeof e.id !== 'string' || e.id === '')
      throw new VendorError('invalid_response', `${host}: an item of ${s.path} has no id`);
    const t = e[s.timeField];
    if (typeof t !== 'string' || Number.isNaN(Date.parse(t)))
      throw new VendorError('invalid_response', `${host}: an item of ${s.path} has no ${s.timeField}`);
  }
}

function refuseParent(ctx: ConnectorContext): void {
  if (ctx.config.partner === true && ctx.tenantId === null) {
    throw new VendorError(
      'config',
      'a managed-provider parent (partner: true) collects nothing itself: its customer tenants are collected by its child integrations',
    );
  }
}

async function fetchPage(ctx: ConnectorContext, req: FetchRequest): Promise<Page> {
  const s = GRAPH_STREAMS[req.stream];
  if (!s) throw new VendorError('config', `microsoft_graph has no stream ${req.stream}`);
  if (!req.to)
    throw new VendorError('config', `${req.stream} is collected in time windows: the window end is required`);
  refuseParent(ctx);
  const t = graphTarget(ctx);
  const top = Math.max(1, Math.min(s.maxTop, req.pageSize));
  const url =
    resumable(req.cursor, t, s, req.from, req.to) ??
    graphUrl(t, s.path, {
      $filter: windowFilter(s, req.from, req.to) + (req.filter?.$filter ? ` and ${req.filter.$filter}` : ''),
      $top: String(top),
    });
  const page = collection(await graphGet(ctx, t, url), t, s.path);
  checkItems(page.value, s, t.graph.host);
  const from = req.from.getTime();
  const to = req.to.getTime();
  // Graph applies the filter already; the check keeps [from, to) exact whatever its edges.
  const inWindow = page.value.filter((e) => {
    const at = Date.parse(e[s.timeField] as string);
    return at >= from && at < to;
  });
  const next =
    page.nextLink && page.value.length > 0
      ? JSON.stringify({ from, to, link: page.nextLink } satisfies PageToken)
      : null;
  return { events: inWindow, keys: inWindow.map(s.key), next };
}

async function discover(ctx: ConnectorContext): Promise<TenantInfo[]> {
  const t = graphTarget(ctx);
  const found = new Map<string, TenantInfo>();
  let url: URL | null = graphUrl(t, CUSTOMERS_PATH, {});
  for (let pages = 0; url; pages++) {
    if (pages >= MAX_CUSTOMER_PAGES)
      throw new VendorError('invalid_response', `${t.graph.host}: delegatedAdminCustomers kept answering more pages`);
    const page = collection(await graphGet(ctx, t, url), t, 'delegatedAdminCustomers');
    for (const c of page.value) {
      const id = typeof c.tenantId === 'string' && c.tenantId !== '' ? c.tenantId : c.id;
      if (typeof id !== 'string' || id === '')
        throw new VendorError('invalid_response', `${t.graph.host}: a delegatedAdminCustomer has no tenant id`);
      const name = typeof c.displayName === 'string' && c.displayName !== '' ? c.displayName : id;
      found.set(id, {
        external_id: id,
        name,
        domain: null,
        details: { tenant_id: id, source: 'delegatedAdminCustomers' },
      });
    }
    url = page.value.length > 0 && page.nextLink ? new URL(page.nextLink) : null;
  }
  return [...found.values()];
}

async function test(ctx: ConnectorContext): Promise<string> {
  const t = graphTarget(ctx);
  if (ctx.config.partner === true && ctx.tenantId === null) {
    const page = collection(await graphGet(ctx, t, graphUrl(t, CUSTOMERS_PATH, {})), t, 'delegatedAdminCustomers');
    return `the app got a token for tenant ${t.tenant} and read its delegated admin customers (${page.value.length} on the first page)`;
  }
  const page = collection(
    await graphGet(ctx, t, graphUrl(t, GRAPH_STREAMS.signins!.path, { $top: '1' })),
    t,
    'auditLogs/signIns',
  );
  return `the app got a token for tenant ${t.tenant} and read its sign-in log (${page.value.length} sign-in)`;
}

const stream = (
  name: string,
  display_name: string,
  description: string,
  o: { retentionDays: number; pageSize: number; maxWindowMs: number },
) => ({
  name,
  display_name,
  description,
  cursor: 'date' as const,
  defaultWindowMs: HOUR_MS,
  intervalMs: 5 * MINUTE_MS,
  // Entra ID documents a few minutes between an event and its availability in the logs.
  settleMs: 5 * MINUTE_MS,
  ...o,
});

export const microsoftGraphConnector: Connector = {
  platform: 'microsoft_graph',
  display_name: 'Microsoft Entra ID and Defender XDR (Graph)',
  vendor: 'Microsoft',
  description:
    'Microsoft Entra ID sign-ins and directory audits, and Microsoft Defender XDR alerts, read from Microsoft Graph by an app registration ' +
    '(client credentials; application permissions AuditLog.Read.All and SecurityAlert.Read.All). A managed provider sets partner: true ' +
    'to discover its GDAP customer tenants; each customer is then collected by a child integration with the same app.',
  auth: 'oauth2_client_credentials',
  config_schema: pullConfigSchema(
    {
      tenant_id: {
        type: 'string',
        pattern: TENANT_PATTERN,
        errorMessage: { pattern: 'must be a tenant ID (a GUID) or a domain name such as contoso.onmicrosoft.com' },
        maxLength: 256,
        description: 'Directory (tenant) ID of the app registration, or a verified domain of the tenant',
      },
      client_id: {
        type: 'string',
        pattern: GUID_PATTERN,
        errorMessage: { pattern: 'must be a GUID such as 00000000-0000-0000-0000-000000000000' },
        description: 'Application (client) ID of the app registration',
      },
      client_secret: {
        type: 'string',
        minLength: 1,
        maxLength: 1024,
        writeOnly: true,
        description: 'A client secret (its value, not its id) of the app registration',
      },
      partner: {
        type: 'boolean',
        default: false,
        description:
          'A managed provider (GDAP partner): discovers its customer tenants and collects nothing itself; child integrations collect each customer',
      },
      login_url: urlField(
        'Microsoft identity platform endpoint (national clouds: https://login.microsoftonline.us, https://login.chinacloudapi.cn)',
        DEFAULT_LOGIN_URL,
      ),
      graph_url: urlField(
        'Microsoft Graph endpoint without version (national clouds: https://graph.microsoft.us, https://microsoftgraph.chinacloudapi.cn)',
        DEFAULT_GRAPH_URL,
      ),
    },
    ['tenant_id', 'client_id', 'client_secret'],
  ),
  streams: [
    stream(
      'signins',
      'Sign-ins',
      'Interactive user sign-ins of Microsoft Entra ID (signIn resources), keyed by id, windows on createdDateTime.',
      {
        retentionDays: 30,
        pageSize: 1000,
        maxWindowMs: 6 * HOUR_MS,
      },
    ),
    stream(
      'directory_audits',
      'Directory audits',
      'Microsoft Entra ID audit log (directoryAudit resources): user, group, application and policy changes, keyed by id, windows on activityDateTime.',
      {
        retentionDays: 30,
        pageSize: 1000,
        maxWindowMs: 6 * HOUR_MS,
      },
    ),
    // Alerts carry their evidence and are large: 500 a page keeps an answer to a few MB.
    stream(
      'security_alerts',
      'Security alerts',
      'Microsoft Defender XDR alerts (alert_v2 resources), windows on lastUpdateDateTime: every change of an alert is collected as a new version, keyed by id@lastUpdateDateTime.',
      {
        retentionDays: 180,
        pageSize: 500,
        maxWindowMs: DAY_MS,
      },
    ),
  ],
  fetchPage,
  query: graphQuery,
  test,
  tenants: { discover },
};
