// The search family (docs/search.md): the event store (a destination type the one pass writes
// inline, its partitions and retention, the organization data-deletion step), the query
// language, searches as jobs with their history and results, saved queries, schedules, replay
// and live vendor queries.
import type { Kysely } from 'kysely';
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { inTransaction, afterCommit } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { Logger } from '../../platform/logger.js';
import { eventStoreSinkType, EVENT_STORE_TYPE } from '../../pipeline/sinks/event_store/index.js';
import type { SinkType } from '../../pipeline/sinks/types.js';
import type { EmailNotifier } from '../email/jobs.js';
import type { OrgDataStep } from '../organizations/jobs.js';
import type { OrganizationProvisioner } from '../organizations/service.js';
import type { JobQueue } from '../queues.js';
import { createDuckDbEventStore } from './event-store/duckdb/store.js';
import type { EventStore } from './event-store/port.js';
import { createPostgresEventStore } from './event-store/postgres.js';
import { searchBeatTasks, searchJobs } from './jobs.js';
import type { LiveQueries } from './live.js';
import { createExportService } from './export.js';
import { createQueriesService } from './queries.js';
import type { QueryInput } from './query/definition.js';
import { createReplayService, REPLAY_JOB, type ReplayPorts } from './replay.js';
import { createRetention } from './retention.js';
import { searchRoutes } from './routes.js';
import { createRunner } from './runner.js';
import { createRunsService, RUN_JOB, SEARCH_QUEUE } from './runs.js';
import { createSchedulesService, type AlertSink } from './schedules.js';
import { createSearchStore } from './store.js';

/** Search (docs/search.md): results, their expiry, and how long one statement may run. */
export interface SearchConfig {
  /** Most rows a result keeps (a query's limit is at most this). */
  maxRows: number;
  /** Hours a result stays readable. */
  resultHours: number;
  /** Hours its CSV stays downloadable (at most resultHours). */
  csvHours: number;
  /** Days a run stays in the search history. */
  historyDays: number;
  /** Longest one statement of a search may run. */
  statementTimeoutMs: number;
  /** Searches and replays one worker process runs at once. */
  concurrency: number;
  /** Base URL of the console and API as users reach it, for links in e-mails (none: no links). */
  publicUrl: string | undefined;
  /** Least time between two detection e-mails to one organization. */
  detectionNotifyMs: number;
  /** Most vendor pages one live query reads (docs/live-queries.md). */
  liveMaxPages: number;
  /**
   * The event store's size budget (WEIR_SEARCH_MAX_BYTES): the bytes of event text (each stored
   * event's JSON text in UTF-8) it may hold; over it, retention removes the events received
   * first. 0: no budget, only the organizations' retention days.
   */
  maxBytes: number;
  /**
   * The event store's engine (WEIR_EVENT_STORE): DuckDB in a file beside the embedded database,
   * or the PostgreSQL database's `events` table. Unset: DuckDB with the embedded database,
   * PostgreSQL with an external one (several processes share it).
   */
  eventStore: 'duckdb' | 'postgres' | undefined;
  /** DuckDB's file (WEIR_EVENT_STORE_PATH, default <data dir>/events.duckdb; ':memory:' keeps nothing). */
  eventStorePath: string;
  /** DuckDB's memory limit (WEIR_EVENT_STORE_MEMORY, default 128MB) and threads (WEIR_EVENT_STORE_THREADS, default 2). */
  eventStoreMemory: string;
  eventStoreThreads: number;
  /** Where POST /api/search/export writes (WEIR_EXPORT_ROOT, default <data dir>/exports). */
  exportRoot: string;
}

export type Retention = ReturnType<typeof createRetention>;

/**
 * The event store (event-store/port.ts): DuckDB beside the embedded database, or PostgreSQL's
 * `events` with an external one (several processes share it); WEIR_EVENT_STORE chooses.
 * The destination type's lane writes through it, the pass inline.
 */
export async function wireEventStore(db: Kysely<DB>, databaseKind: 'pglite' | 'postgres', config: SearchConfig) {
  const kind = config.eventStore ?? (databaseKind === 'pglite' ? 'duckdb' : 'postgres');
  const events: EventStore =
    kind === 'duckdb'
      ? await createDuckDbEventStore({
          path: config.eventStorePath,
          statementTimeoutMs: config.statementTimeoutMs,
          memoryLimit: config.eventStoreMemory,
          threads: config.eventStoreThreads,
        })
      : createPostgresEventStore(db, { statementTimeoutMs: config.statementTimeoutMs });
  const sinkType: SinkType = eventStoreSinkType({
    replace: (stored) => events.replace(stored),
    check: () => events.check(),
  });
  return { events, sinkType, inline: { prepare: events.prepare, write: events.write } };
}

