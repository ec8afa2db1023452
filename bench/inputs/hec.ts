// Splunk HEC input (src/modules/hec): the events as concatenated HEC envelopes
// {"sourcetype":"bench","event":{...}}, one per line, POSTed to /services/collector/event with
// Authorization: Splunk <ingestion token>, as Splunk's forwarders, Vector and Fluent Bit send
// them. A 503 code 9 (server busy) is sent again after its Retry-After, as HEC clients do.
import type { InputBench, InputSender } from './types.js';

const MAX_ATTEMPTS = 60;

export const hecInput: InputBench = {
  name: 'splunk-hec',
  async setup(ctx): Promise<InputSender> {
    const url = `${ctx.baseUrl}/services/collector/event`;
    const headers = { authorization: `Splunk ${ctx.integration.token}`, 'content-type': 'application/json' };
    async function post(body: string): Promise<void> {
      for (let attempt = 1; ; attempt++) {
        const res = await fetch(url, { method: 'POST', headers, body });
        const text = await res.text();
        if (res.status === 200) return;
        if (res.status !== 503 || attempt >= MAX_ATTEMPTS) throw new Error(`HEC ${res.status}: ${text.slice(0, 300)}`);
        const wait = Number(res.headers.get('retry-after') ?? '1');
        await new Promise((r) => setTimeout(r, Math.max(0.1, Math.min(wait, 5)) * 1000));
      }
    }
    return {
      integrationId: ctx.integration.id,
      async send(events, batch) {
        for (let i = 0; i < events.length; i += batch) {
          const body = events
            .slice(i, i + batch)
            .map((e) => `{"sourcetype":"bench","event":${JSON.stringify(e)}}`)
            .join('\n');
          await post(body);
        }
      },
      async close() {},
    };
  },
};

export default hecInput;
