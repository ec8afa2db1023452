// Enrichment's background work: indicator feeds fetched on their schedule into table
// versions (with their last fetch status), the live series trimmed to three hours, and the
// HTTP sources' background lookups of the keys the pass could not answer from its cache.
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import { fetchFeed, parseFeed, type FeedConfig } from '../../pipeline/enrich/feeds.js';
import { createHttpFetcher } from '../../pipeline/enrich/http-fetcher.js';
import type { HttpSourceConfig } from '../../pipeline/enrich/http-source.js';
import type { BeatTask, JobRegistration, NoPayload } from '../../platform/queue/jobs.js';
import { defineJobs, type JobQueue } from '../queues.js';
import type { Activity } from './common.js';
import type { SourcesService } from './sources.js';
import type { EnrichmentStore, SourceRow } from './store.js';
import type { TablesService } from './tables.js';

export const ENRICHMENT_QUEUE = 'enrichment';
export const ENRICHMENT_TICK_JOB = 'enrichment.tick';

export interface EnrichmentJobs {
  [ENRICHMENT_QUEUE]: { [ENRICHMENT_TICK_JOB]: NoPayload };
}
const MINUTE = 60_000;
/** The live series keeps three hours (the spec's metrics window). */
export const METRICS_KEEP_MS = 180 * MINUTE;
/** A failed fetch is tried again after this long, or the feed's interval if shorter. */
const RETRY_MS = 15 * MINUTE;
/** An HTTP source's call figures are written to its status at most this often (per process). */
const STATUS_EVERY_MS = 10_000;
/** Notable source errors go to the activity list at most this often per source. */
const ERROR_ACTIVITY_EVERY_MS = 10 * MINUTE;

export function createFeedRunner(deps: {
  store: EnrichmentStore;
  tables: TablesService;
  sources: SourcesService;
  activity: Activity;
  clock: Clock;
  net: NetPolicy;
  transaction: <T>(fn: () => Promise<T>) => Promise<T>;
  logger: Logger;
}) {
  const { store, clock } = deps;

  async function fetchOne(source: SourceRow): Promise<void> {
    const config = source.config as unknown as FeedConfig;
    const interval = (typeof config.interval_minutes === 'number' ? config.interval_minutes : 60) * MINUTE;
    const started = clock.now();
    const status: Record<string, unknown> = { ...source.status, last_fetch_at: started.toISOString() };
    let next = new Date(started.getTime() + interval);
    try {
      const fetched = await fetchFeed(
        config,
        deps.sources.credentialOf(source),
        { lookup: deps.net.lookup, now: () => clock.now().getTime() },
        {
          ...(typeof source.status.etag === 'string' ? { etag: source.status.etag } : {}),
          ...(typeof source.status.last_modified === 'string' ? { last_modified: source.status.last_modified } : {}),
        },
      );
      if (!fetched.ok) throw new Error(fetched.error + (fetched.status ? ` (HTTP ${fetched.status})` : ''));
      status.last_fetch_status = 'ok';
      status.last_error = null;
      if ('text' in fetched && typeof fetched.text === 'string') {
        const parsed = parseFeed(fetched.text, config);
        status.rows = parsed.data.rows.length;
        status.skipped = parsed.skipped;
        status.etag = fetched.etag ?? null;
        status.last_modified = fetched.last_modified ?? null;
        await deps.transaction(async () => {
          const table = source.table_id ? await store.getTable(source.table_id) : undefined;
          if (!table) throw new Error("the feed's table is gone");
          await store.lockOrganization(table.organization_id);
          await deps.tables.publish(
            table,
            parsed.data,
            'feed',
            `fetched ${parsed.data.rows.length} indicators from ${new URL(config.url).host}`,
            null,
          );
        });
      } else status.last_fetch_status = 'not_modified';
    } catch (err) {
      const message = (err as Error).message.slice(0, 500);
      status.last_fetch_status = 'error';
      status.last_error = message;
      status.last_error_at = started.toISOString();
      next = new Date(started.getTime() + Math.min(interval, RETRY_MS));
      await deps.activity({
        organization_id: source.organization_id,
        kind: 'source.fetch_failed',
        subject_type: 'source',
        subject_id: source.id,
        message: `feed "${source.name}" fetch failed: ${message}`,
      });
      deps.logger.warn({ source_id: source.id, error: message }, 'enrichment feed fetch failed');
    }
    await store.updateSource(source.id, { status, next_fetch_at: next }, clock.now());
  }

  return {
    /** Fetches every feed that is due, one after the other. */
    async runDue(): Promise<number> {
      const due = await store.dueFeeds(clock.now());
      for (const source of due) await fetchOne(source);
      return due.length;
    },
    fetchOne,
  };
}

