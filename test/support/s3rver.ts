// A local S3 server (s3rver, the dev dependency) for the object collector's tests and bench:
// its own temporary directory, a random loopback port, one bucket, uploads through the AWS
// SDK as a real writer would. s3rver accepts any Signature V4 made with its access key
// "S3RVER", and keeps an object's LastModified as its file's mtime: setModified() moves it,
// to stand for an object whose upload started earlier (a late delivery).
import { mkdtempSync, rmSync, utimesSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
// @ts-expect-error s3rver ships no type declarations
import S3rver from 's3rver';

interface S3rverServer {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}

export interface LocalS3 {
  endpoint: string;
  bucket: string;
  /** The integration config fields that reach this server. */
  config: Record<string, unknown>;
  put(key: string, body: Buffer | string): Promise<void>;
  /** Sets the object's LastModified (s3rver reads its file's mtime). */
  setModified(key: string, at: Date): void;
  close(): Promise<void>;
}

export async function startLocalS3(bucket = 'weir-logs'): Promise<LocalS3> {
  const directory = mkdtempSync(path.join(tmpdir(), 'weir-s3rver-'));
  const server = new (S3rver as new (options: Record<string, unknown>) => S3rverServer)({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  return {
    endpoint,
    bucket,
    config: {
      bucket,
      endpoint,
      force_path_style: true,
      region: 'us-east-1',
      access_key_id: 'S3RVER',
      secret_access_key: 'S3RVER',
    },
    async put(key, body) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    setModified(key, at) {
      const parts = key.split('/');
      const last = parts.pop()!;
      utimesSync(path.join(directory, bucket, ...parts, `${last}._S3rver_object`), at, at);
    },
    async close() {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
