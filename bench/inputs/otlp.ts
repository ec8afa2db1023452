// OTLP/HTTP logs input (POST /v1/logs, protobuf): each event goes as one log record whose body
// is the event as a kvlist AnyValue, as an OpenTelemetry SDK sends a structured log body. The
// requests are built with protobufjs from the vendored official definitions (no SDK in the loop:
// the harness measures Weir, not the client).
import { anyValue } from '../../src/pipeline/sinks/otlp/records.js';
import { ExportLogsServiceRequest } from '../../src/pipeline/sources/otlp/messages.js';
import { eachBatch, postRetrying } from './post.js';
import type { InputBench, InputSender } from './types.js';

function request(events: readonly Record<string, unknown>[], observedNanos: string): Uint8Array {
  const logRecords = events.map((e) => ({ observedTimeUnixNano: observedNanos, severityNumber: 9, body: anyValue(e) }));
  const message = ExportLogsServiceRequest.fromObject({
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] },
        scopeLogs: [{ scope: { name: 'weir-bench' }, logRecords }],
      },
    ],
  });
  return ExportLogsServiceRequest.encode(message).finish();
}

export const otlpInput: InputBench = {
  name: 'otlp',
  async setup(ctx): Promise<InputSender> {
    const url = `${ctx.baseUrl}/v1/logs`;
    const headers = { authorization: `Bearer ${ctx.integration.token}`, 'content-type': 'application/x-protobuf' };
    return {
      integrationId: ctx.integration.id,
      async send(events, batch) {
        const observed = `${Date.now()}000000`;
        // 429/503 are the protocol's "retry later": wait as told, then resend the request.
        await eachBatch(events, batch, (slice) => postRetrying('OTLP', url, headers, request(slice, observed)));
      },
      async close() {},
    };
  },
};

export default otlpInput;
