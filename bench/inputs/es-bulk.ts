// The Elasticsearch _bulk input in the inputs benchmark: the events as a Filebeat-style
// NDJSON body (create actions on a dated filebeat index), gzip as Beats send it, with the
// ingestion token as the Basic password.
import { gzipSync } from 'node:zlib';
import { eachBatch } from './post.js';
import type { InputBench, InputBenchContext, InputSender } from './types.js';

export const esBulkBench: InputBench = {
  name: 'elasticsearch-bulk',
  async setup(ctx: InputBenchContext): Promise<InputSender> {
    const authorization = `Basic ${Buffer.from(`filebeat:${ctx.integration.token}`).toString('base64')}`;
    const url = `${ctx.baseUrl}/api/ingest/elasticsearch/_bulk`;
    const action = '{"create":{"_index":"filebeat-8.15.0-2026.11.29"}}\n';
    return {
      integrationId: ctx.integration.id,
      send: (events, batch) =>
        eachBatch(events, batch, async (slice) => {
          const body = slice.map((e) => `${action}${JSON.stringify(e)}\n`).join('');
          const res = await fetch(url, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json', 'content-encoding': 'gzip' },
            body: gzipSync(body),
          });
          const answer = (await res.json()) as { errors?: boolean };
          if (res.status !== 200 || answer.errors !== false)
            throw new Error(`_bulk answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
        }),
      async close() {},
    };
  },
};

export default esBulkBench;
