// The S3 calls of the object collector: the S3 sink's client (every connection through the
// SSRF guard, path-style for S3-compatible stores) and its failure mapping, with the sink's
// failure kinds told as the connector SDK's VendorError kinds. The SDK's own retries stay off
// here too: the shared backoff of the collection engine decides when to come back.
import type { Readable } from 'node:stream';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { createRedactor } from '../../core/redaction.js';
import { checkEndpointAddress, createS3Client, toDeliveryError } from '../../pipeline/sinks/s3/client.js';
import { DeliveryError } from '../../pipeline/sinks/types.js';
import { VendorError, configString, type ConnectorContext, type VendorErrorKind } from '../sdk.js';

export interface ListedObject {
  key: string;
  etag: string;
  /** LastModified, epoch milliseconds. */
  modifiedMs: number;
  size: number;
}

export interface S3Source {
  bucket: string;
  prefix: string;
  client: S3Client;
  /** A human name for messages: s3://bucket/prefix at the endpoint. */
  where: string;
  list(startAfter: string, maxKeys: number): Promise<{ objects: ListedObject[]; truncated: boolean }>;
  /** The object's body as a stream, if it still has this ETag (null: replaced or deleted since listed). */
  get(key: string, etag: string, range?: string): Promise<Readable | null>;
  /** A reader kept open between pages holds the client (its sockets) until it lets go. */
  hold(): () => void;
  /** Closes the client once nothing holds it. */
  close(): void;
}

const KIND: Record<string, VendorErrorKind> = {
  auth: 'auth',
  config: 'config',
  blocked_address: 'blocked_address',
  rate_limited: 'rate_limited',
  http_4xx: 'bad_request',
};

function vendorError(err: unknown, operation: string, secrets: string[], signal: AbortSignal): VendorError {
  if (err instanceof VendorError) return err;
  const d = err instanceof DeliveryError ? err : toDeliveryError(err, operation, createRedactor(secrets), signal);
  return new VendorError(KIND[d.kind] ?? 'unavailable', d.message, {
    ...(d.statusCode === undefined ? {} : { status: d.statusCode }),
    ...(d.retryAfterMs === undefined ? {} : { retryAfterMs: d.retryAfterMs }),
  });
}

function text(config: Readonly<Record<string, unknown>>, field: string): string | undefined {
  const v = config[field];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function openSource(ctx: ConnectorContext): S3Source {
  const { config } = ctx;
  if (!ctx.net) throw new VendorError('config', 'the S3 collector needs the outbound address policy');
  const bucket = configString(config, 'bucket');
  const prefix = text(config, 'prefix') ?? '';
  const endpoint = text(config, 'endpoint');
  const secretAccessKey = configString(config, 'secret_access_key');
  const sessionToken = text(config, 'session_token');
  const secrets = [secretAccessKey, ...(sessionToken ? [sessionToken] : [])];
  try {
    checkEndpointAddress(endpoint, ctx.net);
  } catch (err) {
    throw vendorError(err, 'endpoint', secrets, ctx.signal);
  }
  const client = createS3Client(
    {
      region: text(config, 'region') ?? 'us-east-1',
      ...(endpoint ? { endpoint } : {}),
      forcePathStyle: config.force_path_style === true,
      maxSockets: 8,
    },
    {
      access_key_id: configString(config, 'access_key_id'),
      secret_access_key: secretAccessKey,
      ...(sessionToken ? { session_token: sessionToken } : {}),
    },
    ctx.net,
  );
  const where = `s3://${bucket}/${prefix}${endpoint ? ` at ${new URL(endpoint).host}` : ''}`;
  let holds = 0;
  let closed = false;
  const settle = () => {
    if (closed && holds === 0) client.destroy();
  };
  return {
    bucket,
    prefix,
    client,
    where,
    async list(startAfter, maxKeys) {
      try {
        const out = await client.send(
          new ListObjectsV2Command({
            Bucket: bucket,
            ...(prefix ? { Prefix: prefix } : {}),
            ...(startAfter ? { StartAfter: startAfter } : {}),
            MaxKeys: maxKeys,
          }),
          { abortSignal: ctx.signal },
        );
        const objects: ListedObject[] = [];
        for (const o of out.Contents ?? []) {
          // A "folder" marker (key ending in /, no content) holds no events.
          if (!o.Key || (o.Key.endsWith('/') && !o.Size)) continue;
          objects.push({
            key: o.Key,
            etag: o.ETag ?? '',
            modifiedMs: o.LastModified ? o.LastModified.getTime() : 0,
            size: o.Size ?? 0,
          });
        }
        return { objects, truncated: out.IsTruncated === true };
      } catch (err) {
        throw vendorError(err, 'ListObjectsV2', secrets, ctx.signal);
      }
    },
    async get(key, etag, range) {
      try {
        const out = await client.send(
          new GetObjectCommand({
            Bucket: bucket,
            Key: key,
            ...(etag ? { IfMatch: etag } : {}),
            ...(range ? { Range: range } : {}),
          }),
          { abortSignal: ctx.signal },
        );
        return out.Body as Readable;
      } catch (err) {
        const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
        const status = e.$metadata?.httpStatusCode;
        if (status === 412 || status === 404 || e.name === 'NoSuchKey' || e.name === 'PreconditionFailed') return null;
        throw vendorError(err, 'GetObject', secrets, ctx.signal);
      }
    },
    hold() {
      holds++;
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        holds--;
        settle();
      };
    },
    close() {
      closed = true;
      settle();
    },
  };
}
