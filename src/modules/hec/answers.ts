// Splunk HEC's answers: {text, code} with the HTTP status Splunk gives each code (Splunk
// documentation, "Troubleshoot HTTP Event Collector", status codes table), and how Weir's own
// errors (ingestion token, limits, backpressure) are told in that shape, since HEC clients read
// `code` and not Weir's {detail}.
import { isAppError } from '../../core/errors.js';

export const HEC_CODES = {
  0: [200, 'Success'],
  1: [403, 'Token disabled'],
  2: [401, 'Token is required'],
  3: [401, 'Invalid authorization'],
  4: [403, 'Invalid token'],
  5: [400, 'No data'],
  6: [400, 'Invalid data format'],
  7: [400, 'Incorrect index'],
  8: [500, 'Internal server error'],
  9: [503, 'Server is busy'],
  10: [400, 'Data channel is missing'],
  11: [400, 'Invalid data channel'],
  12: [400, 'Event field is required'],
  13: [400, 'Event field cannot be blank'],
  14: [400, 'ACK is disabled'],
  15: [400, 'Error in handling indexed fields'],
  16: [400, 'Query string authorization is not enabled'],
  17: [200, 'HEC is healthy'],
  18: [503, 'HEC is unhealthy, queues are full'],
} as const satisfies Record<number, readonly [number, string]>;

export type HecCode = keyof typeof HEC_CODES;

export interface HecBody {
  text: string;
  code: number;
  'invalid-event-number'?: number;
  ackId?: number;
  /** Weir's word on what is wrong, beside HEC's fixed `text`. */
  detail?: string;
}

/** The answer to an acknowledgement query. */
export interface HecAcks {
  acks: Record<string, boolean>;
}

/** An answer to send: its HTTP status, body and headers. */
export interface HecAnswer {
  status: number;
  body: HecBody | HecAcks;
  headers?: Record<string, string>;
}

/** HEC's answer for `code`; a refusal always carries a string `detail` (Weir's rule for every 4xx and 5xx). */
export function hecAnswer(code: HecCode, extra: Partial<HecBody> = {}, headers?: Record<string, string>): HecAnswer {
  const [status, text] = HEC_CODES[code];
  const body: HecBody = { text, code, ...extra };
  if (status >= 400 && body.detail === undefined) body.detail = text;
  return { status, body, ...(headers ? { headers } : {}) };
}

/** A request refused in HEC's terms (thrown inside the HEC service, answered by its routes). */
export class HecRefusal extends Error {
  constructor(readonly answer: HecAnswer) {
    super('text' in answer.body ? answer.body.text : 'refused');
    this.name = 'HecRefusal';
  }
}

export function refuse(code: HecCode, detail?: string, extra: Partial<HecBody> = {}): HecRefusal {
  return new HecRefusal(hecAnswer(code, detail ? { ...extra, detail } : extra));
}

/**
 * Weir's errors from the accept path in HEC's shape. The token errors get HEC's codes (2
 * none presented, 4 not valid, 1 integration inactive); saturation and an unavailable pipeline
 * get 503 code 9 with their Retry-After, the status Splunk answers when its queues are full
 * (429 included: HEC clients retry 503 code 9, not every one retries a 429). Any other
 * refusal (413 too large, 415 unsupported encoding, 400 bad gzip) keeps its HTTP status and
 * says what is wrong in `text`, with code 6.
 */
export function fromError(err: unknown, tokenPresented: boolean): HecAnswer | undefined {
  if (err instanceof HecRefusal) return err.answer;
  if (!isAppError(err)) return undefined;
  if (err.code === 'ingest.invalid_token')
    return hecAnswer(tokenPresented ? 4 : 2, {
      detail: tokenPresented
        ? "not this integration's ingestion token"
        : "send the integration's ingestion token as Authorization: Splunk <token>",
    });
  if (err.code === 'ingest.integration_inactive') return hecAnswer(1, { detail: err.message });
  if (err.status === 429 || err.status === 503) {
    const retryAfter = err.headers['retry-after'];
    return hecAnswer(9, { detail: err.message }, retryAfter ? { 'retry-after': retryAfter } : undefined);
  }
  if (err.status >= 400 && err.status < 500)
    return { status: err.status, body: { text: HEC_CODES[6][1], code: 6, detail: err.message } };
  return undefined;
}
