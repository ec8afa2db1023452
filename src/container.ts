// Composition root: adapters chosen from the configuration, then one line per module.
// No logic lives here beyond choosing and closing.
import type { RouteModule } from './app.js';
import { ConfigError, isDistributed, type Config, type Role } from './config.js';
import { systemClock, type Clock } from './core/clock.js';
import { allConnectors, connectorFor } from './connectors/index.js';
import { VENDOR_PLATFORMS } from './connectors/platforms.js';
import { createConnectorRuntime, type ConnectorRuntime } from './connectors/runtime.js';
import { wireAudit } from './modules/audit/index.js';
import type { AuditService } from './modules/audit/service.js';
import { wireAuth, wireIdentity, type Identity } from './modules/auth/index.js';
import { createBacklogGate, observeBacklog } from './modules/delivery/backlog.js';
import { wireDelivery, type Delivery } from './modules/delivery/index.js';
import { readBacklog } from './modules/delivery/store.js';
import { createDiskGuard, observeDisk } from './platform/disk/guard.js';
import { wireDeliveryStatus } from './modules/delivery-status/index.js';
import { wireDestinations, type Destinations } from './modules/destinations/index.js';
import { wireCaseManagement } from './modules/case/index.js';
import { wireDashboard } from './modules/dashboard/index.js';
import { wireDrift } from './modules/drift/index.js';
import { wireHealth } from './modules/health/index.js';
import { createAdmission, pendingGauge } from './modules/ingest/backpressure.js';
import { wireIngest, type Ingest } from './modules/ingest/index.js';
import { readPendingEvents } from './modules/ingest/store.js';
import { wireIntegrationOperations, wireIntegrations, type Integrations } from './modules/integrations/index.js';
import { wireProviders } from './modules/providers/index.js';
import { wireInternal } from './modules/internal/index.js';
import { wireLicenses } from './modules/licenses/index.js';
import type { Editions } from './modules/licenses/service.js';
import { wireMaintenance } from './modules/maintenance/index.js';
import { createSettingsReader } from './modules/collector-config/settings.js';
import { wireCollectorConfig } from './modules/collector-config/index.js';
import { wireConfigBundle } from './modules/config-bundle/index.js';
import { wirePipelineHealth } from './modules/pipeline-health/index.js';
import { wireMappings } from './modules/mappings/index.js';
import { wireNormalization, type Normalization } from './modules/normalization/index.js';
import { defaultPassThreads } from './pipeline/pass/pool.js';
import { wireOcsfPolicies } from './modules/ocsf-policies/index.js';
import { wireOrganizations, type Organizations } from './modules/organizations/index.js';
import { wireProcesses } from './modules/processes/index.js';
import { wireBackfill } from './modules/backfill/index.js';
import { wireCollection, type Collection } from './modules/collection/index.js';
import { wireQuarantine } from './modules/quarantine/index.js';
import { wireEnrichment } from './modules/enrichment/index.js';
import { wireEmail } from './modules/email/index.js';
import type { EmailNotifier } from './modules/email/jobs.js';
import { wireRouting } from './modules/routing/index.js';
import { wireSso } from './modules/identity/index.js';
import { wireEventStore, wireSearch } from './modules/search/index.js';
import { wireDetections } from './modules/detections/index.js';
import { packageVersion } from './platform/version.js';
import { createLiveQueries } from './modules/search/live.js';
import { createLiveExecutors } from './modules/search/live-executor.js';
import { INTERACTIVE_CALL } from './connectors/call.js';
import { SYSLOG_PLATFORM, wireSyslog, type Syslog } from './modules/syslog/index.js';
import { wireServiceAccounts } from './modules/service-accounts/index.js';
import { wireTokens } from './modules/tokens/index.js';
import type { ProcessService } from './modules/processes/service.js';
import { createCache } from './platform/cache/index.js';
import type { CachePort } from './platform/cache/port.js';
import { keyRing, loadMasterSecret, previousKeyRings, type KeyRing } from './platform/crypto/keys.js';
import { migrate, openDatabase, type Database } from './platform/db/index.js';
import type { EventStore } from './modules/search/event-store/port.js';
import type { Authenticator } from './platform/http/access.js';
import { createLock } from './platform/lock/index.js';
import type { LockPort } from './platform/lock/port.js';
import { createLogger, type Logger } from './platform/logger.js';
import { createNetPolicy } from './platform/net/ssrf.js';
import { createCredentialCipher } from './platform/crypto/credentials.js';
import { createQueue, DatabaseQueue } from './platform/queue/index.js';
import { BodyLog } from './platform/bodylog/log.js';
import { brokerIdentity, brokerKey } from './platform/queue/identity.js';
import type { QueuePort } from './platform/queue/port.js';
import { createRateLimiter } from './platform/ratelimit/index.js';
import type { RateLimiterPort } from './platform/ratelimit/port.js';
import { startTelemetry, traceLogMixin, type Telemetry } from './platform/telemetry/index.js';
import type { BeatTask } from './roles/beat.js';
import type { JobRegistration, RoleLoop } from './roles/jobs.js';

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
  /** The normalization stage: its service reprocesses quarantined events; aggregates.flush() writes drift, compliance and samples now. */
  readonly normalization: Pick<Normalization, 'service' | 'aggregates'>;
  /** Destinations: directory (the dispatchers' port), service, credential cipher, destination types. */
  readonly destinations: Pick<Destinations, 'directory' | 'service' | 'cipher' | 'types'>;
  /** Enrichment: the feed runner (the beat's tick runs it; tests call it). */
  readonly enrichment: { feeds: { runDue(): Promise<number> } };
  /** The dispatcher's engine (routeOnce, breaker states, lag). */
  readonly delivery: Pick<Delivery, 'engine'>;
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

