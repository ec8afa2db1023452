// The accept of one stream's events as the root span of its trace, `ingest.accept`
// (docs/observability.md, Traces): the batches carry its W3C context to the normalize queue,
// so the worker's `normalize.batch` span, the pass's stages and each destination's delivery
// attempt become its descendants.
import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { inSpan } from '../../platform/telemetry/index.js';

export interface AcceptedChunks {
  batchIds: string[];
  events: number;
  failedFrom: number | undefined;
}

export function tracedAccept<T extends AcceptedChunks>(
  tracer: Tracer | undefined,
  attributes: { integrationId: number; stream: string; events: number },
  accept: () => Promise<T>,
): Promise<T> {
  if (!tracer) return accept();
  return inSpan(
    tracer,
    'ingest.accept',
    {
      attributes: {
        'weir.integration_id': attributes.integrationId,
        'weir.stream': attributes.stream,
        'weir.events': attributes.events,
      },
    },
    async (span) => {
      const out = await accept();
      span.setAttributes({ 'weir.batches': out.batchIds.length, 'weir.accepted': out.events });
      if (out.failedFrom !== undefined)
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'not every batch was accepted' });
      return out;
    },
  );
}
