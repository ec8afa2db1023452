// The S3 client of one destination, with every connection going through the SSRF guard, and
// the mapping of the SDK's failures to DeliveryError kinds.
import { isIP } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { createGuardedNodeAgents } from '../../../platform/net/http.js';
import type { NetPolicy } from '../../../platform/net/policy.js';
import { parseRetryAfter } from '../../../platform/net/retry.js';
import { redactAndCut, type Redactor } from '../../../core/redaction.js';
import { DeliveryError, deliveryErrorIn } from '../types.js';

export interface S3Credential {
  access_key_id: string;
  secret_access_key: string;
  session_token?: string;
}

export interface S3ClientSettings {
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
  /** PEM authority of a store whose certificate no public authority signed. */
  ca?: string;
  /** Sockets per origin: at least the destination's concurrency. */
  maxSockets?: number;
}

export function createS3Client(settings: S3ClientSettings, credential: S3Credential, net: NetPolicy): S3Client {
  // The guard checks the address actually dialled, literal or resolved.
  const agents = createGuardedNodeAgents(net, {
    maxSockets: settings.maxSockets ?? 64,
    ...(settings.ca ? { ca: settings.ca } : {}),
  });
  return new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle,
    credentials: {
      accessKeyId: credential.access_key_id,
      secretAccessKey: credential.secret_access_key,
      ...(credential.session_token ? { sessionToken: credential.session_token } : {}),
    },
    // The delivery engine retries with its own backoff, breaker and dead-letter accounting.
    maxAttempts: 1,
    // Redirects to another region would reach an endpoint the administrator did not name.
    followRegionRedirects: false,
    useFipsEndpoint: false,
    useDualstackEndpoint: false,
    disableS3ExpressSessionAuth: true,
    // The SigV4-signed payload hash already protects the body; the newer default CRC32
    // headers are refused by several S3-compatible stores.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: new NodeHttpHandler({
      ...agents,
      connectionTimeout: 10_000,
    }),
  });
}

/**
 * A literal endpoint address refused by the guard, said before the SDK is built (the agents
 * refuse it at connect time too, but behind the SDK's wrapping of the error).
 */
export function checkEndpointAddress(endpoint: string | undefined, net: NetPolicy): void {
  if (!endpoint) return;
  let host: string;
  try {
    host = new URL(endpoint).hostname;
  } catch {
    throw new DeliveryError('config', 'endpoint is not a URL');
  }
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (!isIP(bare)) return;
  try {
    net.checkAddress(bare);
  } catch (err) {
    throw deliveryErrorIn(err) ?? err;
  }
}

const AUTH_CODES = new Set([
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'TokenRefreshRequired',
  'AllAccessDisabled',
  'AccountProblem',
  'InvalidSecurity',
  'Forbidden',
]);
const CONFIG_CODES = new Set([
  'NoSuchBucket',
  'NotFound',
  'AuthorizationHeaderMalformed',
  'PermanentRedirect',
  'TemporaryRedirect',
  'InvalidBucketName',
  'InvalidStorageClass',
  'InvalidArgument',
  'InvalidEncryptionAlgorithmError',
  'IllegalLocationConstraintException',
  'InvalidBucketState',
]);

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  cause?: unknown;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string | undefined> };
}

/** The SDK's failure of `operation` as a DeliveryError, its message redacted (the store's answer may echo the request). */
export function toDeliveryError(
  err: unknown,
  operation: string,
  redact: Redactor,
  signal?: AbortSignal,
): DeliveryError {
  const guard = deliveryErrorIn(err);
  if (guard) return guard;
  const e = (err ?? {}) as SdkError;
  if (signal?.aborted || e.name === 'AbortError')
    return new DeliveryError('timeout', `S3 ${operation}: no answer within the time limit`, { cause: err });

  const status = e.$metadata?.httpStatusCode;
  const code = e.name && !/^\d+$/.test(e.name) ? e.name : undefined;
  const said = e.message && e.message !== 'UnknownError' && e.message !== code ? `: ${e.message}` : '';
  const text = redactAndCut(redact, `S3 ${operation}: ${[status, code].filter(Boolean).join(' ')}${said}`, 500);
  const statusCode = status;

  if (status === undefined || status === 0) {
    const sys = e.code ?? (e.cause as SdkError | undefined)?.code;
    const msg = redactAndCut(
      redact,
      `S3 ${operation}: ${sys ?? e.name ?? 'error'}${e.message ? ` (${e.message})` : ''}`,
      500,
    );
    if (sys === 'ENOTFOUND' || sys === 'EAI_AGAIN') return new DeliveryError('dns', msg, { cause: err });
    if (sys && (/^ERR_TLS|^ERR_SSL/.test(sys) || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(sys)))
      return new DeliveryError('tls', msg, { cause: err });
    // The SDK renames ECONNRESET and EPIPE to TimeoutError (for its own retry rules): a
    // closed connection is still a connection failure here.
    if (sys === 'ECONNRESET' || sys === 'EPIPE' || sys === 'ECONNREFUSED')
      return new DeliveryError('connection', msg, { cause: err });
    if (e.name === 'TimeoutError' || sys === 'ETIMEDOUT') return new DeliveryError('timeout', msg, { cause: err });
    // Unreachable, closed early, and anything else that never got an answer.
    return new DeliveryError('connection', msg, { cause: err });
  }
  const retryAfterMs = parseRetryAfter(e.$response?.headers?.['retry-after']);
  if (code === 'SlowDown' || status === 429)
    return new DeliveryError('rate_limited', text, { statusCode, retryAfterMs });
  if (status >= 500) return new DeliveryError('http_5xx', text, { statusCode, retryAfterMs });
  // S3 answers RequestTimeout with 400; RequestTimeTooSkewed is cured on the next attempt
  // (the SDK corrects its clock offset from the server's Date).
  if (status === 408 || code === 'RequestTimeout' || code === 'RequestTimeTooSkewed')
    return new DeliveryError('http_4xx', text, { statusCode, retryable: true });
  if (code?.startsWith('KMS.')) return new DeliveryError(status === 403 ? 'auth' : 'config', text, { statusCode });
  if ((code && AUTH_CODES.has(code)) || status === 401 || status === 403)
    return new DeliveryError('auth', text, { statusCode });
  if ((code && CONFIG_CODES.has(code)) || status === 404 || (status >= 300 && status < 400)) {
    const region = e.$response?.headers?.['x-amz-bucket-region'];
    return new DeliveryError('config', region ? `${text} (the bucket is in region ${region})` : text, { statusCode });
  }
  return new DeliveryError('http_4xx', text, { statusCode });
}
