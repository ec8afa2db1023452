// Composition root: the adapters chosen from the configuration (container/base.ts), then
// the modules by area, each area wired in container/<area>.ts in the order they depend on
// one another. What a role runs (routes, jobs, loops, beat tasks) is listed here.
import type { RouteModule } from './app.js';
import type { Config, Role } from './config.js';
import type { Clock } from './core/clock.js';
import type { ConnectorRuntime } from './connectors/runtime.js';
import type { AuditService } from './modules/audit/service.js';
import type { Identity } from './modules/auth/index.js';
import type { Collection } from './modules/collection/index.js';
import type { Delivery } from './modules/delivery/index.js';
import type { Destinations } from './modules/destinations/index.js';
import type { EmailNotifier } from './modules/email/jobs.js';
import type { Ingest } from './modules/ingest/index.js';
import type { Integrations } from './modules/integrations/index.js';
import type { Editions } from './modules/licenses/service.js';
import type { Normalization } from './modules/normalization/index.js';
import type { Organizations } from './modules/organizations/index.js';
import type { ProcessService } from './modules/processes/service.js';
import type { EventStore } from './modules/search/event-store/port.js';
import type { Syslog } from './modules/syslog/index.js';
import type { Buses } from './modules/buses/index.js';
import type { BodyLog } from './platform/bodylog/log.js';
import type { CachePort } from './platform/cache/port.js';
import type { KeyRing } from './platform/crypto/keys.js';
import type { Database } from './platform/db/index.js';
import type { Authenticator } from './platform/http/access.js';
import type { LockPort } from './platform/lock/port.js';
import type { Logger } from './platform/logger.js';
import type { BeatTask, JobRegistration, RoleLoop } from './platform/queue/jobs.js';
import type { QueuePort } from './platform/queue/port.js';
import type { RateLimiterPort } from './platform/ratelimit/port.js';
import type { Telemetry } from './platform/telemetry/index.js';
import { wireAccess } from './container/access.js';
import { wireBase, type ContainerOptions } from './container/base.js';
import { wireIntake } from './container/intake.js';
import { wireOperations } from './container/operations.js';
import { wirePlane } from './container/plane.js';

export type { ContainerOptions } from './container/base.js';

export interface Container {
  readonly config: Readonly<Config>;
  readonly role: Role;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly telemetry: Telemetry;
  readonly database: Database;
  readonly queue: QueuePort;
  readonly cache: CachePort;
  readonly lock: LockPort;
  readonly rateLimiter: RateLimiterPort;
  readonly keys: KeyRing;
  readonly audit: AuditService;
  readonly identity: Identity;
  /** The effective edition; every Enterprise-only feature asks editions.requireEnterprise(). */
  readonly editions: Editions;
  readonly organizations: Organizations;
  readonly integrations: Integrations;
  /** Push ingestion: tokens (forgetIntegration for deactivations), last-use flush. */
  readonly ingest: Ingest;
  /** The syslog receiver: receiver() makes one that tests drive (the syslog role runs its own). */
  readonly syslog: Pick<Syslog, 'receiver'>;
  /** The message bus consumers: runner() makes one that tests drive (the worker role runs its own). */
  readonly buses: Pick<Buses, 'runner'>;
  /** The normalization stage: its service reprocesses quarantined events; aggregates.flush() writes drift, compliance and samples now. */
  readonly normalization: Pick<Normalization, 'service' | 'aggregates'>;
  /** Destinations: directory (the dispatchers' port), service, credential cipher, destination types. */
  readonly destinations: Pick<Destinations, 'directory' | 'service' | 'cipher' | 'types'>;
  /** Enrichment: the feed runner (the beat's tick runs it; tests call it). */
  readonly enrichment: { feeds: { runDue(): Promise<number> } };
  /** The dispatcher's engine (breaker states, lag); routeRecords routes normalized records with the pass's routing (tests). */
  readonly delivery: Pick<Delivery, 'engine' | 'routeRecords'>;
  /** The event store (DuckDB or PostgreSQL: modules/search/event-store). */
  readonly eventStore: EventStore;
  /** The body log of the embedded deployment (queue and outbox bodies), when on. */
  readonly bodies: BodyLog | undefined;
  /** Opens connectors (decrypted config, SSRF-guarded vendor HTTP, token cache) for collection, backfill and tests. */
  readonly connectorRuntime: ConnectorRuntime;
  /** Collection: the engine (runCycle, schedule, housekeeping) and the collectors operations' service. */
  readonly collection: Pick<Collection, 'engine' | 'service'>;
  readonly authenticator: Authenticator;
  readonly processes: ProcessService;
  /** E-mail: notify({organizationId, subject, text, html?}) queues one message per recipient of that organization. */
  readonly email: EmailNotifier;
  /** Every module's routes, registered by buildApp in this order. */
  readonly routes: RouteModule[];
  /** Queue handlers, run by the worker and dispatcher roles. */
  readonly jobs: JobRegistration[];
  /** Long-running components of the worker and dispatcher roles (routing and delivery). */
  readonly loops: RoleLoop[];
  /** Periodic tasks, run by the elected beat. */
  readonly beatTasks: BeatTask[];
  close(): Promise<void>;
}

