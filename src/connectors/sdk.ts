// The connector SDK: what a vendor connector declares and implements. A connector knows its
// vendor's API (auth, pagination, cursors, rate-limit headers) and nothing of Weir's
// storage: the collection engine (modules/collection) owns scheduling, locks, cursors,
// watermarks and durable acceptance, and calls fetchPage() one page at a time, advancing the
// stored cursor only after the page's events are durably accepted. docs/collection.md.
import type { ConfigSchema } from './platform-definition.js';
import type { VendorHttp } from './http.js';
import type { LiveQuerySpec } from './query.js';
import type { NetPolicy } from '../platform/net/policy.js';

/**
 * date: the stream is collected in time windows [from, to); everything before the watermark
 * has been accepted, so lag = now - watermark. opaque: the vendor hands out a resume token
 * (polling cursor) with no time meaning; the state has no watermark.
 */
export type CursorKind = 'date' | 'opaque';

export interface StreamSpec {
  /** The stream name events are normalized under (built-in mapping <platform>.<name>). */
  name: string;
  display_name: string;
  description: string;
  cursor: CursorKind;
  /** First run and cursor reset start this far back (the spec: typically one hour). */
  defaultWindowMs: number;
  /** Default time between cycles. */
  intervalMs: number;
  /** How long the vendor keeps this data: backfills are clamped to it, and a watermark older than it is a gap. */
  retentionDays: number;
  /** Events per page asked of the vendor (its maximum or a sensible share of it). */
  pageSize: number;
  /** Longest window one date cycle (or backfill chunk) asks for. */
  maxWindowMs: number;
  /** Vendor-side delay before events are queryable; windows end at now - settleMs so late arrivals are not skipped. */
  settleMs: number;
  /**
   * The records of this stream are another platform's (CloudTrail records read from S3): without
   * a mapping of its own (platform, stream), normalization uses that platform's mapping of that stream.
   */
  mappingOf?: { platform: string; stream: string };
  /**
   * The records of this stream are already OCSF events (Security Lake rows): without a mapping
   * of its own, each event passes through as itself, validated as any mapped event
   * (docs/mappings.md, "Streams that are already OCSF").
   */
  ocsf?: true;
}

export interface TenantInfo {
  /** The vendor's id of the customer tenant (Entra tenant id, ...). */
  external_id: string;
  name: string;
  domain?: string | null;
  details?: Record<string, unknown>;
}

/** One request for a page. */
export interface FetchRequest {
  stream: string;
  /**
   * date streams: the page token inside the window [from, to) (null = its first page).
   * opaque streams (live collection, to = null): the stored vendor cursor (null = start at from).
   */
  cursor: string | null;
  from: Date;
  /** End of the window (exclusive); null only for live collection of an opaque stream. */
  to: Date | null;
  pageSize: number;
  /**
   * Live queries: the vendor filter's request parameters (the connector's query.ts rendered
   * them), added to the window's first request. Collection never sets it.
   */
  filter?: Readonly<Record<string, string>>;
}

export interface Page {
  /** Raw vendor events, each a JSON object. */
  events: Record<string, unknown>[];
  /** The vendor's id of each event (dedup key), same order and length as events. */
  keys: string[];
  /**
   * date: the token of the next page of this window, or null when the window is complete.
   * opaque: the cursor to resume from (null keeps the current one).
   */
  next: string | null;
  /** opaque streams: true while the vendor has more right away (the page was full). */
  more?: boolean;
}

/** What a connector gets for one call: decrypted config, an HTTP client bound to the integration, a clock. */
export interface ConnectorContext {
  /** The integration's config with its secrets decrypted (never log it). */
  readonly config: Readonly<Record<string, unknown>>;
  /** For a child of a managed-provider parent: the customer tenant it collects. */
  readonly tenantId: string | null;
  readonly http: VendorHttp;
  /** Access tokens (OAuth2 and the like) cached per integration until they expire. */
  readonly tokens: TokenCache;
  now(): Date;
  readonly signal: AbortSignal;
  /**
   * The outbound address policy (SSRF guard), for a connector that must talk through a vendor
   * SDK with an HTTP stack of its own (S3's GetObject streams bodies larger than `http` reads).
   */
  readonly net?: NetPolicy;
}

