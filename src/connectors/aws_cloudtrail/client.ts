// The CloudTrail LookupEvents call: AWS JSON 1.1 protocol, signed with Signature Version 4 by
// @smithy/signature-v4 (the signer the AWS SDK, and so the S3 sink, signs with), paced at
// CloudTrail's documented 2 requests per second per account and region, with AWS's own
// throttling answer (400 ThrottlingException) backed off and retried here because the shared
// HTTP client only knows 429. 5xx retries stay the shared client's.
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { backoffDelay, pause } from '../../platform/net/retry.js';
import { VendorError, configString, type ConnectorContext } from '../sdk.js';
import type { VendorResponse } from '../http.js';

const TARGET = 'com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.LookupEvents';
const CONTENT_TYPE = 'application/x-amz-json-1.1';
/** LookupEvents: 2 requests per second per account per region (CloudTrail quotas). */
const MIN_INTERVAL_MS = 500;
/** Throttled answers retried with backoff (full jitter under 0.5, 1, 2 s) before giving the cycle back. */
const THROTTLE_ATTEMPTS = 4;
const THROTTLE_BACKOFF_MS = 500;
/** When to come back after the retries were throttled too. */
const THROTTLED_RETRY_AFTER_MS = 30_000;
export const MAX_RESULTS = 50;

const THROTTLING = new Set(['ThrottlingException', 'Throttling', 'TooManyRequestsException', 'RequestLimitExceeded']);
const AUTH = new Set([
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'SignatureDoesNotMatch',
  'IncompleteSignatureException',
  'MissingAuthenticationTokenException',
  'ExpiredTokenException',
  'ExpiredToken',
  'InvalidClientTokenId',
  'AccessDeniedException',
  'AccessDenied',
  'NotAuthorized',
  'OptInRequired',
]);

