// An AWS CloudTrail LookupEvents simulator, written from the CloudTrail API reference and the
// AWS JSON 1.1 protocol: POST / with X-Amz-Target ...CloudTrail_20131101.LookupEvents and
// Content-Type application/x-amz-json-1.1; body {StartTime, EndTime (epoch seconds, both
// inclusive), MaxResults (1-50), NextToken, LookupAttributes (at most one)}; answer {Events
// (newest first), NextToken}. A NextToken only works with the parameters it was issued for
// (InvalidNextTokenException). Requests are verified with Signature Version 4 (service
// cloudtrail, the simulator's region) by the verifier of test/support/fake-s3.ts, and its S3
// codes are answered as CloudTrail's JSON errors (UnrecognizedClientException,
// InvalidSignatureException, ...). Throttling is AWS's: 400 ThrottlingException "Rate exceeded"
// beyond 2 requests per second (token bucket) or when injected; AWS sends no Retry-After.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3Failure, verifySignature, type FakeS3Credential } from '../fake-s3.js';
import type { EventPatch, FilteringSimulator, VendorSimulator } from './types.js';

export interface AwsCloudtrailSimulatorOptions {
  region?: string;
  /** Enforce LookupEvents' 2 requests per second (default true). */
  enforceRate?: boolean;
}

export interface AwsCloudtrailSimulator extends VendorSimulator, FilteringSimulator {
  /** A config signing with temporary credentials (ASIA key + session token); expireTokens() expires them. */
  sessionConfig(): Record<string, unknown>;
  /** Answers refused as throttled so far (injected or over the rate). */
  readonly throttled: number;
  /** Request bodies received by LookupEvents, for assertions on what was asked. */
  readonly bodies: Record<string, unknown>[];
}

interface StoredEvent {
  id: string;
  seconds: number;
  record: Record<string, unknown>;
}

const TARGET = 'com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.LookupEvents';
const FIXTURES = JSON.parse(
  readFileSync(new URL('../../../src/connectors/aws_cloudtrail/fixtures/cloudtrail.json', import.meta.url), 'utf8'),
) as Record<string, unknown>[];
const ATTRIBUTE: Record<string, (e: StoredEvent) => unknown> = {
  EventId: (e) => e.id,
  EventName: (e) => e.record.eventName,
  EventSource: (e) => e.record.eventSource,
  ReadOnly: (e) => String(e.record.readOnly),
  Username: (e) => username(e.record),
  AccessKeyId: (e) => (e.record.userIdentity as Record<string, unknown> | undefined)?.accessKeyId,
};