export interface ContainerOptions {
  role: Role;
  logger?: Logger;
  /** Replaces the adapter the configuration would choose (tests). */
  database?: Database;
  clock?: Clock;
}

export async function createContainer(config: Readonly<Config>, options: ContainerOptions): Promise<Container> {
  const { role } = options;
  // DuckDB's file belongs to one process: the separate roles of a distributed Weir share PostgreSQL's store.
  if (config.search.eventStore === 'duckdb' && role !== 'all') {
    throw new ConfigError(
      `WEIR_EVENT_STORE=duckdb keeps the event store in a file one process owns: run \`weir all\`, or let the ${role} role use PostgreSQL's store (unset WEIR_EVENT_STORE or set it to postgres)`,
    );
  }
  const logger = options.logger ?? createLogger({ level: config.logLevel, role, mixin: traceLogMixin });
  const telemetry = await startTelemetry(config.telemetry, { role, logger, prometheusHost: config.host });
  const database =
    options.database ??
    (await openDatabase({
      url: config.databaseUrl,
      dataDir: `${config.dataDir}/pglite`,
      sharedBuffers: config.pgliteSharedBuffers,
      logger,
    }));
  await migrate(database.db);
  const redis = { redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, logger };
  // The body log (decision 0059): embedded only, where one process owns the data directory.
  // The rows that name its bodies belong to the queue and the outbox, wired below.
  const bodySegments: (() => Promise<number[]>)[] = [];
  const bodies =
    config.bodyLogDir && database.kind === 'pglite'
      ? new BodyLog({
          dir: config.bodyLogDir,
          live: async () => new Set((await Promise.all(bodySegments.map((f) => f()))).flat()),
          onError: (err) => logger.warn({ err }, 'the body log could not collect its unused segments'),
        })
      : undefined;
  const queue = createQueue({
    ...redis,
    db: database.db,
    leaseMs: config.queueLeaseMs,
    exclusive: database.kind === 'pglite',
    bodies,
  });
  if (queue instanceof DatabaseQueue) bodySegments.push(() => queue.bodySegments());
  const cache = createCache(redis);
  const lock = createLock(redis);
  const rateLimiter = createRateLimiter(redis);
  const clock = options.clock ?? systemClock;
  const keys = keyRing(
    loadMasterSecret({ secret: config.secretKey, dataDir: config.dataDir, required: isDistributed(config), logger }),
  );

  const onError = (err: unknown) => logger.warn({ err }, 'background write failed');
  const broker = await brokerIdentity({
    backend: queue.backend,
    redisUrl: config.redisUrl,
    redisPrefix: config.redisPrefix,
    db: database.db,
    databaseKind: database.kind,
  });
  const processes = wireProcesses({
    db: database.db,
    clock,
    queueBackend: queue.backend,
    broker: brokerKey(broker),
    onError,
  });
  const audit = wireAudit({ db: database.db, clock });
  const integrations = wireIntegrations({
    db: database.db,
    clock,
    rateLimiter,
    logger,
    cipher: createCredentialCipher(
      keys.key('integration-secrets'),
      previousKeyRings(config.previousSecretKeys).map((r) => r.key('integration-secrets')),
      'integration',
    ),
  });
  // The ingest status shows the syslog listeners of a syslog integration (wired below).
  let listenerStates: Syslog['listenerStates'] = async () => [];
  // New events are refused before the data directory's disk fills (platform/disk/guard.ts).
  // Events accepted and not yet normalized (read at most once a second): what the disk guard
  // counts as spoken for, and refused beyond WEIR_INGEST_MAX_PENDING_EVENTS.
  const queued = pendingGauge(
    () => readPendingEvents(database.db),
    systemClock,
    1000,
    (err) => logger.warn({ err }, 'could not count the events waiting for normalization'),
  );
  const disk = createDiskGuard({
    path: config.dataDir,
    floorBytes: config.diskFloorBytes,
    reserved: () => queued.peek() * config.diskBytesPerEvent,
  });
  observeDisk(telemetry.meter, disk);
  // ... and while a destination they would wait for is over its backlog budget (modules/delivery/backlog.ts).
  const backlog = createBacklogGate({
    read: () => readBacklog(database.db),
    onError: (err) => logger.warn({ err }, "could not read the destinations' backlog"),
  });
  observeBacklog(telemetry.meter, backlog);
  const admission = createAdmission({ disk, queued, maxPendingEvents: config.ingest.maxPendingEvents, backlog });
  const ingest = wireIngest({
    admission,
    db: database.db,
    cache,
    clock,
    queue,
    integrations: integrations.service,
    hmacKey: keys.key('ingest-token-hmac'),
    limits: config.ingest,
    jsonMaxDepth: config.jsonMaxDepth,
    platformTextStreams: (platform) => integrations.platforms.get(platform)?.text_streams,
    syslogListeners: (integrationId) => listenerStates(integrationId),
    telemetry,
    onError: (err, message) => logger.warn({ err }, message),
  });
  const connectorRuntime = createConnectorRuntime({
    net: createNetPolicy({ allowCidrs: config.collection.outboundAllowCidrs }),
    requestTimeoutMs: config.collection.requestTimeoutMs,
    maxRetryWaitMs: config.collection.maxRetryWaitMs,
    now: () => clock.now(),
  });
  const collectorSettings = createSettingsReader(database.db, clock);
  const drift = wireDrift({ db: database.db, clock });
  const ocsf = wireOcsfPolicies({ db: database.db, clock });
  const mappings = wireMappings({ db: database.db, clock, audit: audit.service });
  await mappings.seedBuiltins();
  for (const platform of VENDOR_PLATFORMS) integrations.platforms.register(platform);
  integrations.platforms.register(SYSLOG_PLATFORM);
  const syslog = wireSyslog({
    db: database.db,
    clock,
    logger,
    meter: telemetry.meter,
    queue,
    accept: ingest.accept,
    admission,
    openConfig: async (row) => (await integrations.service.collectTarget(row)).config,
    config: config.syslog,
    batch: {
      maxEvents: config.ingest.batchMaxEvents,
      maxBytes: config.ingest.batchMaxBytes,
      maxPendingBatches: config.ingest.maxPendingBatches,
    },
    stopGraceMs: Math.floor(config.shutdownTimeoutMs / 2),
  });
  listenerStates = (integrationId) => syslog.listenerStates(integrationId);
  // Connectors without a built-in platform definition (registered by tests).
  for (const c of allConnectors()) {
    if (integrations.platforms.get(c.platform)) continue;
    integrations.platforms.register({
      name: c.platform,
      display_name: c.display_name,
      kind: 'pull',
      description: c.description,
      config_schema: c.config_schema,
    });
  }
  const identity = wireIdentity({
    db: database.db,
    cache,
    clock,
    rateLimiter,
    tokenHmacKey: keys.key('api-token-hmac'),
    tokenRateLimit: config.tokenRateLimit,
  });
  const lastUseFlush = setInterval(() => {
    void identity.tokens.flushLastUsed().catch(onError);
    void ingest.service.flushLastUsed().catch(onError);
  }, 30_000);
  lastUseFlush.unref();
  const sso = wireSso({
    db: database.db,
    clock,
    queue,
    audit: audit.service,
    identity,
    rateLimiter,
    cipher: createCredentialCipher(
      keys.key('credentials'),
      previousKeyRings(config.previousSecretKeys).map((r) => r.key('credentials')),
      'identity',
    ),
    net: createNetPolicy({ allowCidrs: config.delivery.outboundAllowCidrs }),
  });
  const auth = wireAuth({ db: database.db, identity, rateLimiter, clock, sso: sso.policy });
  const apiTokens = wireTokens({ tokens: identity.tokens, users: identity.users });
  const serviceAccounts = wireServiceAccounts({ db: database.db, tokens: identity.tokens, clock });
  const licenses = wireLicenses({ db: database.db, cache, clock, trustTestLicenses: config.trustTestLicenses });
  const caseManagement = wireCaseManagement({
    config: config.caseManagement,
    net: createNetPolicy({ allowCidrs: config.delivery.outboundAllowCidrs }),
    cache,
    clock,
  });
  const organizations = wireOrganizations({
    db: database.db,
    clock,
    queue,
    editions: licenses.editions,
    invalidateOwner: (owner) => identity.tokens.invalidateOwner(owner),
    caseCustomers: caseManagement.service,
  });
  const internal = wireInternal({
    tenants: organizations.service.tenants,
    authenticator: identity.authenticator,
    internalKey: config.internalKey,
  });
  const maintenance = wireMaintenance({ queue, processes: processes.service, sessions: identity.sessions });
  const collectorConfig = wireCollectorConfig({
    db: database.db,
    clock,
    logger,
    queue,
    settings: collectorSettings,
    platforms: integrations.platforms,
    dataDeletion: organizations.dataDeletion,
  });
  const pipelineHealth = wirePipelineHealth({ db: database.db, cache, clock, settings: collectorSettings });
  const routing = wireRouting({ db: database.db, clock, audit: audit.service });
  const destinations = wireDestinations({
    db: database.db,
    clock,
    logger,
    audit: audit.service,
    credentialKeys: {
      current: keys.key('credentials'),
      previous: previousKeyRings(config.previousSecretKeys).map((r) => r.key('credentials')),
    },
    outboundAllowCidrs: config.delivery.outboundAllowCidrs,
    fileRoot: config.delivery.fileRoot,
  });
  await destinations.reencryptCredentials();
  // The event store: a destination type the one pass writes inline (modules/search).
  const eventStore = await wireEventStore(database.db, database.kind, config.search);
  destinations.types.register(eventStore.sinkType);
  await integrations.sealSecrets();
  // What the data plane's modules share (delivery, normalization).
  const plane = { db: database.db, clock, logger, telemetry, queue, dataDeletion: organizations.dataDeletion };
  const delivery = wireDelivery({
    ...plane,
    config: config.delivery,
    directory: destinations.directory,
    exclusive: database.kind === 'pglite',
    net: createNetPolicy({ allowCidrs: config.delivery.outboundAllowCidrs }),
    sinkTypeOf: (type) => destinations.types.get(type)?.sinkType,
    stopTimeoutMs: Math.floor(config.shutdownTimeoutMs / 2),
    inlineStore: eventStore.inline,
    bodies,
    backlog,
  });
  bodySegments.push(() => delivery.store.bodySegments());
  // Enrichment is read by the pass (normalization); its dry-run reads normalization's samples.
  let recentEvents: (organizationId: number, limit: number) => Promise<Record<string, unknown>[]> = async () => [];
  const enrichment = wireEnrichment({
    db: database.db,
    clock,
    logger,
    queue,
    cipher: createCredentialCipher(
      keys.key('credentials'),
      previousKeyRings(config.previousSecretKeys).map((r) => r.key('credentials')),
      'enrichment-source',
    ),
    net: createNetPolicy({ allowCidrs: config.delivery.outboundAllowCidrs }),
    editions: licenses.editions,
    pollMs: config.normalize.mappingRefreshMs,
    dataDeletion: organizations.dataDeletion,
    samples: (organizationId, limit) => recentEvents(organizationId, limit),
  });
  const email = wireEmail({
    db: database.db,
    clock,
    logger,
    queue,
    audit: audit.service,
    config: config.email,
    dataDeletion: organizations.dataDeletion,
    cipher: createCredentialCipher(
      keys.key('credentials'),
      previousKeyRings(config.previousSecretKeys).map((r) => r.key('credentials')),
      'smtp',
    ),
    net: createNetPolicy({ allowCidrs: config.delivery.outboundAllowCidrs }),
  });
  await email
    .resealPassword()
    .catch((err: unknown) => logger.warn({ err }, 'the SMTP password could not be re-encrypted under the current key'));
  const detections = wireDetections({
    db: database.db,
    clock,
    logger,
    queue,
    email: email.notifier,
    refreshMs: config.normalize.mappingRefreshMs,
    notifyIntervalMs: config.search.detectionNotifyMs,
    publicUrl: config.search.publicUrl,
    weirVersion: packageVersion(),
    cases: caseManagement.service,
    dataDeletion: organizations.dataDeletion,
    organization: async (id) => {
      const org = await organizations.service.get({ global: true, organizationIds: [] }, id).catch(() => undefined);
      return org ? { id: org.id, name: org.name, case_customer_id: org.case_customer_id ?? null } : undefined;
    },
  });
  const normalization = wireNormalization({
    ...plane,
    mappingRefreshMs: config.normalize.mappingRefreshMs,
    concurrency: config.normalize.concurrency,
    dedupWindowMs: async () => (await collectorSettings.current()).dedup_hours * 3_600_000,
    capture: collectorConfig.recorder,
    routing: delivery.passRouting,
    // The pass runs where batches are consumed; the api role (quarantine reprocessing) runs it inline.
    passThreads:
      role === 'all' || role === 'worker'
        ? (config.normalize.passThreads ?? (role === 'all' ? defaultPassThreads() : 0))
        : 0,
    enrichment: enrichment.pass,
    detection: detections.pass,
  });
  recentEvents = (organizationId, limit) => normalization.service.recentEvents(organizationId, limit);
  const quarantine = wireQuarantine({ db: database.db, clock, reprocessor: normalization.service });
  const deliveryStatus = wireDeliveryStatus({
    db: database.db,
    clock,
    lineageEnabled: config.delivery.lineageEnabled,
    onError,
    onTapOpened: () => delivery.engine.tapOpened(),
    onOutboxWritten: () => delivery.engine.wakeLanes(),
    bodies,
  });
  const backfill = wireBackfill({
    db: database.db,
    clock,
    logger,
    queue,
    accept: ingest.accept,
    cache,
    lock,
    integrations: integrations.service,
    connectorFor,
    connectorRuntime,
    processes: processes.service,
    broker,
    lockTtlMs: config.collection.lockTtlMs,
    concurrency: config.collection.concurrency,
    heartbeatIntervalMs: config.heartbeatIntervalMs,
  });
  const collection = wireCollection({
    db: database.db,
    clock,
    logger,
    telemetry,
    queue,
    accept: ingest.accept,
    admission,
    lock,
    config: config.collection,
    integrations: integrations.service,
    runtime: connectorRuntime,
    settings: collectorSettings,
    observeGauges: role === 'all' || role === 'beat',
  });
  const integrationOps = wireIntegrationOperations({
    db: database.db,
    clock,
    integrations: integrations.service,
    platforms: integrations.platforms,
    connectorFor,
    runtime: connectorRuntime,
    editions: licenses.editions,
  });
  const providers = wireProviders({
    connectors: allConnectors,
    platformOf: (name) => integrations.platforms.get(name),
    runtime: connectorRuntime,
    clock,
    maxRetryWaitMs: config.collection.maxRetryWaitMs,
  });
  const search = wireSearch({
    db: database.db,
    clock,
    logger,
    queue,
    config: config.search,
    events: eventStore.events,
    email: email.notifier,
    alerts: detections.alerts,
    dataDeletion: organizations.dataDeletion,
    organizations: organizations.service,
    destinations: destinations.service,
    routes: routing.service,
    outbox: delivery.outbox,
    live: createLiveQueries({
      requireEnterprise: (feature) => licenses.editions.requireEnterprise(feature),
      integration: async (organizationId, id) => {
        const found = await integrations.service
          .get({ global: false, organizationIds: [organizationId] }, id)
          .catch(() => undefined);
        return found ? { platform: found.platform } : undefined;
      },
      executor: createLiveExecutors({
        connectorFor,
        runtime: connectorRuntime,
        target: async (organizationId, id) => {
          const row = await integrations.service.find({ global: false, organizationIds: [organizationId] }, id);
          if (!row) return undefined;
          const t = await integrations.service.collectTarget(row);
          return { key: row.id, config: t.config, secrets: t.secrets, tenantId: t.tenantId, platform: row.platform };
        },
        mapping: async (organizationId, platform, stream) => {
          await normalization.registry.refreshIfStale();
          const m = normalization.registry.resolve(organizationId, platform, stream).mapping;
          return m ? { compiled: m.compiled, document: m.document } : undefined;
        },
        maxPages: config.search.liveMaxPages,
        maxRetryWaitMs: INTERACTIVE_CALL.maxRetryWaitMs,
        now: () => clock.now(),
      }),
    }),
  });
  const configBundle = wireConfigBundle({
    db: database.db,
    clock,
    modules: {
      integrations: integrations.service,
      secretFieldsOf: (p) => integrations.platforms.get(p)?.secretFields ?? [],
      mappings: mappings.service,
      destinations: destinations.service,
      routes: routing.service,
      tables: enrichment.tables,
      sources: enrichment.sources,
      policies: enrichment.policies,
      collectorSettings: collectorConfig.service,
    },
  });
  const dashboard = wireDashboard({
    db: database.db,
    clock,
    editions: licenses.editions,
    isPull: (platform) => Boolean(connectorFor(platform)),
  });
  const health = wireHealth({
    probes: [
      { name: 'database', check: () => database.ping() },
      { name: 'cache', check: () => cache.ping() },
    ],
    disk: () => {
      const s = disk.state();
      return {
        free_bytes: s.free_bytes,
        reserved_bytes: s.reserved_bytes,
        floor_bytes: s.floor_bytes,
        refusing_events: s.refusing,
      };
    },
  });

  return {
    config,
    role,
    logger,
    clock,
    telemetry,
    database,
    queue,
    cache,
    lock,
    rateLimiter,
    keys,
    audit: audit.service,
    identity,
    editions: licenses.editions,
    organizations: { service: organizations.service, dataDeletion: organizations.dataDeletion },
    integrations: { service: integrations.service, platforms: integrations.platforms },
    ingest: { service: ingest.service, accept: ingest.accept },
    syslog: { receiver: syslog.receiver },
    normalization: { service: normalization.service, aggregates: normalization.aggregates },
    destinations: {
      directory: destinations.directory,
      service: destinations.service,
      cipher: destinations.cipher,
      types: destinations.types,
    },
    enrichment: { feeds: enrichment.feeds },
    delivery: { engine: delivery.engine },
    eventStore: eventStore.events,
    bodies,
    connectorRuntime,
    collection: { engine: collection.engine, service: collection.service },
    authenticator: internal.authenticator,
    processes: processes.service,
    email: email.notifier,
    routes: [
      health.routes,
      auth.routes,
      audit.routes,
      integrations.routes,
      ingest.routes,
      apiTokens.routes,
      serviceAccounts.routes,
      organizations.routes,
      licenses.routes,
      internal.routes,
      drift.routes,
      ocsf.routes,
      mappings.routes,
      quarantine.routes,
      routing.routes,
      destinations.routes,
      deliveryStatus.routes,
      backfill.routes,
      collection.routes,
      integrationOps.routes,
      providers.routes,
      collectorConfig.routes,
      pipelineHealth.routes,
      enrichment.routes,
      email.routes,
      configBundle.routes,
      sso.routes,
      dashboard.routes,
      caseManagement.routes,
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
    loops: [...delivery.loops, ...syslog.loops],
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
      clearInterval(lastUseFlush);
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
