// The contract between the delivery engine and a destination type. A sink turns a batch of
// OCSF events into the destination's protocol and says what happened: everything accepted,
// some events refused or to retry, or a DeliveryError for the whole batch. Sinks never
// retry, batch or dead-letter themselves: the engine does (pipeline/delivery/).
import type { TSchema } from 'typebox';
import type { Logger } from '../../platform/logger.js';
import type { NetPolicy } from '../../platform/net/policy.js';

/** Where an event came from; shared by every event of one source row (no per-event allocation). */
export interface EventMeta {
  organization_id: number;
  integration_id: number;
  stream: string;
}

export interface SinkBatch {
  /** Envelope ids, aligned with lines. */
  ids: string[];
  /** Each event's OCSF JSON text (after the route's transforms), aligned with ids. */
  lines: string[];
  /** Each event's origin, aligned with ids. */
  meta: EventMeta[];
  /** The parsed events, built on first call and then shared. */
  events(): Record<string, unknown>[];
  /** Sum of the lines' lengths in bytes (UTF-8). */
  bytes: number;
}

/** Per-event outcomes of a batch the destination partly refused; indexes into the batch. */
export interface SinkResult {
  /** Refused for good (for example a mapping conflict in Elasticsearch): dead-lettered. */
  rejected?: { index: number; reason: string; statusCode?: number }[];
  /** Refused for now (for example 429 on one item of a _bulk request): retried. */
  retry?: { index: number; reason: string; statusCode?: number }[];
}

export type DeliveryErrorKind =
  | 'timeout'
  | 'connection' // refused, reset, closed early
  | 'dns'
  | 'tls'
  | 'blocked_address' // the SSRF guard refused the address
  | 'http_5xx'
  | 'http_4xx' // permanent unless 408 or 429
  | 'rate_limited' // 429
  | 'auth' // 401/403
  | 'config' // the destination's settings cannot work (bad URL, missing credential)
  | 'protocol'; // the server answered something the sink cannot read

/**
 * A failure of the whole batch. The message must never contain a credential: sinks build
 * it from status codes and short, redacted server answers (redactSecrets below).
 */
export class DeliveryError extends Error {
  readonly kind: DeliveryErrorKind;
  readonly retryable: boolean;
  readonly statusCode?: number;
  /** From Retry-After (seconds or HTTP date), when the server sent one. */
  readonly retryAfterMs?: number;

  constructor(kind: DeliveryErrorKind, message: string, options: { retryable?: boolean; statusCode?: number; retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DeliveryError';
    this.kind = kind;
    this.retryable = options.retryable ?? !['http_4xx', 'auth', 'config', 'blocked_address'].includes(kind);
    this.statusCode = options.statusCode;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** The outcome of POST /destinations/{id}/test: a real connection, never a delivery of events. */
export interface TestResult {
  ok: boolean;
  /** What was checked, in words ("HEC health endpoint answered 200"). */
  detail: string;
  latency_ms: number;
  error_kind?: DeliveryErrorKind;
}

export interface SinkContext {
  destinationId: string;
  /** Validated against the type's configSchema, defaults applied. */
  config: Record<string, unknown>;
  /** Decrypted in memory; null when the destination has none. Never logged. */
  credential: Record<string, string> | null;
  /** Every outbound connection goes through it (SSRF guard). */
  net: NetPolicy;
  /** The only directory tree local sinks (file) may write under (config.delivery.fileRoot). */
  fileRoot: string;
  logger: Logger;
}

/** A live connection to one destination, made by a dispatcher and reused across batches. */
export interface Sink {
  send(batch: SinkBatch, signal: AbortSignal): Promise<SinkResult>;
  test(signal: AbortSignal): Promise<TestResult>;
  close(): Promise<void>;
}

export interface SinkType {
  /** Stable identifier stored in destinations.type (http, splunk_hec, elasticsearch, syslog, s3, file, postgres). */
  type: string;
  title: string;
  description: string;
  /** JSON Schema (TypeBox) of the non-secret settings, served by destination-types. */
  configSchema: TSchema;
  /** JSON Schema of the secret fields (encrypted at rest); null when the type takes none. */
  credentialSchema: TSchema | null;
  /** Whether the type must have a credential to deliver. */
  credentialRequired: boolean;
  /**
   * The hosts deliveries connect to, read from a valid config, each with the config field
   * that names it (`url`); absent or empty for types that connect nowhere (file). Lets the
   * API say at creation that the SSRF guard will refuse one, instead of the DLQ saying it later.
   */
  targets?(config: Record<string, unknown>): SinkTarget[];
  create(ctx: SinkContext): Sink;
}

export interface SinkTarget {
  host: string;
  field: string;
}

/** The target of a URL config field; none when the field is absent or not a URL. */
export function urlTarget(config: Record<string, unknown>, field: string): SinkTarget[] {
  const raw = config[field];
  if (typeof raw !== 'string') return [];
  try {
    const host = new URL(raw).hostname;
    return host ? [{ host: host.startsWith('[') ? host.slice(1, -1) : host, field }] : [];
  } catch {
    return [];
  }
}

/** The target of a host config field. */
export function hostTarget(config: Record<string, unknown>, field: string): SinkTarget[] {
  const raw = config[field];
  return typeof raw === 'string' && raw !== '' ? [{ host: raw, field }] : [];
}

/** Strips anything that looks like a credential from a server's answer before it is stored or logged. */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text.length > 500 ? `${text.slice(0, 500)}…` : text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('[redacted]');
  return out.replace(/(authorization|api[-_]?key|token|password|secret)(["'\s:=]+)([^"'\s,}]+)/gi, '$1$2[redacted]');
}
