// One bounded call to a vendor on behalf of an API request (connection test, tenant
// discovery): opens the connector, runs the call under a deadline, closes it, and turns every
// failure into an outcome instead of an error answer. The vendor being down or refusing the
// credentials is what the caller asked to find out, not a fault of Weir, so it never becomes
// a 5xx; error texts are stripped of the target's secret values.
import { createRedactor, redactAndCut } from '../core/redaction.js';
import type { ConnectorRuntime, ConnectorTarget } from './runtime.js';
import { VendorError, type ConnectorContext, type VendorErrorKind } from './sdk.js';

export interface VendorFailure {
  kind: VendorErrorKind | 'timeout' | 'connector_error';
  message: string;
  /** The vendor's HTTP status, when it answered. */
  status: number | null;
}

export type CallOutcome<T> =
  { ok: true; value: T; latencyMs: number } | { ok: false; error: VendorFailure; latencyMs: number };

export interface CallOptions {
  /** The whole call, retries included. */
  timeoutMs: number;
  /** Longest Retry-After waited inside the call (shorter than collection's: someone is waiting). */
  maxRetryWaitMs: number;
}

export const INTERACTIVE_CALL: CallOptions = { timeoutMs: 20_000, maxRetryWaitMs: 5_000 };

/** The text with the secret values hidden in every encoding, cut or whole (core/redaction.ts), then cut at 500. */
export function redact(text: string, secrets: readonly string[]): string {
  return redactAndCut(createRedactor(secrets), text, 501);
}

function failureOf(err: unknown, secrets: readonly string[]): VendorFailure {
  if (err instanceof VendorError)
    return { kind: err.kind, message: redact(err.message, secrets), status: err.details.status ?? null };
  // A connector bug (TypeError, ...): its message may quote the config, so it is redacted too.
  const message = err instanceof Error ? `${err.name}: ${err.message}` : 'unknown failure';
  return { kind: 'connector_error', message: redact(message, secrets), status: null };
}

export async function callVendor<T>(
  runtime: ConnectorRuntime,
  target: ConnectorTarget,
  fn: (ctx: ConnectorContext) => Promise<T>,
  options: CallOptions = INTERACTIVE_CALL,
): Promise<CallOutcome<T>> {
  const controller = new AbortController();
  const started = performance.now();
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  let timer: NodeJS.Timeout | undefined;
  // A connector that ignores its signal still cannot hold the request past the deadline.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(Object.assign(new Error('deadline'), { deadline: true }));
    }, options.timeoutMs);
  });
  const open = runtime.open(target, controller.signal, { maxRetryWaitMs: options.maxRetryWaitMs });
  try {
    const value = await Promise.race([fn(open.ctx), deadline]);
    return { ok: true, value, latencyMs: elapsed() };
  } catch (err) {
    if (
      (err as { deadline?: boolean }).deadline ||
      (controller.signal.aborted && !(err instanceof VendorError && err.kind !== 'unavailable'))
    ) {
      return {
        ok: false,
        error: {
          kind: 'timeout',
          message: `no answer from the vendor within ${Math.round(options.timeoutMs / 1000)} s`,
          status: null,
        },
        latencyMs: elapsed(),
      };
    }
    return { ok: false, error: failureOf(err, target.secrets), latencyMs: elapsed() };
  } finally {
    clearTimeout(timer);
    await open.close().catch(() => undefined);
  }
}
