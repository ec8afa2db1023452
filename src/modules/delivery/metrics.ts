// The delivery engine's instruments (spec, Metrics): counters fed by the lanes, gauges read
// from the engine's state when the exporter collects.
import type { Meter } from '@opentelemetry/api';
import type { BreakerState, DeliveryKind, EngineMetrics } from '../../pipeline/delivery/engine-port.js';

export interface GaugeSource {
  breakerStates(): [string, BreakerState][];
  lag(): { partition: string; events: number }[];
}

const BREAKER_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 0.5, open: 1 };

export function createDeliveryMetrics(meter: Meter): EngineMetrics & { observe(source: GaugeSource): void } {
  const sent = meter.createCounter('collector_events_sent_total', { description: 'Events delivered per destination' });
  const failures = meter.createCounter('collector_dispatch_failures_total', {
    description: 'Failed delivery requests',
  });
  const dlq = meter.createCounter('collector_dlq_total', { description: 'Events sent to the dead-letter queue' });
  const breaker = meter.createObservableGauge('collector_destination_breaker_state', {
    description: 'Destination circuit breaker: 1 open, 0.5 half-open, 0 closed',
  });
  const lag = meter.createObservableGauge('collector_dataplane_consumer_lag', {
    description: 'Events waiting in the data plane (routing, each destination outbox)',
  });
  return {
    sent: (destinationId: string, kind: DeliveryKind, events: number) =>
      sent.add(events, { destination_id: destinationId, kind }),
    failure: (destinationId: string, reason: string) =>
      failures.add(1, { destination_id: destinationId, error_kind: reason }),
    deadLettered: (destinationId: string, errorKind: string, events: number) =>
      dlq.add(events, { destination_id: destinationId, error_kind: errorKind }),
    observe(source: GaugeSource) {
      breaker.addCallback((result) => {
        for (const [destinationId, state] of source.breakerStates())
          result.observe(BREAKER_VALUE[state], { destination_id: destinationId });
      });
      lag.addCallback((result) => {
        for (const { partition, events } of source.lag()) result.observe(events, { partition });
      });
    },
  };
}
