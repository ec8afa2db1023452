// The outbound network's own failures. platform/net sits below the pipeline and the
// connectors, so it cannot throw their errors: each caller maps a NetError to its own
// (sinks: DeliveryError, connectors: VendorError), keeping the kind and the message.

export type NetErrorKind = 'blocked_address' | 'dns' | 'connection' | 'timeout' | 'tls';

/** A connection that could not be made or kept; its message names codes and addresses, never a secret. */
export class NetError extends Error {
  readonly kind: NetErrorKind;

  constructor(kind: NetErrorKind, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'NetError';
    this.kind = kind;
  }
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
]);
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME']);
const TLS_CODE = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL)/;

/** The NetError in err's cause chain (undici wraps the connector's error), if any. */
export function findNetError(err: unknown): NetError | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (e instanceof NetError) return e;
  return undefined;
}

export function timeoutError(cause?: unknown): NetError {
  return new NetError('timeout', 'no answer within the time limit', { cause });
}

/**
 * Any failure of a request that got no answer, as a NetError whose message is built from
 * the error code only. An aborted signal wins: the deadline is why the request ended.
 */
export function toNetError(err: unknown, signal?: AbortSignal): NetError {
  if (signal?.aborted) return timeoutError(err);
  const found = findNetError(err);
  if (found) return found;
  const e = err as NodeJS.ErrnoException | undefined;
  const code = e?.code ?? (e?.cause as NodeJS.ErrnoException | undefined)?.code ?? '';
  if (e?.name === 'AbortError' || TIMEOUT_CODES.has(code)) return timeoutError(err);
  if (DNS_CODES.has(code)) return new NetError('dns', `cannot resolve the host (${code})`, { cause: err });
  if (CONNECTION_CODES.has(code)) return new NetError('connection', `connection failed (${code})`, { cause: err });
  if (TLS_CODE.test(code) || /certificate|ssl|tls/i.test(e?.message ?? ''))
    return new NetError('tls', `TLS handshake failed (${code || 'certificate not accepted'})`, { cause: err });
  return new NetError('connection', `request failed (${code || e?.name || 'unknown error'})`, { cause: err });
}