export async function createContainer(config: Readonly<Config>, options: ContainerOptions): Promise<Container> {
  const b = await wireBase(config, options);
  const intake = await wireIntake(b);
  const access = wireAccess(b, intake);
  const plane = await wirePlane(b, intake, access);
  const ops = wireOperations(b, intake, access, plane);
  const { audit, integrations, ingest, syslog, buses } = intake;
  const { identity, sso, licenses, organizations, maintenance } = access;
  const { collectorConfig, destinations, delivery, enrichment, email, detections, normalization, eventStore } = plane;
  const { backfill, collection, search } = ops;
  const { queue, cache, lock, rateLimiter, database, bodies, telemetry, onError } = b;

  return {
    config,
    role: b.role,
    logger: b.logger,
    clock: b.clock,
    telemetry,
    database,
    queue,
    cache,
    lock,
    rateLimiter,
    keys: b.keys,
    audit: audit.service,
    identity,
    editions: licenses.editions,
    organizations: { service: organizations.service, dataDeletion: organizations.dataDeletion },
    integrations: { service: integrations.service, platforms: integrations.platforms },
    ingest: { service: ingest.service, accept: ingest.accept },
    syslog: { receiver: syslog.receiver },
    buses: { runner: buses.runner },
    normalization: { service: normalization.service, aggregates: normalization.aggregates },
    destinations: {
      directory: destinations.directory,
      service: destinations.service,
      cipher: destinations.cipher,
      types: destinations.types,
    },
    enrichment: { feeds: enrichment.feeds },
    delivery: { engine: delivery.engine, routeRecords: delivery.routeRecords },
    eventStore: eventStore.events,
    bodies,
    connectorRuntime: intake.connectorRuntime,
    collection: { engine: collection.engine, service: collection.service },
    authenticator: access.internal.authenticator,
    processes: intake.processes.service,
    email: email.notifier,
    routes: [
      ops.health.routes,
      access.auth.routes,
      audit.routes,
      integrations.routes,
      ingest.routes,
      intake.hec.routes,
      access.apiTokens.routes,
      access.serviceAccounts.routes,
      organizations.routes,
      licenses.routes,
      access.internal.routes,
      intake.drift.routes,
      intake.ocsf.routes,
      intake.mappings.routes,
      plane.quarantine.routes,
      plane.routing.routes,
      destinations.routes,
      plane.deliveryStatus.routes,
      backfill.routes,
      collection.routes,
      ops.integrationOps.routes,
      ops.providers.routes,
      collectorConfig.routes,
      plane.pipelineHealth.routes,
      enrichment.routes,
      email.routes,
      ops.configBundle.routes,
      sso.routes,
      ops.dashboard.routes,
      access.caseManagement.routes,
      search.routes,
      detections.routes,
    ],
    jobs: [
      ...maintenance.jobs,
      ...organizations.jobs,
      ...normalization.jobs,
      ...delivery.jobs,
      ...backfill.jobs,
      ...collection.jobs,
      ...collectorConfig.jobs,
      ...enrichment.jobs,
      ...email.jobs,
      ...sso.jobs,
      ...search.jobs,
      ...detections.jobs,
    ],
    loops: [...delivery.loops, ...syslog.loops, ...buses.loops],
    beatTasks: [
      ...maintenance.beatTasks,
      ...normalization.beatTasks,
      ...delivery.beatTasks,
      ...collection.beatTasks,
      ...collectorConfig.beatTasks,
      ...enrichment.beatTasks,
      ...search.beatTasks,
      ...detections.beatTasks,
    ],
    async close() {
      // Consumers first (they finish in-flight work), then what they write to.
      clearInterval(access.lastUseFlush);
      await queue.close();
      await normalization.close();
      await delivery.close();
      await eventStore.events.close();
      await bodies?.close();
      await identity.tokens.flushLastUsed().catch(onError);
      await sso.close();
      await ingest.service.flushLastUsed().catch(onError);
      await Promise.allSettled([cache.close(), lock.close(), rateLimiter.close()]);
      // An injected database belongs to whoever injected it.
      if (!options.database) await database.close();
      await telemetry.shutdown();
    },
  };
}
