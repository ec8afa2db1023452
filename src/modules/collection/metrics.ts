// The collection instruments (spec, "Events" / Metrics). The skipped-cycles counter is fed by
// the worker that found the lock held. The two lag gauges are read from collector_state when
// the exporter collects (through a short cache), so any process that observes them reports
// the same values whichever worker ran the cycles: only the beat processes do (index.ts).
//
// Alert rule (spec): lag is real when collector_watermark_lag_seconds stays high (e.g.
// > 1800 s for 15 min) AND collector_cycles_skipped_locked_total increases; a stalled
// watermark without skipped cycles is a source without events. collector_cursor_lag_seconds
// (now - last success) reads ~0 on a collector that runs but lags: kept for compatibility only.
import type { Meter } from '@opentelemetry/api';

export interface GaugeRow {
  integration_id: number;
  stream: string;
  /** 'date' | 'opaque' | undefined (no connector any more). */
  cursor: string | undefined;
  watermark_at: Date | null;
  last_success_at: Date | null;
}

export interface CollectionMetrics {
  skippedLocked(integrationId: number, stream: string): void;
  /** Starts the lag gauges over rows read on demand. */
  observe(rows: () => Promise<GaugeRow[]>, now: () => Date, cacheMs?: number): void;
}

export function createCollectionMetrics(meter: Meter): CollectionMetrics {
  const skipped = meter.createCounter('collector_cycles_skipped_locked_total', {
    description: 'Collection cycles skipped because the previous cycle of the same stream still held its lock',
  });
  const watermarkLag = meter.createObservableGauge('collector_watermark_lag_seconds', {
    description: 'now - watermark_at of a date-cursor stream: how far behind collection really is',
    unit: 's',
  });
  const cursorLag = meter.createObservableGauge('collector_cursor_lag_seconds', {
    description:
      'now - last_success_at (compatibility; reads ~0 on a collector that runs but lags: alert on collector_watermark_lag_seconds)',
    unit: 's',
  });
  return {
    skippedLocked: (integrationId, stream) => skipped.add(1, { integration_id: String(integrationId), stream }),
    observe(rows, now, cacheMs = 5_000) {
      let cached: { at: number; rows: Promise<GaugeRow[]> } | undefined;
      // Both gauges are collected in one pass of the reader: one query serves them.
      const snapshot = () => {
        const t = Date.now();
        if (!cached || t - cached.at >= cacheMs) cached = { at: t, rows: rows().catch(() => []) };
        return cached.rows;
      };
      watermarkLag.addCallback(async (result) => {
        const t = now().getTime();
        for (const r of await snapshot()) {
          if (r.cursor !== 'date' || !r.watermark_at) continue;
          result.observe(Math.max(0, Math.round((t - r.watermark_at.getTime()) / 1000)), {
            integration_id: String(r.integration_id),
            stream: r.stream,
          });
        }
      });
      cursorLag.addCallback(async (result) => {
        const t = now().getTime();
        for (const r of await snapshot()) {
          if (!r.last_success_at) continue;
          result.observe(Math.max(0, Math.round((t - r.last_success_at.getTime()) / 1000)), {
            integration_id: String(r.integration_id),
            stream: r.stream,
          });
        }
      });
    },
  };
}
