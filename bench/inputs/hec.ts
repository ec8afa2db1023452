// Splunk HEC input (src/modules/hec): the events as concatenated HEC envelopes
// {"sourcetype":"bench","event":{...}}, one per line, POSTed to /services/collector/event with
// Authorization: Splunk <ingestion token>, as Splunk's forwarders, Vector and Fluent Bit send
// them. A 503 code 9 (server busy) is sent again after its Retry-After, as HEC clients do
// (post.ts).
import { eachBatch, postRetrying } from './post.js';
import type { InputBench, InputSender } from './types.js';

export const hecInput: InputBench = {
  name: 'splunk-hec',
  async setup(ctx): Promise<InputSender> {
    const url = `${ctx.baseUrl}/services/collector/event`;
    const headers = { authorization: `Splunk ${ctx.integration.token}`, 'content-type': 'application/json' };
    return {
      integrationId: ctx.integration.id,
      send: (events, batch) =>
        eachBatch(events, batch, (slice) =>
          postRetrying(
            'HEC',
            url,
            headers,
            slice.map((e) => `{"sourcetype":"bench","event":${JSON.stringify(e)}}`).join('\n'),
          ),
        ),
      async close() {},
    };
  },
};

export default hecInput;
