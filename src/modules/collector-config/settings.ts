// Global collector settings (GET/PUT /api/collectors/config): one row, read by the
// collection engine, backfill and capture through a short cache so a change reaches every
// worker within SETTINGS_CACHE_MS without a restart.
import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';

export interface CollectorSettings {
  /** Pages one cycle fetches at most before it stops with last_run_capped. */
  max_pages_per_cycle: number;
  /** Seconds one cycle runs at most before it stops with last_run_capped. */
  max_cycle_seconds: number;
  /** Vendor event keys are remembered this long for deduplication. */
  dedup_hours: number;
  /** A stream's interval when neither the integration nor the connector sets one (seconds). */
  default_interval_seconds: number;
  /** Capture sessions: longest duration and most events. */
  capture_max_minutes: number;
  capture_max_events: number;
  /** Collection is paused everywhere (the beat enqueues no cycles; triggers still run). */
  paused: boolean;
}

export const DEFAULT_COLLECTOR_SETTINGS: Readonly<CollectorSettings> = Object.freeze({
  max_pages_per_cycle: 50,
  max_cycle_seconds: 240,
  dedup_hours: 24,
  default_interval_seconds: 300,
  capture_max_minutes: 60,
  capture_max_events: 10_000,
  paused: false,
});

export const SETTINGS_CACHE_MS = 5_000;

export function createSettingsReader(db: Kysely<DB>, clock: Clock) {
  let cached: { at: number; value: CollectorSettings } | undefined;
  return {
    async current(): Promise<CollectorSettings> {
      const now = clock.now().getTime();
      if (cached && now - cached.at < SETTINGS_CACHE_MS) return cached.value;
      const row = await db.selectFrom('collector_settings').select('settings').where('id', '=', 1).executeTakeFirst();
      const value = { ...DEFAULT_COLLECTOR_SETTINGS, ...(row?.settings ?? {}) } as CollectorSettings;
      cached = { at: now, value };
      return value;
    },
    /** After a PUT in this process: the next read goes to the database. */
    invalidate(): void {
      cached = undefined;
    },
  };
}

export type SettingsReader = ReturnType<typeof createSettingsReader>;
