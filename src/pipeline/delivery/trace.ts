// One span per delivery attempt of a lane (docs/observability.md, Traces): `deliver`, a child
// of the trace of the first row's batch, linked to the other batches' traces when one request
// carries rows of several (a lane batches rows across source batches). Its attributes say the
// destination, how many events and rows, the attempt and the outcome.
import { SpanStatusCode, trace, type Link, type Span, type Tracer } from '@opentelemetry/api';
import { extractTraceContext } from '../../platform/telemetry/index.js';
import type { OutboxRow } from './engine-port.js';
import type { SendOutcome } from './outcome.js';

/** Links beyond the parent, at most: a span's links are kept in memory until it is exported. */
const MAX_LINKS = 32;

export function startDeliverySpan(
  tracer: Tracer | undefined,
  destination: { id: string; type: string },
  rows: readonly OutboxRow[],
): Span | undefined {
  if (!tracer) return undefined;
  const parents = [...new Set(rows.map((r) => r.trace_parent).filter((t): t is string => !!t))];
  // Rows of batches that were not traced (not sampled, telemetry off when they were written,
  // reprocessed from the DLQ) start no trace of their own.
  if (parents.length === 0) return undefined;
  const parent = extractTraceContext({ traceparent: parents[0]! });
  const links: Link[] = [];
  for (const tp of parents.slice(1, MAX_LINKS + 1)) {
    const sc = trace.getSpanContext(extractTraceContext({ traceparent: tp }));
    if (sc) links.push({ context: sc });
  }
  const span = tracer.startSpan(
    'deliver',
    {
      attributes: {
        'weir.destination_id': destination.id,
        'weir.destination_type': destination.type,
        'weir.rows': rows.length,
        'weir.attempt': Math.max(...rows.map((r) => r.attempts)) + 1,
      },
      links,
    },
    parent,
  );
  if (span.isRecording()) return span;
  span.end();
  return undefined;
}

export function endDeliverySpan(span: Span | undefined, events: number, sent: SendOutcome | undefined): void {
  if (!span) return;
  span.setAttribute('weir.events', events);
  if (!sent) {
    span.setAttribute('weir.outcome', 'error');
    span.setStatus({ code: SpanStatusCode.ERROR });
  } else if (sent.ok) {
    span.setAttribute('weir.outcome', 'delivered');
  } else {
    span.setAttributes({ 'weir.outcome': 'failed', 'weir.error_kind': sent.error.kind });
    span.setStatus({ code: SpanStatusCode.ERROR, message: sent.error.message });
  }
  span.end();
}
