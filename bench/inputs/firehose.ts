// The Amazon Data Firehose HTTP endpoint input in the inputs benchmark: the events as the
// records of delivery requests (one JSON object per record, base64), gzip as a Firehose
// stream with compression enabled sends them, the ingestion token as the access key.
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { eachBatch } from './post.js';
import type { InputBench, InputBenchContext, InputSender } from './types.js';

export const firehoseBench: InputBench = {
  name: 'firehose',
  async setup(ctx: InputBenchContext): Promise<InputSender> {
    const url = `${ctx.baseUrl}/api/ingest/firehose/events`;
    return {
      integrationId: ctx.integration.id,
      send: (events, batch) =>
        eachBatch(events, batch, async (slice) => {
          const requestId = randomUUID();
          const records = slice.map((e) => ({ data: Buffer.from(JSON.stringify(e)).toString('base64') }));
          const res = await fetch(url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'content-encoding': 'gzip',
              'x-amz-firehose-protocol-version': '1.0',
              'x-amz-firehose-request-id': requestId,
              'x-amz-firehose-access-key': ctx.integration.token,
            },
            body: gzipSync(JSON.stringify({ requestId, timestamp: Date.now(), records })),
          });
          const text = await res.text();
          if (res.status !== 200) throw new Error(`firehose answered ${res.status}: ${text.slice(0, 300)}`);
        }),
      async close() {},
    };
  },
};

export default firehoseBench;
