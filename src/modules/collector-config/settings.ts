// Global collector settings (GET/PUT /api/collectors/config): one row, read by the
// collection engine, backfill and capture through a short cache so a change reaches every
// worker within SETTINGS_CACHE_MS without a restart.
import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import { executor } from '../../platform/db/ambient.js';
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
      // executor: a read inside a request's transaction joins it (PGlite has one connection).
      const row = await executor(db)
        .selectFrom('collector_settings')
        .select('settings')
        .where('id', '=', 1)
        .executeTakeFirst();
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

/** What GET /api/collectors/config says about each setting, and the ranges PUT enforces. */
export interface SettingField {
  name: keyof CollectorSettings;
  type: 'integer' | 'boolean';
  description: string;
  unit?: 'pages' | 'seconds' | 'hours' | 'minutes' | 'events';
  minimum?: number;
  maximum?: number;
}

export const COLLECTOR_SETTING_FIELDS: readonly SettingField[] = Object.freeze([
  {
    name: 'max_pages_per_cycle',
    type: 'integer',
    unit: 'pages',
    minimum: 1,
    maximum: 10_000,
    description:
      'Pages one collection cycle fetches at most; then it stops with last_run_capped and the next cycle continues',
  },
  {
    name: 'max_cycle_seconds',
    type: 'integer',
    unit: 'seconds',
    minimum: 10,
    maximum: 3_600,
    description: 'Seconds one collection cycle runs at most; then it stops with last_run_capped',
  },
  {
    name: 'dedup_hours',
    type: 'integer',
    unit: 'hours',
    minimum: 1,
    maximum: 168,
    description: 'How long the vendor keys of collected events are remembered to drop duplicates',
  },
  {
    name: 'default_interval_seconds',
    type: 'integer',
    unit: 'seconds',
    minimum: 30,
    maximum: 86_400,
    description:
      'Time between cycles of a stream when neither the integration (config.interval_seconds) nor the connector sets one',
  },
  {
    name: 'capture_max_minutes',
    type: 'integer',
    unit: 'minutes',
    minimum: 1,
    maximum: 1_440,
    description: 'Longest duration of a live capture session',
  },
  {
    name: 'capture_max_events',
    type: 'integer',
    unit: 'events',
    minimum: 1,
    maximum: 100_000,
    description: 'Most events one live capture session keeps',
  },
  {
    name: 'paused',
    type: 'boolean',
    description: 'Collection is paused everywhere: the scheduler enqueues no cycles (triggers and backfills still run)',
  },
]);
