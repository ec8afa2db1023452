// The beat's side of collection: which streams are due (collector_state.next_run_at), one
// collect.cycle job each, and the housekeeping of dedup keys and run history.
//
// Idempotence without a transaction across the queue and the database: the job id is made
// of the stream and the next_run_at value the scheduler read, the job is enqueued FIRST, and
// next_run_at is then moved by compare-and-set. A beat that dies between the two leaves
// next_run_at unchanged; its successor reads the same value, enqueues the same job id (a
// duplicate the queue ignores) and moves it. Two beats that overlap during a handover do the
// same. A capped or failed stream moves next_run_at itself, which opens a new job id.
import { compileCollectionFilters } from '../../connectors/filters.js';
import type { Connector, StreamSpec } from '../../connectors/sdk.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { CollectorSettings } from '../collector-config/settings.js';
import { notCollectable } from './cycle.js';
import type { CollectingIntegration, CollectionStore } from './store.js';
import { intervalMs } from './windows.js';

export interface SchedulerDeps {
  store: CollectionStore;
  clock: Clock;
  logger: Logger;
  settings: { current(): Promise<CollectorSettings> };
  connectorFor(platform: string): Connector | undefined;
  /** Records the run (queued) and enqueues its job; ignores a job id already queued. */
  enqueueCycle(run: {
    id: string;
    organization_id: number;
    integration_id: number;
    stream: string;
    reason: 'schedule' | 'trigger';
    requested_by: number | null;
  }): Promise<void>;
}

export const RUN_RETENTION_MS = 7 * 86_400_000;
const PRUNE_CHUNK = 10_000;
const PRUNE_MAX_CHUNKS = 20;

/** The streams an integration collects: its connector's (those its config selects), minus those its collection filters leave out. */
export function enabledStreams(
  integration: Pick<CollectingIntegration, 'collection_filters'> & { config?: Record<string, unknown> | null },
  connector: Connector,
): StreamSpec[] {
  const selected = connector.streamsFor ? new Set(connector.streamsFor(integration.config ?? {})) : undefined;
  let enabled: (stream: string) => boolean = () => true;
  try {
    enabled = compileCollectionFilters(integration.collection_filters).streamEnabled;
  } catch {
    // Filters that no longer compile: every stream is scheduled and its cycle fails visibly (last_error).
  }
  return connector.streams.filter((s) => enabled(s.name) && (!selected || selected.has(s.name)));
}

export function createScheduler(deps: SchedulerDeps) {
  const { store, clock, logger } = deps;

  return {
    /** One pass: enqueues every due stream; returns how many cycles it enqueued. */
    async schedule(now: Date = clock.now()): Promise<number> {
      const settings = await deps.settings.current();
      if (settings.paused) return 0;
      const candidates: { integration: CollectingIntegration; spec: StreamSpec }[] = [];
      for (const integration of await store.collectingIntegrations()) {
        const connector = deps.connectorFor(integration.platform);
        if (
          !connector ||
          notCollectable({ is_active: true, platform: integration.platform, config: integration.config }, connector)
        )
          continue;
        for (const spec of enabledStreams(integration, connector)) candidates.push({ integration, spec });
      }
      const due = await store.dueTimes([...new Set(candidates.map((c) => c.integration.id))]);
      let enqueued = 0;
      for (const { integration, spec } of candidates) {
        const key = `${integration.id}/${spec.name}`;
        const previous = due.get(key) ?? null;
        if (previous && previous > now) continue;
        const next = new Date(now.getTime() + intervalMs(integration.config, spec, settings.default_interval_seconds));
        const id = `cycle-${integration.id}-${spec.name}-${previous?.getTime() ?? 0}`;
        try {
          await deps.enqueueCycle({
            id,
            organization_id: integration.organization_id,
            integration_id: integration.id,
            stream: spec.name,
            reason: 'schedule',
            requested_by: null,
          });
          if (await store.claimDue(integration.id, integration.organization_id, spec.name, previous, next, now))
            enqueued += 1;
        } catch (err) {
          // next_run_at did not move: the next pass tries again.
          logger.warn(
            { err, integration_id: integration.id, stream: spec.name },
            'could not enqueue a collection cycle',
          );
        }
      }
      return enqueued;
    },

    /** Dedup keys older than the deduplication period and run history older than 7 days. */
    async housekeeping(): Promise<{ keys: number; runs: number }> {
      const now = clock.now();
      const settings = await deps.settings.current();
      const keysBefore = new Date(now.getTime() - settings.dedup_hours * 3_600_000);
      const runsBefore = new Date(now.getTime() - RUN_RETENTION_MS);
      const drain = async (chunk: () => Promise<number>) => {
        let total = 0;
        for (let i = 0; i < PRUNE_MAX_CHUNKS; i++) {
          const n = await chunk();
          total += n;
          if (n < PRUNE_CHUNK) break;
        }
        return total;
      };
      const keys = await drain(() => store.pruneKeys(keysBefore, PRUNE_CHUNK));
      const runs = await drain(() => store.pruneRuns(runsBefore, PRUNE_CHUNK));
      if (keys || runs) logger.info({ keys, runs }, 'collection housekeeping');
      return { keys, runs };
    },
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
