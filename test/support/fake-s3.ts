// A minimal S3 server for sink tests, written from the public S3 REST documentation rather
// than from the SDK: path-style PutObject, GetObject and HeadBucket, with Signature Version 4
// verified the way S3 does (canonical request, scope, signing key, payload hash), S3's XML
// error bodies and status codes, and faults to inject (5xx, SlowDown, delays, resets).
// s3rver (the dev dependency) was tried first: it does not verify V4 signatures, so a wrong
// secret would be accepted and the auth mapping could not be tested against it.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeS3Credential {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** Operations this key may call (default all): a key without 'put' gets AccessDenied on PutObject. */
  allow?: ('put' | 'get' | 'head')[];
}

export interface FakeS3Options {
  credentials: FakeS3Credential[];
  /** Buckets that exist, with their region (default us-east-1). */
  buckets: (string | { name: string; region: string })[];
}

export interface StoredObject {
  body: Buffer;
  /** The headers S3 keeps with an object: content-type, content-encoding, x-amz-storage-class, x-amz-server-side-encryption... */
  headers: Record<string, string>;
}

export type Fault =
  | { status: number; code: string; message?: string; headers?: Record<string, string> }
  | { delayMs: number }
  | { reset: true };

export interface RecordedRequest {
  method: string;
  bucket: string;
  key: string;
  headers: Record<string, string | string[] | undefined>;
  status: number;
}

export interface FakeS3 {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  object(bucket: string, key: string): StoredObject | undefined;
  keys(bucket: string): string[];
  /** The next requests (one fault each, in order) fail or stall as described. */
  inject(...faults: Fault[]): void;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** A standalone copy of some bytes (readers such as hyparquet take an ArrayBuffer). */
export function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  const out = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(out).set(bytes);
  return out;
}

const STORAGE_CLASSES = new Set([
  'STANDARD',
  'REDUCED_REDUNDANCY',
  'STANDARD_IA',
  'ONEZONE_IA',
  'INTELLIGENT_TIERING',
  'GLACIER',
  'DEEP_ARCHIVE',
  'GLACIER_IR',
  'OUTPOSTS',
  'SNOW',
  'EXPRESS_ONEZONE',
]);
const SSE = new Set(['AES256', 'aws:kms', 'aws:kms:dsse']);
const KEPT_HEADERS = [
  'content-type',
  'content-encoding',
  'content-length',
  'x-amz-storage-class',
  'x-amz-server-side-encryption',
  'x-amz-server-side-encryption-aws-kms-key-id',
];
const MAX_SKEW_MS = 15 * 60_000;

/** A refused request; other AWS fakes (test/support/vendors/aws_cloudtrail.ts) map its S3 codes to their protocol's. */
export class S3Failure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
/** RFC 3986 encoding, as S3 canonicalizes URIs and query strings. */
const uriEncode = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function canonicalQuery(raw: string): string {
  if (!raw) return '';
  return raw
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf('=');
      const k = decodeURIComponent(eq < 0 ? pair : pair.slice(0, eq));
      const v = eq < 0 ? '' : decodeURIComponent(pair.slice(eq + 1));
      return [uriEncode(k), uriEncode(v)] as const;
    })
    .sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** Verifies an AWS4-HMAC-SHA256 Authorization header; returns the caller's credential. `expectedService` lets other AWS fakes reuse it. */
export function verifySignature(
  req: IncomingMessage,
  body: Buffer,
  credentials: FakeS3Credential[],
  bucketRegion: string | undefined,
  expectedService = 's3',
): FakeS3Credential {
  const auth = header(req, 'authorization');
  if (!auth) throw new S3Failure(403, 'AccessDenied', 'Access Denied');
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=([^,]+),\s*Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) throw new S3Failure(400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed.');
  const [, keyId, day, region, service, signedHeaders, signature] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const cred = credentials.find((c) => c.accessKeyId === keyId);
  if (!cred)
    throw new S3Failure(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  if (service !== expectedService)
    throw new S3Failure(
      400,
      'AuthorizationHeaderMalformed',
      `The authorization header is malformed; incorrect service "${service}". This endpoint belongs to "${expectedService}".`,
    );
  if (bucketRegion && region !== bucketRegion) {
    throw new S3Failure(
      400,
      'AuthorizationHeaderMalformed',
      `The authorization header is malformed; the region '${region}' is wrong; expecting '${bucketRegion}'`,
    );
  }
  const amzDate = header(req, 'x-amz-date') ?? '';
  const dm = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!dm || amzDate.slice(0, 8) !== day)
    throw new S3Failure(403, 'AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
  const at = Date.UTC(+dm[1]!, +dm[2]! - 1, +dm[3]!, +dm[4]!, +dm[5]!, +dm[6]!);
  if (Math.abs(Date.now() - at) > MAX_SKEW_MS)
    throw new S3Failure(
      403,
      'RequestTimeTooSkewed',
      'The difference between the request time and the current time is too large.',
    );

  const payloadHash = header(req, 'x-amz-content-sha256');
  if (!payloadHash)
    throw new S3Failure(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
  if (payloadHash.startsWith('STREAMING-'))
    throw new S3Failure(501, 'NotImplemented', 'aws-chunked uploads are not supported by this fake');
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256(body)) {
    throw new S3Failure(
      400,
      'XAmzContentSHA256Mismatch',
      "The provided 'x-amz-content-sha256' header does not match what was computed.",
    );
  }

  const names = signedHeaders.split(';');
  if (!names.includes('host')) throw new S3Failure(403, 'AccessDenied', 'host must be a signed header');
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const canonicalUri = path
    .split('/')
    .map((seg) => uriEncode(decodeURIComponent(seg)))
    .join('/');
  const canonicalHeaders = names.map((n) => `${n}:${(header(req, n) ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalRequest = [
    req.method,
    canonicalUri,
    canonicalQuery(q < 0 ? '' : url.slice(q + 1)),
    canonicalHeaders,
    signedHeaders,
    payloadHash,
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${cred.secretAccessKey}`, day), region), service), 'aws4_request');
  if (hmac(key, stringToSign).toString('hex') !== signature) {
    throw new S3Failure(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    );
  }

  const token = header(req, 'x-amz-security-token');
  if ((cred.sessionToken ?? undefined) !== token || (token !== undefined && !names.includes('x-amz-security-token'))) {
    throw new S3Failure(400, 'InvalidToken', 'The provided token is malformed or otherwise invalid.');
  }
  return cred;
}

