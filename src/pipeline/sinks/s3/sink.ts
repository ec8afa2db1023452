// The s3 sink: PutObject of one gzipped NDJSON object per batch, or of one Parquet object per
// (OCSF class, event day) group for Security Lake. Keys come from the envelope ids
// (layout.ts), so a batch sent again overwrites what it wrote the first time.
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';
import { HeadBucketCommand, PutObjectCommand, type PutObjectCommandInput, type S3Client } from '@aws-sdk/client-s3';
import { credentialString, type Credential } from '../../../core/credentials.js';
import {
  DeliveryError,
  type Sink,
  type SinkBatch,
  type SinkContext,
  type SinkResult,
  type TestResult,
} from '../types.js';
import { checkEndpointAddress, createS3Client, toDeliveryError, type S3Credential } from './client.js';
import { batchTime, idsDigest, ndjsonKey, securityLakeKey, sourceName, type SecurityLakeTarget } from './layout.js';
import { buildParquet, groupByClassAndDay } from './parquet.js';

const gzip = promisify(gzipCb);
/** Objects are kept for long: a little more CPU than level 1 for noticeably smaller objects. */
const GZIP_LEVEL = 3;

export interface S3Settings {
  bucket: string;
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
  ca?: string;
  prefix: string;
  format: 'ndjson_gz' | 'parquet_security_lake';
  securityLake?: SecurityLakeTarget;
  storageClass?: string;
  sse?: string;
  kmsKeyId?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The validated config as typed settings (defaults again here: the sink must not depend on who applied them). */
export function s3Settings(config: Record<string, unknown>): S3Settings {
  const endpoint = str(config.endpoint);
  const lake = config.security_lake as Record<string, unknown> | undefined;
  return {
    bucket: String(config.bucket ?? ''),
    region: str(config.region) ?? 'us-east-1',
    ...(endpoint ? { endpoint } : {}),
    forcePathStyle: typeof config.force_path_style === 'boolean' ? config.force_path_style : endpoint !== undefined,
    ...(str(config.tls_ca) ? { ca: str(config.tls_ca) } : {}),
    prefix: typeof config.prefix === 'string' ? config.prefix : 'weir/',
    format: config.format === 'parquet_security_lake' ? 'parquet_security_lake' : 'ndjson_gz',
    ...(lake && str(lake.source_name) && str(lake.account_id)
      ? {
          securityLake: {
            source_name: String(lake.source_name),
            account_id: String(lake.account_id),
            ...(str(lake.source_version) ? { source_version: String(lake.source_version) } : {}),
          },
        }
      : {}),
    ...(str(config.storage_class) ? { storageClass: str(config.storage_class) } : {}),
    ...(str(config.sse) ? { sse: str(config.sse) } : {}),
    ...(str(config.kms_key_id) ? { kmsKeyId: str(config.kms_key_id) } : {}),
  };
}

/** Why these settings cannot deliver, or undefined. */
export function settingsProblem(s: S3Settings, credential: Credential | null): string | undefined {
  if (!credentialString(credential, 'access_key_id') || !credentialString(credential, 'secret_access_key'))
    return 'the destination has no credential (access_key_id and secret_access_key)';
  if (!s.bucket) return 'bucket is required';
  if (s.format === 'parquet_security_lake' && !s.securityLake)
    return 'the parquet_security_lake format needs security_lake.source_name and security_lake.account_id';
  if (s.kmsKeyId && s.sse !== 'aws:kms') return 'kms_key_id needs sse aws:kms';
  return undefined;
}

export function createS3Sink(ctx: SinkContext): Sink {
  const settings = s3Settings(ctx.config);
  let client: S3Client | undefined;

  /** The client, built on first use so that a bad setting surfaces as a DeliveryError of send/test. */
  function ready(): S3Client {
    const problem = settingsProblem(settings, ctx.credential);
    if (problem) throw new DeliveryError('config', problem);
    checkEndpointAddress(settings.endpoint, ctx.net);
    if (!client) {
      const key: S3Credential = {
        access_key_id: credentialString(ctx.credential, 'access_key_id')!,
        secret_access_key: credentialString(ctx.credential, 'secret_access_key')!,
        session_token: credentialString(ctx.credential, 'session_token'),
      };
      client = createS3Client(settings, key, ctx.net);
    }
    return client;
  }

  async function put(
    s3: S3Client,
    key: string,
    body: Uint8Array,
    contentType: string,
    contentEncoding: string | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    const input: PutObjectCommandInput = {
      Bucket: settings.bucket,
      Key: key,
      Body: body,
      ContentLength: body.byteLength,
      ContentType: contentType,
      ...(contentEncoding ? { ContentEncoding: contentEncoding } : {}),
      ...(settings.storageClass
        ? { StorageClass: settings.storageClass as PutObjectCommandInput['StorageClass'] }
        : {}),
      ...(settings.sse ? { ServerSideEncryption: settings.sse as PutObjectCommandInput['ServerSideEncryption'] } : {}),
      ...(settings.kmsKeyId ? { SSEKMSKeyId: settings.kmsKeyId } : {}),
    };
    try {
      await s3.send(new PutObjectCommand(input), { abortSignal: signal });
    } catch (err) {
      throw toDeliveryError(err, 'PutObject', ctx.redact, signal);
    }
  }

  async function sendNdjson(s3: S3Client, batch: SinkBatch, signal: AbortSignal): Promise<SinkResult> {
    const body = await gzip(batch.lines.join('\n') + '\n', { level: GZIP_LEVEL });
    const key = ndjsonKey(settings.prefix, batchTime(batch), idsDigest(batch.ids));
    await put(s3, key, body, 'application/x-ndjson', 'gzip', signal);
    return {};
  }

  async function sendParquet(s3: S3Client, batch: SinkBatch, signal: AbortSignal): Promise<SinkResult> {
    const lake = settings.securityLake!;
    const events = batch.events();
    const time = batchTime(batch);
    const { groups, refused } = groupByClassAndDay(events, time);
    // Sequential: a batch holds few classes, and a failure stops before writing more (the
    // resend overwrites the objects already written, their keys being the same).
    for (const g of groups) {
      if (signal.aborted) throw new DeliveryError('timeout', 'S3 PutObject: no answer within the time limit');
      const key = securityLakeKey(
        lake,
        sourceName(lake.source_name, g.classUid, g.className),
        settings.region,
        g.day,
        time,
        idsDigest(g.indexes.map((i) => batch.ids[i]!)),
      );
      const body = buildParquet(
        g.indexes.map((i) => events[i]!),
        g.classUid,
        { gzipLevel: GZIP_LEVEL },
      );
      await put(s3, key, body, 'application/vnd.apache.parquet', undefined, signal);
    }
    return refused.length
      ? {
          rejected: refused.map((index) => ({
            index,
            reason: 'no numeric class_uid: a Security Lake object holds one OCSF class',
          })),
        }
      : {};
  }

  return {
    async send(batch, signal) {
      if (signal.aborted) throw new DeliveryError('timeout', 'S3 PutObject: no answer within the time limit');
      const s3 = ready();
      if (batch.ids.length === 0) return {};
      return settings.format === 'parquet_security_lake'
        ? sendParquet(s3, batch, signal)
        : sendNdjson(s3, batch, signal);
    },

    async test(signal) {
      const started = performance.now();
      const latency = () => Math.round(performance.now() - started);
      try {
        const s3 = ready();
        await s3.send(new HeadBucketCommand({ Bucket: settings.bucket }), { abortSignal: signal });
        return {
          ok: true,
          detail: `HeadBucket on ${settings.bucket} answered 200: the bucket exists and the credential is accepted`,
          latency_ms: latency(),
        };
      } catch (err) {
        const e = err instanceof DeliveryError ? err : toDeliveryError(err, 'HeadBucket', ctx.redact, signal);
        // A Security Lake provider role may write objects without s3:ListBucket (which HeadBucket needs).
        const hint =
          e.kind === 'auth'
            ? ' (HeadBucket needs s3:ListBucket on the bucket; a principal allowed only s3:PutObject can still deliver)'
            : '';
        const result: TestResult = {
          ok: false,
          detail: `${e.message}${hint}`,
          latency_ms: latency(),
          error_kind: e.kind,
        };
        return result;
      }
    },

    async close() {
      client?.destroy();
      client = undefined;
    },
  };
}