export interface TokenCache {
  /** The cached token under key, or the one fetch() gives (cached for its ttl). */
  get(key: string, fetch: () => Promise<{ token: string; expiresInMs: number }>): Promise<string>;
  /** Forgets a token the vendor refused (401), so the next get() fetches a new one. */
  invalidate(key: string): void;
}

export type ConnectorAuth =
  'api_token' | 'oauth2_client_credentials' | 'service_account_jwt' | 'aws_sigv4' | 'bearer_token';

export interface Connector {
  /** Integration platform name (okta, microsoft_graph, ...). */
  platform: string;
  display_name: string;
  vendor: string;
  description: string;
  auth: ConnectorAuth;
  /**
   * JSON Schema of the integration's config; secret fields carry writeOnly: true (encrypted at
   * rest, never returned). Collection runs only when config.collect is true; then the
   * schema's if/then makes the credentials required.
   */
  config_schema: ConfigSchema;
  streams: StreamSpec[];
  /** The streams one integration's config collects (default: all); e.g. an object store input with one layout. */
  streamsFor?(config: Readonly<Record<string, unknown>>): string[];
  fetchPage(ctx: ConnectorContext, req: FetchRequest): Promise<Page>;
  /** A real, cheap call that proves the credentials work; throws VendorError when not. Returns what it checked. */
  test(ctx: ConnectorContext): Promise<string>;
  /** Live queries: what the vendor can filter itself, per stream (docs/live-queries.md). */
  query?: LiveQuerySpec;
  /** Managed providers: a parent lists its customer tenants. */
  tenants?: {
    discover(ctx: ConnectorContext): Promise<TenantInfo[]>;
  };
}

/**
 * Why a vendor call failed. auth: credentials refused (401/403 after a refresh); rate_limited:
 * the vendor asked to wait longer than a cycle may (retryAfterMs says how long); unavailable:
 * 5xx or network after retries; bad_request: the vendor refused the request (4xx), usually
 * config; invalid_response: the answer is not what the API documents.
 */
export type VendorErrorKind =
  'auth' | 'rate_limited' | 'unavailable' | 'bad_request' | 'invalid_response' | 'blocked_address' | 'config';

export class VendorError extends Error {
  constructor(
    readonly kind: VendorErrorKind,
    message: string,
    readonly details: { status?: number; retryAfterMs?: number } = {},
  ) {
    super(message);
    this.name = 'VendorError';
  }
}

/** Reads a string config field, or throws VendorError('config'). */
export function configString(config: Readonly<Record<string, unknown>>, field: string): string {
  const v = config[field];
  if (typeof v !== 'string' || v === '') throw new VendorError('config', `config.${field} is required for collection`);
  return v;
}

/** A stream by name, or undefined. */
export function streamOf(connector: Connector, name: string): StreamSpec | undefined {
  return connector.streams.find((s) => s.name === name);
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/**
 * The config schema of a pull platform: `collect` switches collection on, and then the
 * credentials become required (if/then). Without it the integration is push-only, so a
 * forwarder can still send this vendor's events with the ingestion token.
 */
export function pullConfigSchema(
  fields: Record<string, Record<string, unknown>>,
  requiredForCollection: string[],
): ConfigSchema {
  return {
    type: 'object',
    properties: {
      collect: {
        type: 'boolean',
        default: false,
        description: 'Collect from the vendor API on a schedule (the credentials below are then required)',
      },
      description: { type: 'string', maxLength: 1000, description: 'Free text about the source' },
      interval_seconds: {
        type: 'integer',
        minimum: 30,
        maximum: 86_400,
        description: "Time between collection cycles (default: the stream's)",
      },
      ...fields,
    },
    additionalProperties: false,
    if: { properties: { collect: { const: true } }, required: ['collect'] },
    then: { required: requiredForCollection },
  };
}

/** A config field holding an http(s) URL (a vendor API root, a token endpoint). */
export function urlField(description: string, defaultUrl?: string): Record<string, unknown> {
  return {
    type: 'string',
    format: 'uri',
    pattern: '^https?://',
    errorMessage: { pattern: 'must be an http:// or https:// URL' },
    maxLength: 2048,
    ...(defaultUrl === undefined ? {} : { default: defaultUrl }),
    description,
  };
}
