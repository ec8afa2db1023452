// POST /destinations/{id}/test: builds the destination's sink with the credential decrypted
// in memory, asks it to check the connection under a time limit, and closes it. Every
// failure becomes a TestResult (ok false, error_kind) rather than an error answer: the
// test succeeded in finding out that the destination does not work. Texts coming back
// from the sink or the server are redacted against the credential's own values.
import type { Logger } from '../../platform/logger.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import type { Credential } from '../../core/credentials.js';
import { redactAndCut } from '../../core/redaction.js';
import { destinationRedactor } from '../../pipeline/sinks/secrets.js';
import {
  DeliveryError,
  deliveryErrorIn,
  type DeliveryErrorKind,
  type Sink,
  type SinkType,
  type TestResult,
} from '../../pipeline/sinks/types.js';

export const TEST_TIMEOUT_MS = 10_000;

const NODE_ERROR_KINDS: Record<string, DeliveryErrorKind> = {
  ECONNREFUSED: 'connection',
  ECONNRESET: 'connection',
  EPIPE: 'connection',
  EHOSTUNREACH: 'connection',
  ENETUNREACH: 'connection',
  UND_ERR_SOCKET: 'connection',
  UND_ERR_CLOSED: 'connection',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
};

function codeOf(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** The kind of a failure thrown by a sink: its DeliveryError kind, else guessed from the Node error code. */
export function failureKind(err: unknown): DeliveryErrorKind {
  const known = deliveryErrorIn(err);
  if (known) return known.kind;
  const code = codeOf(err);
  if (code && NODE_ERROR_KINDS[code]) return NODE_ERROR_KINDS[code];
  if (code && /CERT|TLS|SSL/.test(code)) return 'tls';
  return 'protocol';
}

export interface TestInput {
  destinationId: string;
  organizationId: number | null;
  sinkType: SinkType;
  config: Record<string, unknown>;
  credential: Credential | null;
  net: NetPolicy;
  fileRoot: string;
  logger: Logger;
  timeoutMs?: number;
}

export async function testDestination(input: TestInput): Promise<TestResult> {
  const redactor = destinationRedactor(input.sinkType, input.credential, input.config);
  const redact = (text: string) => redactAndCut(redactor, text, 1000);
  const timeoutMs = input.timeoutMs ?? TEST_TIMEOUT_MS;
  const started = performance.now();
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  // A sink that ignores its signal still cannot hold the request past the limit.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new DeliveryError('timeout', `no answer within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
  });
  let sink: Sink | undefined;
  try {
    sink = input.sinkType.create({
      destinationId: input.destinationId,
      organizationId: input.organizationId,
      config: input.config,
      credential: input.credential,
      redact: redactor,
      net: input.net,
      fileRoot: input.fileRoot,
      logger: input.logger,
    });
    const result = await Promise.race([sink.test(controller.signal), deadline]);
    return {
      ok: result.ok,
      detail: redact(result.detail),
      latency_ms: Number.isFinite(result.latency_ms) ? Math.max(0, Math.round(result.latency_ms)) : elapsed(),
      ...(result.ok ? {} : { error_kind: result.error_kind ?? 'protocol' }),
    };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      ok: false,
      detail: redact(message || 'the test failed'),
      latency_ms: elapsed(),
      error_kind: failureKind(err),
    };
  } finally {
    clearTimeout(timer);
    if (sink) {
      await sink
        .close()
        .catch((err: unknown) =>
          input.logger.warn(
            { destination_id: input.destinationId, error_kind: failureKind(err) },
            'closing the tested sink failed',
          ),
        );
    }
  }
}