/** node:crypto behind the hash interface the signer takes (the SDK's default lives in a package Weir does not ship). */
class Sha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    if (this.secret === undefined) return createHash('sha256');
    return createHmac('sha256', typeof this.secret === 'string' ? this.secret : bytes(this.secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(typeof data === 'string' ? data : bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

function bytes(data: ArrayBuffer | ArrayBufferView): Buffer {
  return ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data);
}

export function regionOf(ctx: ConnectorContext): string {
  const v = ctx.config.region;
  return typeof v === 'string' && v !== '' ? v : 'us-east-1';
}

export function endpointOf(ctx: ConnectorContext): URL {
  const override = ctx.config.endpoint;
  if (typeof override === 'string' && override !== '') return new URL(override);
  const region = regionOf(ctx);
  return new URL(`https://cloudtrail.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}/`);
}

/** Next free request slot per account key and region; shared by every cycle of the process. */
const slots = new Map<string, number>();

async function pace(key: string, signal: AbortSignal): Promise<void> {
  const now = Date.now();
  for (const [k, at] of slots) if (at < now) slots.delete(k);
  const slot = Math.max(now, slots.get(key) ?? 0);
  slots.set(key, slot + MIN_INTERVAL_MS);
  if (slot > now) await wait(slot - now, signal);
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return pause(ms, signal, () => new VendorError('unavailable', 'collection was stopped while waiting for CloudTrail'));
}

/** The error type of an AWS JSON answer: `__type` (possibly namespaced) or the x-amzn-ErrorType header. */
function awsError(res: VendorResponse): { type: string; message: string } {
  let body: { __type?: unknown; message?: unknown; Message?: unknown } = {};
  try {
    body = res.json();
  } catch {
    // an answer without a JSON body still has the header
  }
  const raw = typeof body.__type === 'string' ? body.__type : (res.header('x-amzn-errortype') ?? 'UnknownError');
  const type = raw.split('#').pop()!.split(':')[0]!;
  const message =
    typeof body.message === 'string' ? body.message : typeof body.Message === 'string' ? body.Message : '';
  return { type, message: message.slice(0, 300) };
}

export interface LookupInput {
  StartTime?: number;
  EndTime?: number;
  MaxResults: number;
  NextToken?: string;
  /** At most one: LookupEvents refuses more. */
  LookupAttributes?: { AttributeKey: string; AttributeValue: string }[];
}

export interface LookupEvent {
  EventId: string;
  /** Epoch seconds. */
  EventTime: number;
  record: Record<string, unknown>;
}

function parseEvents(res: VendorResponse, host: string): { events: LookupEvent[]; nextToken: string | undefined } {
  const body = res.json<{ Events?: unknown; NextToken?: unknown }>();
  if (typeof body !== 'object' || body === null || (body.Events !== undefined && !Array.isArray(body.Events))) {
    throw new VendorError('invalid_response', `${host}: the LookupEvents answer has no Events list`);
  }
  const events = ((body.Events as unknown[] | undefined) ?? []).map((e): LookupEvent => {
    const { EventId, EventTime, CloudTrailEvent } = (e ?? {}) as Record<string, unknown>;
    if (typeof EventId !== 'string' || typeof CloudTrailEvent !== 'string')
      throw new VendorError('invalid_response', `${host}: an event has no EventId or CloudTrailEvent`);
    let record: unknown;
    try {
      record = JSON.parse(CloudTrailEvent);
    } catch {
      throw new VendorError('invalid_response', `${host}: CloudTrailEvent of ${EventId} is not JSON`);
    }
    if (typeof record !== 'object' || record === null || Array.isArray(record))
      throw new VendorError('invalid_response', `${host}: CloudTrailEvent of ${EventId} is not an object`);
    const seconds =
      typeof EventTime === 'number'
        ? EventTime
        : Date.parse(String((record as Record<string, unknown>).eventTime)) / 1000;
    if (!Number.isFinite(seconds))
      throw new VendorError('invalid_response', `${host}: event ${EventId} has no EventTime`);
    return { EventId, EventTime: seconds, record: record as Record<string, unknown> };
  });
  const next = body.NextToken;
  return { events, nextToken: typeof next === 'string' && next !== '' ? next : undefined };
}

/**
 * One LookupEvents call. Null when CloudTrail refused the NextToken (InvalidNextTokenException:
 * expired, or written for other parameters): the caller restarts the window.
 */
export async function lookupEvents(
  ctx: ConnectorContext,
  input: LookupInput,
): Promise<{ events: LookupEvent[]; nextToken: string | undefined } | null> {
  const url = endpointOf(ctx);
  const region = regionOf(ctx);
  const accessKeyId = configString(ctx.config, 'access_key_id');
  const token = ctx.config.session_token;
  const signer = new SignatureV4({
    service: 'cloudtrail',
    region,
    sha256: Sha256,
    credentials: {
      accessKeyId,
      secretAccessKey: configString(ctx.config, 'secret_access_key'),
      ...(typeof token === 'string' && token !== '' ? { sessionToken: token } : {}),
    },
  });
  const body = JSON.stringify(input);
  for (let attempt = 1; ; attempt++) {
    await pace(`${accessKeyId}:${region}`, ctx.signal);
    const signed = await signer.sign(
      {
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query: {},
        headers: { host: url.host, 'content-type': CONTENT_TYPE, 'x-amz-target': TARGET },
        body,
      },
      { signingDate: ctx.now() },
    );
    const res = await ctx.http.request({ method: 'POST', url, headers: signed.headers, body, accept: [400, 403] });
    if (res.status === 200) return parseEvents(res, url.host);
    const err = awsError(res);
    const what = `${url.host}: ${err.type}${err.message ? `: ${err.message}` : ''}`;
    if (THROTTLING.has(err.type)) {
      ctx.http.usage.rateLimited += 1;
      if (attempt >= THROTTLE_ATTEMPTS)
        throw new VendorError('rate_limited', `${what} (still throttled after ${attempt} attempts)`, {
          status: res.status,
          retryAfterMs: THROTTLED_RETRY_AFTER_MS,
        });
      await wait(backoffDelay({ attempt, baseMs: THROTTLE_BACKOFF_MS, maxMs: THROTTLED_RETRY_AFTER_MS }), ctx.signal);
      continue;
    }
    ctx.http.usage.errors += 1;
    if (AUTH.has(err.type) || res.status === 403) throw new VendorError('auth', what, { status: res.status });
    if (err.type === 'InvalidNextTokenException' && input.NextToken !== undefined) return null;
    throw new VendorError('bad_request', what, { status: res.status });
  }
}
