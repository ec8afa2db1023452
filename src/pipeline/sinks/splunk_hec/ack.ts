// Indexer acknowledgement (Splunk documentation, "About HTTP Event Collector Indexer
// Acknowledgment"): with use_ack the sink sends on its data channel, reads the request's
// ackId and polls /services/collector/ack until HEC says the events are indexed. Only then is
// the batch delivered. A bounded wait without that answer fails retryably: the batch goes
// again, and HEC may index it twice (at least once; weir_event_id tells the copies apart).
import type { Pool } from 'undici';
import type { Redactor } from '../../../core/redaction.js';
import { httpRequest, shortAnswer, statusError } from '../http-common.js';
import { DeliveryError } from '../types.js';

const FIRST_POLL_MS = 200;
const MAX_POLL_MS = 2000;

export interface AckTarget {
  pool: Pool;
  ackPath: string;
  /** Authorization and the data channel of the request that got the ackId. */
  headers: Record<string, string>;
}

/** The ackId of a 2xx event answer with use_ack; a config error when the token does not acknowledge. */
export function ackIdOf(answer: { ackId?: unknown } | null): number {
  const id = answer?.ackId;
  if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return id;
  throw new DeliveryError(
    'config',
    'use_ack is on but HEC answered without an ackId: turn on indexer acknowledgement for the token, or turn use_ack off',
  );
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Polls until `ackId` is acknowledged; throws a retryable DeliveryError after `timeoutMs`. */
export async function awaitAck(
  target: AckTarget,
  ackId: number,
  timeoutMs: number,
  signal: AbortSignal,
  redact: Redactor,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const body = JSON.stringify({ acks: [ackId] });
  let wait = FIRST_POLL_MS;
  for (;;) {
    await sleep(Math.min(wait, Math.max(0, deadline - Date.now())), signal);
    const answer = await httpRequest(target.pool, {
      method: 'POST',
      path: target.ackPath,
      headers: { ...target.headers, 'content-type': 'application/json' },
      body,
      signal,
      maxBytes: 8192,
    });
    if (answer.status < 200 || answer.status >= 300) {
      const e = statusError(answer, redact, 'HEC ack');
      // 400 code 14 (ACK is disabled) or 10/11 (channel): the settings, not the moment.
      throw new DeliveryError(answer.status === 400 ? 'config' : e.kind, `${e.message} (acknowledgement query)`, {
        retryable: answer.status === 400 ? false : e.retryable,
        statusCode: answer.status,
        retryAfterMs: e.retryAfterMs,
      });
    }
    let acked: unknown;
    try {
      acked = (JSON.parse(answer.text) as { acks?: Record<string, unknown> }).acks?.[String(ackId)];
    } catch {
      acked = undefined;
    }
    if (acked === true) return;
    if (acked !== false)
      throw new DeliveryError('protocol', `HEC ack answer unreadable: ${shortAnswer(answer.text, redact)}`, {
        retryable: true,
        statusCode: answer.status,
      });
    if (Date.now() >= deadline)
      throw new DeliveryError(
        'timeout',
        `HEC did not acknowledge ackId ${ackId} within ${Math.round(timeoutMs / 1000)} s: the batch goes again (HEC may index it twice)`,
        { retryable: true },
      );
    wait = Math.min(MAX_POLL_MS, Math.round(wait * 1.5));
  }
}
