// The contract between the delivery engine and a destination type. A sink turns a batch of
// OCSF events into the destination's protocol and says what happened: everything accepted,
// some events refused or to retry, or a DeliveryError for the whole batch. Sinks never
// retry, batch or dead-letter themselves: the engine does (pipeline/delivery/).
import type { TSchema } from 'typebox';
import type { Credential } from '../../core/credentials.js';
import { createRedactor, type Redactor, type SecretValue } from '../../core/redaction.js';
import type { Logger } from '../../platform/logger.js';
import { NetError } from '../../platform/net/errors.js';
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
 * it from status codes and short server answers passed through ctx.redact, and the engine
 * redacts every text once more before it is stored.
 */
export class DeliveryError extends Error {
  readonly kind: DeliveryErrorKind;
  readonly retryable: boolean;
  readonly statusCode?: number;
  /** From Retry-After (seconds or HTTP date), when the server sent one. */
  readonly retryAfterMs?: number;

  constructor(
    kind: DeliveryErrorKind,
    message: string,
    options: { retryable?: boolean; statusCode?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DeliveryError';
    this.kind = kind;
    this.retryable = options.retryable ?? !['http_4xx', 'auth', 'config', 'blocked_address'].includes(kind);
    this.statusCode = options.statusCode;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** The guard's or the transport's NetError as a DeliveryError of the same kind and message. */
export function fromNetError(e: NetError): DeliveryError {
  return new DeliveryError(e.kind, e.message, { cause: e });
}

/** The first DeliveryError or NetError (mapped) in err's cause chain: undici and SDKs wrap them. */
export function deliveryErrorIn(err: unknown): DeliveryError | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof DeliveryError) return e;
    if (e instanceof NetError) return fromNetError(e);
  }
  return undefined;
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
  /** The destination's organization; null for a global destination. Local sinks keep each owner's files apart. */
  organizationId: number | null;
  /** Validated against the type's configSchema, defaults applied. */
  config: Record<string, unknown>;
  /** Decrypted in memory; null when the destination has none. Never logged. */
  credential: Credential | null;
  /** Hides the credential's values (every encoding, cut or whole) from a text: apply it before any cut (sinks/secrets.ts). */
  redact: Redactor;
  /** Every outbound connection goes through it (SSRF guard). */
  net: NetPolicy;
  /** The only directory tree local sinks (file) may write under (config.delivery.fileRoot). */
  fileRoot: string;
  /** How long a file sink's open file may go untouched before another process finishes it as left by a dead writer (default 60 s). */
  fileStaleMs?: number;
  logger: Logger;
}

/** What a dispatcher gives a destination type's recovery when it starts. */
export interface SinkHost {
  fileRoot: string;
  fileStaleMs: number;
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
   * The values to hide from every text about this destination: the secret fields (not user
   * names, key ids or certificates) and what the sink builds of them (the "user:password" of
   * a Basic header). Default: every string of the credential.
   */
  secretValues?(credential: Credential, config: Record<string, unknown>): (string | SecretValue)[];
  /**
   * The hosts deliveries connect to, read from a valid config, each with the config field
   * that names it (`url`); absent or empty for types that connect nowhere (file). Lets the
   * API say at creation that the SSRF guard will refuse one, instead of the DLQ saying it later.
   */
  targets?(config: Record<string, unknown>): SinkTarget[];
  create(ctx: SinkContext): Sink;
  /**
   * Finishes what processes killed earlier left behind (the file type's open files), when a
   * dispatcher starts; runs in the background until stop() (which a shutdown awaits).
   */
  recover?(host: SinkHost): { stop(): Promise<void> };
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

/**
 * A text with these secret values (in any encoding, cut or whole) and anything that looks like
 * a credential hidden, then cut at 500 characters. For a known destination prefer ctx.redact,
 * built once.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  const out = createRedactor(secrets)(text.length > 16_384 ? text.slice(0, 16_384) : text);
  return out.length > 500 ? `${out.slice(0, 500)}…` : out;
}
