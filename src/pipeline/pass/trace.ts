// The pass in the trace: a `pass` span around the runner (a pool thread's wait and the
// structured clone included) and one child span per stage, made on the calling thread from
// the times the pass recorded (timings.ts) with the batch's context as parent. A pass thread
// has no SDK of its own: its stages become spans here, with their real start and end. When
// the batch is not traced (telemetry off, or not sampled) nothing is made and the outbox rows
// carry no trace context.
import { context, SpanStatusCode, trace, type Context, type Tracer } from '@opentelemetry/api';
import { injectTraceContext } from '../../platform/telemetry/index.js';
import type { PassRunner } from './pass.js';
import { epochMs, type PassTimings } from './timings.js';

export function tracedPass(run: PassRunner, tracer: Tracer): PassRunner {
  return async (job) => {
    const parent = context.active();
    const { batch } = job;
    // The pass span's times and the stages' are read from the same clock (timings.ts).
    const start = epochMs();
    const span = tracer.startSpan(
      'pass',
      {
        startTime: start,
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
    let end: number | undefined;
    try {
      const result = await run(job);
      end = epochMs();
      stageSpans(tracer, trace.setSpan(parent, span), result.timings, start, end);
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
      span.end(end ?? epochMs());
    }
  };
}

/**
 * One span per stage. A pass thread's clock origin is its own start: should it read a little
 * off the main thread's, its times are moved so that the stages lie within their `pass` span
 * (from `start`, when the runner was called, to `end`, when its result was back).
 */
function stageSpans(tracer: Tracer, inPass: Context, timings: PassTimings, start: number, end: number): void {
  const last = timings.stages.at(-1)?.[1] ?? timings.start;
  const shift = Math.min(Math.max(0, start - timings.start), end - last);
  let begin = timings.start + shift;
  for (const [stage, at] of timings.stages) {
    tracer.startSpan(`pass.${stage}`, { startTime: begin }, inPass).end(at + shift);
    begin = at + shift;
  }
}
