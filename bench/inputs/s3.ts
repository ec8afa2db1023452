// S3 object collection in the inputs benchmark: events written as NDJSON objects of `batch`
// events to a local S3 server (s3rver, started here unless WEIR_BENCH_S3_ENDPOINT names a
// running S3-compatible store whose credentials are WEIR_BENCH_S3_ACCESS_KEY_ID and
// WEIR_BENCH_S3_SECRET_ACCESS_KEY), collected by an aws_s3 integration (layout ndjson).
//
// Collection is pulled, not pushed: after the uploads, send() triggers a cycle of the
// integration's `objects` stream (POST /api/collectors/state/{id}/objects/trigger). A cycle
// reads at most the collector setting max_pages_per_cycle pages of 1000 events; a capped
// stream is due again at the next scheduler pass, so run the Weir under test with a short
// WEIR_COLLECT_SCHEDULE_MS (e.g. 500) for a large run to be read without waiting out the
// one-minute interval.
import { randomUUID } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startLocalS3, type LocalS3 } from '../../test/support/s3rver.js';
import type { InputBench, InputBenchContext, InputSender } from './types.js';

async function store(): Promise<{ config: Record<string, unknown>; local?: LocalS3 }> {
  const endpoint = process.env.WEIR_BENCH_S3_ENDPOINT;
  if (!endpoint) {
    const local = await startLocalS3('weir-bench');
    return { config: local.config, local };
  }
  return {
    config: {
      bucket: process.env.WEIR_BENCH_S3_BUCKET ?? 'weir-bench',
      endpoint,
      force_path_style: true,
      region: process.env.WEIR_BENCH_S3_REGION ?? 'us-east-1',
      access_key_id: process.env.WEIR_BENCH_S3_ACCESS_KEY_ID ?? '',
      secret_access_key: process.env.WEIR_BENCH_S3_SECRET_ACCESS_KEY ?? '',
    },
  };
}

export const s3Input: InputBench = {
  name: 's3',
  async setup(ctx: InputBenchContext): Promise<InputSender> {
    const { config, local } = await store();
    const prefix = `bench/${randomUUID()}/`;
    const integrationId = await ctx.createIntegration({
      name: `bench s3 ${prefix}`,
      platform: 'aws_s3',
      organization_id: ctx.organizationId,
      config: { collect: true, ...config, prefix, layout: 'ndjson' },
    });
    const client = new S3Client({
      region: String(config.region),
      endpoint: String(config.endpoint),
      forcePathStyle: true,
      credentials: { accessKeyId: String(config.access_key_id), secretAccessKey: String(config.secret_access_key) },
    });
    let sequence = 0;
    return {
      integrationId,
      async send(events, batch) {
        for (let start = 0; start < events.length; start += batch) {
          const body = events
            .slice(start, start + batch)
            .map((e) => JSON.stringify(e))
            .join('\n');
          const key = `${prefix}${String(sequence++).padStart(8, '0')}.ndjson`;
          await client.send(new PutObjectCommand({ Bucket: String(config.bucket), Key: key, Body: body }));
        }
        const res = await fetch(`${ctx.baseUrl}/api/collectors/state/${integrationId}/objects/trigger`, {
          method: 'POST',
          headers: { cookie: ctx.cookie },
        });
        if (res.status !== 202 && res.status !== 200)
          throw new Error(`collection trigger: ${res.status} ${await res.text()}`);
      },
      async close() {
        client.destroy();
        await local?.close();
      },
    };
  },
};

export default s3Input;