/** The main thread's side of HTTP sources: keys the passes asked for are fetched here, in the background. */
export function createExternalLookups(deps: {
  store: EnrichmentStore;
  sources: SourcesService;
  activity: Activity;
  net: NetPolicy;
  clock: Clock;
  logger: Logger;
}) {
  const fetcher = createHttpFetcher({ lookup: deps.net.lookup, now: () => deps.clock.now().getTime() });
  const rows = new Map<string, { at: number; row: SourceRow | undefined }>();
  const reported = new Map<string, number>();

  async function sourceRow(id: string): Promise<SourceRow | undefined> {
    const now = Date.now();
    const cached = rows.get(id);
    if (cached && now - cached.at < 5_000) return cached.row;
    const row = await deps.store.getSource(id);
    rows.set(id, { at: now, row });
    return row;
  }

  const written = new Map<string, { at: number; errors: number; circuit: string }>();

  /**
   * The fetcher's figures go to the source's status (what GET sources shows, from any
   * process): at once (within a second) when errors or the circuit changed, else at most
   * every STATUS_EVERY_MS.
   */
  async function report(source: SourceRow): Promise<void> {
    const stats = fetcher.stats(source.id);
    if (!stats) return;
    const last = written.get(source.id);
    const since = Date.now() - (last?.at ?? 0);
    const changed = !last || last.errors !== stats.errors || last.circuit !== stats.circuit;
    if (since >= STATUS_EVERY_MS || (changed && since >= 1_000)) {
      written.set(source.id, { at: Date.now(), errors: stats.errors, circuit: stats.circuit });
      const status = { ...source.status, calls: { ...stats, at: deps.clock.now().toISOString() } };
      await deps.store.updateSource(source.id, { status }, deps.clock.now());
    }
    if (!stats.last_error) return;
    if (Date.now() - (reported.get(source.id) ?? 0) < ERROR_ACTIVITY_EVERY_MS) return;
    reported.set(source.id, Date.now());
    await deps.activity({
      organization_id: source.organization_id,
      kind: 'source.error',
      subject_type: 'source',
      subject_id: source.id,
      message: `source "${source.name}": ${stats.last_error}`,
    });
  }

  return {
    /** Starts background lookups of the keys a pass could not answer; never waits for them, never throws. */
    want(wanted: readonly [string, string[]][]): void {
      for (const [id, keys] of wanted) {
        void (async () => {
          const source = await sourceRow(id);
          if (!source || source.kind !== 'http' || !source.enabled) return;
          const credential = deps.sources.credentialOf(source);
          await fetcher.request(
            { id, config: source.config as unknown as HttpSourceConfig, ...(credential ? { credential } : {}) },
            keys,
          );
          await report(source);
        })().catch((err: unknown) => deps.logger.warn({ err, source_id: id }, 'enrichment lookup failed'));
      }
    },
    stats: (id: string) => fetcher.stats(id),
  };
}

export function enrichmentJobs(deps: {
  feeds: ReturnType<typeof createFeedRunner>;
  store: EnrichmentStore;
  clock: Clock;
}): JobRegistration {
  return defineJobs({
    queue: ENRICHMENT_QUEUE,
    role: 'worker',
    concurrency: 1,
    handlers: {
      [ENRICHMENT_TICK_JOB]: async () => {
        await deps.store.pruneMetrics(new Date(deps.clock.now().getTime() - METRICS_KEEP_MS - MINUTE));
        await deps.feeds.runDue();
      },
    },
  });
}

export function enrichmentBeatTasks(queue: JobQueue): BeatTask[] {
  return [
    {
      name: ENRICHMENT_TICK_JOB,
      everyMs: MINUTE,
      run: async (now: Date) => {
        const slot = Math.floor(now.getTime() / MINUTE);
        await queue.enqueue(
          ENRICHMENT_QUEUE,
          ENRICHMENT_TICK_JOB,
          {},
          { jobId: `${ENRICHMENT_TICK_JOB}-${slot}`, attempts: 1 },
        );
      },
    },
  ];
}