export async function startFakeS3(options: FakeS3Options): Promise<FakeS3> {
  const buckets = new Map<string, { region: string; objects: Map<string, StoredObject> }>();
  for (const b of options.buckets) {
    const { name, region } = typeof b === 'string' ? { name: b, region: 'us-east-1' } : b;
    buckets.set(name, { region, objects: new Map() });
  }
  const faults: Fault[] = [];
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  function sendError(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    code: string,
    message: string,
    extra: Record<string, string> = {},
  ) {
    const requestId = randomBytes(8).toString('hex').toUpperCase();
    res.writeHead(status, { 'content-type': 'application/xml', 'x-amz-request-id': requestId, ...extra });
    // HEAD answers carry no body, which is why SDKs only see the status code there.
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    res.end(
      `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>${requestId}</RequestId><HostId>${randomBytes(12).toString('base64')}</HostId></Error>`,
    );
  }

  function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const path = (req.url ?? '/').split('?')[0]!;
    const [, rawBucket = '', ...rest] = path.split('/');
    const bucketName = decodeURIComponent(rawBucket);
    const key = rest.map((s) => decodeURIComponent(s)).join('/');
    const record: RecordedRequest = {
      method: req.method ?? '',
      bucket: bucketName,
      key,
      headers: req.headers,
      status: 0,
    };
    requests.push(record);
    const reply = (status: number) => (record.status = status);

    const fault = faults.shift();
    if (fault && 'reset' in fault) {
      req.socket.destroy();
      return;
    }
    if (fault && 'delayMs' in fault) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) handle2();
      }, fault.delayMs);
      timers.add(timer);
      return;
    }
    if (fault) {
      reply(fault.status);
      sendError(req, res, fault.status, fault.code, fault.message ?? fault.code, fault.headers);
      return;
    }
    handle2();

    function handle2() {
      try {
        const bucket = buckets.get(bucketName);
        const cred = verifySignature(req, body, options.credentials, bucket?.region);
        if (!bucketName) throw new S3Failure(501, 'NotImplemented', 'ListBuckets is not supported by this fake');
        const op =
          req.method === 'PUT' && key
            ? 'put'
            : req.method === 'GET' && key
              ? 'get'
              : req.method === 'HEAD' && !key
                ? 'head'
                : undefined;
        if (!op)
          throw new S3Failure(
            501,
            'NotImplemented',
            `${req.method} ${key ? 'object' : 'bucket'} is not supported by this fake`,
          );
        if (cred.allow && !cred.allow.includes(op)) throw new S3Failure(403, 'AccessDenied', 'Access Denied');
        if (!bucket) throw new S3Failure(404, 'NoSuchBucket', 'The specified bucket does not exist');

        if (op === 'head') {
          reply(200);
          res.writeHead(200, { 'x-amz-bucket-region': bucket.region }).end();
        } else if (op === 'get') {
          const obj = bucket.objects.get(key);
          if (!obj) throw new S3Failure(404, 'NoSuchKey', 'The specified key does not exist.');
          reply(200);
          res.writeHead(200, obj.headers).end(obj.body);
        } else {
          const md5 = header(req, 'content-md5');
          if (md5 && md5 !== createHash('md5').update(body).digest('base64'))
            throw new S3Failure(400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.');
          const storage = header(req, 'x-amz-storage-class');
          if (storage && !STORAGE_CLASSES.has(storage))
            throw new S3Failure(400, 'InvalidStorageClass', 'The storage class you specified is not valid');
          const sse = header(req, 'x-amz-server-side-encryption');
          if (sse && !SSE.has(sse))
            throw new S3Failure(400, 'InvalidArgument', 'The encryption method specified is not supported');
          if (header(req, 'x-amz-server-side-encryption-aws-kms-key-id') && !sse?.startsWith('aws:kms')) {
            throw new S3Failure(
              400,
              'InvalidArgument',
              'Server Side Encryption with KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms',
            );
          }
          const etag = `"${createHash('md5').update(body).digest('hex')}"`;
          const headers: Record<string, string> = { etag, 'last-modified': new Date().toUTCString() };
          for (const h of KEPT_HEADERS) {
            const v = header(req, h);
            if (v !== undefined) headers[h] = v;
          }
          bucket.objects.set(key, { body, headers });
          reply(200);
          res.writeHead(200, { etag, ...(sse ? { 'x-amz-server-side-encryption': sse } : {}) }).end();
        }
      } catch (err) {
        if (!(err instanceof S3Failure)) throw err;
        reply(err.status);
        sendError(req, res, err.status, err.code, err.message);
      }
    }
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    object: (bucket, key) => buckets.get(bucket)?.objects.get(key),
    keys: (bucket) => [...(buckets.get(bucket)?.objects.keys() ?? [])].sort(),
    inject: (...f) => void faults.push(...f),
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