export interface SearchDeps {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  queue: JobQueue;
  config: SearchConfig;
  events: EventStore;
  email: EmailNotifier;
  dataDeletion: { addStep(step: OrgDataStep): void };
  organizations: { addProvisioner(p: OrganizationProvisioner): void };
  /** Creating the event store and its route in a new organization, as its creator. */
  destinations: {
    create(
      actor: Actor,
      input: {
        name: string;
        description?: string;
        type: string;
        organization_id?: number | null;
        config: Record<string, unknown>;
      },
    ): Promise<{ id: string }>;
  };
  routes: {
    create(
      actor: Actor,
      input: {
        name: string;
        description?: string;
        organization_id?: number;
        destination_ids: string[];
        final?: boolean;
        position?: number;
        comment?: string;
      },
    ): Promise<{ id: string }>;
  };
  outbox: Pick<ReplayPorts, 'write' | 'wake'>;
  live: LiveQueries;
  /** Schedules' alerts become detections (the detections module). */
  alerts?: AlertSink;
}

export function wireSearch(deps: SearchDeps) {
  const { db, clock, logger, queue, config } = deps;
  const store = createSearchStore(db);
  const queries = deps.events;
  const transaction = <T>(fn: () => Promise<T>) => inTransaction(db, fn);
  const enqueueAfterCommit = async (fn: () => Promise<unknown>) => {
    // The database queue's enqueue commits with the row it is about; BullMQ's is sent once that row committed.
    if (queue.backend === 'bullmq') await afterCommit(async () => void (await fn()));
    else await fn();
  };
  const enqueueRun = (id: string) =>
    enqueueAfterCommit(() =>
      queue.enqueue(SEARCH_QUEUE, RUN_JOB, { search_id: id }, { jobId: `${RUN_JOB}-${id}`, attempts: 3 }),
    );
  const enqueueReplay = (id: string) =>
    enqueueAfterCommit(() =>
      queue.enqueue(SEARCH_QUEUE, REPLAY_JOB, { replay_id: id }, { jobId: `${REPLAY_JOB}-${id}`, attempts: 5 }),
    );
  const checkLive = (actor: Actor, organizationId: number, input: QueryInput) =>
    deps.live.check(actor, organizationId, input);

  const schedules = createSchedulesService({
    ...(deps.alerts ? { alerts: deps.alerts } : {}),
    store,
    clock,
    logger,
    email: deps.email,
    maxRows: config.maxRows,
    publicUrl: config.publicUrl,
    enqueue: enqueueRun,
    transaction,
  });
  const runner = createRunner({ store, queries, clock, logger, config, live: deps.live, finished: schedules.finished });
  const runs = createRunsService({
    store,
    clock,
    maxRows: config.maxRows,
    enqueue: enqueueRun,
    transaction,
    checkLive,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  });
  const savedQueries = createQueriesService({ store, clock, maxRows: config.maxRows, checkLive });
  const replay = createReplayService({
    store,
    queries,
    clock,
    logger,
    transaction,
    enqueue: enqueueReplay,
    ports: { destination: (id) => store.destination(id), ...deps.outbox },
  });
  const exports = createExportService({ events: deps.events, store, clock, root: config.exportRoot });
  const retention = createRetention({
    events: deps.events,
    retentions: () => store.retentions(),
    counted: (removed, at) => store.countRemoved(removed, at),
    maxBytes: config.maxBytes,
    clock,
    logger,
  });

  // Every new organization starts with an event store and a route that sends it everything.
  deps.organizations.addProvisioner(async (org, actor) => {
    const dest = await deps.destinations.create(actor, {
      name: 'Event store',
      description:
        "Weir's searchable store of this organization's events (POST /api/search), kept for the organization's retention",
      type: EVENT_STORE_TYPE,
      organization_id: org.id,
      config: {},
    });
    const route = await deps.routes.create(actor, {
      name: 'Everything to the event store',
      description: 'Keeps every event searchable and replayable, whatever later routes do (final: false)',
      organization_id: org.id,
      destination_ids: [dest.id],
      final: false,
      position: 1,
      comment: 'created with the organization',
    });
    return { event_store_destination_id: dest.id, event_store_route_id: route.id };
  });

  // The spec's best-effort index cleanup: a store that cannot be reached ends the deletion partial.
  deps.dataDeletion.addStep({
    name: 'search_index',
    bestEffort: true,
    run: async (organizationId) => {
      let rows = 0;
      let n: number;
      do {
        n = await deps.events.deleteOrganization(organizationId, 10_000);
        rows += n;
      } while (n === 10_000);
      return { rows };
    },
  });

  const expire = () => {
    const now = clock.now();
    return store.expire(now, new Date(now.getTime() - config.historyDays * 86_400_000));
  };

  return {
    runs,
    runner,
    schedules,
    queries: savedQueries,
    replay,
    retention,
    expire,
    jobs: [searchJobs({ runner, replay, retention, expire, now: () => clock.now(), concurrency: config.concurrency })],
    beatTasks: searchBeatTasks(queue, schedules),
    routes: (app: Api) => searchRoutes(app, { runs, queries: savedQueries, schedules, replay, exports }),
  };
}

export type Search = ReturnType<typeof wireSearch>;