class AwsFailure extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** S3's signature codes as the JSON protocol services answer them. */
function fromS3(err: S3Failure, hasAuth: boolean): AwsFailure {
  switch (err.code) {
    case 'InvalidAccessKeyId':
    case 'InvalidToken':
      return new AwsFailure(
        400,
        'UnrecognizedClientException',
        'The security token included in the request is invalid.',
      );
    case 'SignatureDoesNotMatch':
    case 'XAmzContentSHA256Mismatch':
      return new AwsFailure(
        400,
        'InvalidSignatureException',
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
      );
    case 'RequestTimeTooSkewed':
      return new AwsFailure(
        400,
        'InvalidSignatureException',
        'Signature expired: the request time is more than 5 minutes away from the server time.',
      );
    case 'AccessDenied':
      return hasAuth
        ? new AwsFailure(400, 'IncompleteSignatureException', err.message)
        : new AwsFailure(400, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
    default:
      return new AwsFailure(400, 'IncompleteSignatureException', err.message);
  }
}

function username(record: Record<string, unknown>): string | undefined {
  const who = (record.userIdentity ?? {}) as Record<string, unknown>;
  const session = (who.sessionContext as { sessionIssuer?: { userName?: string } } | undefined)?.sessionIssuer
    ?.userName;
  return (
    (who.userName as string | undefined) ??
    session ??
    (typeof who.principalId === 'string' ? who.principalId.split(':').pop() : undefined)
  );
}

function envelope(e: StoredEvent): Record<string, unknown> {
  const resources = ((e.record.resources ?? []) as { type?: string; ARN?: string }[]).map((r) => ({
    ResourceType: r.type,
    ResourceName: r.ARN,
  }));
  return {
    EventId: e.id,
    EventName: e.record.eventName,
    ReadOnly: String(e.record.readOnly ?? 'false'),
    AccessKeyId: (e.record.userIdentity as Record<string, unknown> | undefined)?.accessKeyId,
    EventTime: e.seconds,
    EventSource: e.record.eventSource,
    Username: username(e.record),
    Resources: resources,
    CloudTrailEvent: JSON.stringify(e.record),
  };
}

export async function startAwsCloudtrailSimulator(
  options: AwsCloudtrailSimulatorOptions = {},
): Promise<AwsCloudtrailSimulator> {
  const region = options.region ?? 'eu-west-1';
  const enforceRate = options.enforceRate ?? true;
  const suffix = () => randomUUID().replace(/-/g, '').slice(0, 16).toUpperCase();
  const permanent: FakeS3Credential = { accessKeyId: `AKIA${suffix()}`, secretAccessKey: randomUUID() + randomUUID() };
  const temporary: FakeS3Credential = {
    accessKeyId: `ASIA${suffix()}`,
    secretAccessKey: randomUUID() + randomUUID(),
    sessionToken: Buffer.from(randomUUID()).toString('base64'),
  };
  let sessionExpired = false;
  const events: StoredEvent[] = [];
  const pages = new Map<string, { params: string; offset: number }>();
  const faults: ('throttle' | 'server')[] = [];
  const bodies: Record<string, unknown>[] = [];
  let requests = 0;
  let throttled = 0;
  // LookupEvents allows 2 requests per second: a bucket of 2 refilled at 2 per second.
  let bucket = { tokens: 2, at: Date.now() };

  function overRate(): boolean {
    const now = Date.now();
    bucket = { tokens: Math.min(2, bucket.tokens + ((now - bucket.at) / 1000) * 2), at: now };
    if (bucket.tokens < 1) return true;
    bucket.tokens -= 1;
    return false;
  }

  function send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
    res.end(JSON.stringify(body));
  }

  function lookup(input: Record<string, unknown>): Record<string, unknown> {
    const { StartTime, EndTime, MaxResults, NextToken, LookupAttributes } = input;
    for (const [name, v] of [
      ['StartTime', StartTime],
      ['EndTime', EndTime],
    ] as const) {
      if (v !== undefined && typeof v !== 'number')
        throw new AwsFailure(400, 'SerializationException', `${name} must be a timestamp in epoch seconds`);
    }
    const max = MaxResults ?? 50;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 50)
      throw new AwsFailure(400, 'InvalidMaxResultsException', 'MaxResults must be an integer between 1 and 50.');
    const nowS = Date.now() / 1000;
    const start = (StartTime as number | undefined) ?? nowS - 90 * 86_400;
    const end = (EndTime as number | undefined) ?? nowS;
    if (start > end) throw new AwsFailure(400, 'InvalidTimeRangeException', 'Start time should be before end time.');
    const attrs = (LookupAttributes ?? []) as { AttributeKey?: string; AttributeValue?: string }[];
    if (!Array.isArray(attrs) || attrs.length > 1)
      throw new AwsFailure(400, 'InvalidLookupAttributesException', 'Only one lookup attribute is allowed.');
    const attr = attrs[0];
    if (attr && (!attr.AttributeKey || !ATTRIBUTE[attr.AttributeKey]))
      throw new AwsFailure(400, 'InvalidLookupAttributesException', `Invalid attribute key: ${attr.AttributeKey}`);
    const params = JSON.stringify([start, end, attr ?? null]);
    let offset = 0;
    if (NextToken !== undefined) {
      const page = typeof NextToken === 'string' ? pages.get(NextToken) : undefined;
      if (!page || page.params !== params) throw new AwsFailure(400, 'InvalidNextTokenException', 'Invalid NextToken');
      offset = page.offset;
    }
    const matching = events
      .filter(
        (e) =>
          e.seconds >= start &&
          e.seconds <= end &&
          (!attr || String(ATTRIBUTE[attr.AttributeKey!]!(e)) === attr.AttributeValue),
      )
      .sort((a, b) => b.seconds - a.seconds);
    const slice = matching.slice(offset, offset + max);
    const out: Record<string, unknown> = { Events: slice.map(envelope) };
    if (offset + max < matching.length) {
      const token = Buffer.from(randomUUID() + randomUUID()).toString('base64');
      pages.set(token, { params, offset: offset + max });
      out.NextToken = token;
    }
    return out;
  }

  function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    try {
      if (req.method !== 'POST' || (req.url ?? '/').split('?')[0] !== '/')
        throw new AwsFailure(404, 'UnknownOperationException', 'Unknown operation');
      let cred: FakeS3Credential;
      try {
        cred = verifySignature(req, body, [permanent, temporary], region, 'cloudtrail');
      } catch (err) {
        if (err instanceof S3Failure) throw fromS3(err, req.headers.authorization !== undefined);
        throw err;
      }
      if (cred === temporary && sessionExpired)
        throw new AwsFailure(400, 'ExpiredTokenException', 'The security token included in the request is expired');
      if (req.headers['x-amz-target'] !== TARGET)
        throw new AwsFailure(400, 'UnknownOperationException', 'Unknown operation');
      if (req.headers['content-type'] !== 'application/x-amz-json-1.1')
        throw new AwsFailure(400, 'SerializationException', 'Content-Type must be application/x-amz-json-1.1');
      requests += 1;
      const fault = faults[0] === 'server' ? faults.shift() : undefined;
      if (fault === 'server')
        throw new AwsFailure(
          requests % 2 ? 500 : 503,
          requests % 2 ? 'InternalFailure' : 'ServiceUnavailable',
          'The request processing has failed because of an unknown error.',
        );
      if (faults[0] === 'throttle' || (enforceRate && overRate())) {
        if (faults[0] === 'throttle') faults.shift();
        throttled += 1;
        throw new AwsFailure(400, 'ThrottlingException', 'Rate exceeded');
      }
      let input: unknown;
      try {
        input = JSON.parse(body.toString('utf8') || '{}');
      } catch {
        throw new AwsFailure(400, 'SerializationException', 'The request body is not JSON');
      }
      if (typeof input !== 'object' || input === null || Array.isArray(input))
        throw new AwsFailure(400, 'SerializationException', 'The request body must be a JSON object');
      bodies.push(input as Record<string, unknown>);
      send(res, 200, lookup(input as Record<string, unknown>));
    } catch (err) {
      if (!(err instanceof AwsFailure)) throw err;
      send(res, err.status, { __type: err.type, message: err.message });
    }
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const checkStream = (stream: string) => {
    if (stream !== 'cloudtrail') throw new Error(`aws_cloudtrail has no stream ${stream}`);
  };
  const configOf = (c: FakeS3Credential) => ({
    collect: true,
    region,
    endpoint: url,
    access_key_id: c.accessKeyId,
    secret_access_key: c.secretAccessKey,
    ...(c.sessionToken ? { session_token: c.sessionToken } : {}),
  });

  function add(stream: string, n: number, window?: { from: Date; to: Date }, patch?: EventPatch): string[] {
    checkStream(stream);
    const to = window?.to ?? new Date(Date.now() - 2 * 60_000);
    const from = window?.from ?? new Date(to.getTime() - 30 * 60_000);
    const span = to.getTime() - from.getTime();
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      // CloudTrail times are whole seconds: the first whole second at or after the even spot, unless that leaves the window.
      const at = from.getTime() + Math.floor((i * span) / n);
      const seconds = Math.ceil(at / 1000) * 1000 < to.getTime() ? Math.ceil(at / 1000) : Math.floor(at / 1000);
      const record = structuredClone(FIXTURES[i % FIXTURES.length]!);
      patch?.(record, i);
      const id = randomUUID();
      Object.assign(record, {
        eventID: id,
        eventTime: new Date(seconds * 1000).toISOString().replace('.000Z', 'Z'),
        requestID: randomUUID(),
        awsRegion: region,
      });
      events.push({ id, seconds, record });
      ids.push(id);
    }
    return ids;
  }

  return {
    url,
    platform: 'aws_cloudtrail',
    config: () => configOf(permanent),
    sessionConfig: () => configOf(temporary),
    addEvents: (stream, n, window) => add(stream, n, window),
    addPatched: (stream, n, window, patch) => add(stream, n, window, patch),
    get filters() {
      return bodies.flatMap((b) => (Array.isArray(b.LookupAttributes) ? [JSON.stringify(b.LookupAttributes)] : []));
    },
    eventIds(stream) {
      checkStream(stream);
      return [...events].sort((a, b) => a.seconds - b.seconds).map((e) => e.id);
    },
    rateLimit(count) {
      // AWS answers a throttled call with 400 ThrottlingException and no Retry-After: the seconds asked for are not sent.
      for (let i = 0; i < count; i++) faults.push('throttle');
    },
    serverError(count) {
      for (let i = 0; i < count; i++) faults.push('server');
    },
    expireTokens() {
      sessionExpired = true;
    },
    get requests() {
      return requests;
    },
    get throttled() {
      return throttled;
    },
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
