// The pass in the trace: a `pass` span around the runner (a pool thread's wait and the
// structured clone included) and one child span per stage, made on the calling thread from
// the times the pass recorded (timings.ts) with the batch's context as parent. A pass thread
// has no SDK of its own: its stages become spans here, with their real start and end. When
// the batch is not traced (telemetry off, or not sampled) nothing is made and the outbox rows
// carry no trace context.
import { context, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { injectTraceContext } from '../../platform/telemetry/index.js';
import type { PassRunner } from './pass.js';

export function tracedPass(run: PassRunner, tracer: Tracer): PassRunner {
  return async (job) => {
    const parent = context.active();
    const { batch } = job;
    const span = tracer.startSpan(
      'pass',
      {
        attributes: {
          'weir.batch_id': batch.id,
          'weir.integration_id': batch.integration_id,
          'weir.stream': batch.stream,
          'weir.events': batch.events.length,
        },
      },
      parent,
    );
    if (!span.isRecording()) {
      span.end();
      return run(job);
    }
    try {
      const result = await run(job);
      const inPass = trace.setSpan(parent, span);
      let begin = result.timings.start;
      for (const [stage, end] of result.timings.stages) {
        tracer.startSpan(`pass.${stage}`, { startTime: begin }, inPass).end(end);
        begin = end;
      }
      span.setAttributes({
        'weir.normalized': result.stage.normalized,
        'weir.quarantined': result.stage.quarantined.length,
        'weir.deliveries': result.write.deliveries.length,
      });
      // Each destination's delivery continues the batch's trace (the span the pass ran under).
      const traceparent = injectTraceContext({}, parent).traceparent;
      if (traceparent) for (const row of result.write.deliveries) row.trace_parent = traceparent;
      return result;
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  };
}
