// Where events come in: integrations and their platforms, admission (disk and backlog
// guards), push ingestion, the syslog receiver, the connectors' runtime, and the mapping
// modules the pass reads.
import { allConnectors } from '../connectors/index.js';
import { VENDOR_PLATFORMS } from '../connectors/platforms.js';
import { createConnectorRuntime } from '../connectors/runtime.js';
import { wireAudit } from '../modules/audit/index.js';
import { createSettingsReader } from '../modules/collector-config/settings.js';
import { createBacklogGate, observeBacklog } from '../modules/delivery/backlog.js';
import { readBacklog } from '../modules/delivery/store.js';
import { wireDrift } from '../modules/drift/index.js';
import { createAdmission, pendingGauge } from '../modules/ingest/backpressure.js';
import { wireHec } from '../modules/hec/index.js';
import { wireIngest } from '../modules/ingest/index.js';
import { readPendingEvents } from '../modules/ingest/store.js';
import { wireIntegrations } from '../modules/integrations/index.js';
import { wireMappings } from '../modules/mappings/index.js';
import { wireOcsfPolicies } from '../modules/ocsf-policies/index.js';
import { wireProcesses } from '../modules/processes/index.js';
import { SYSLOG_PLATFORM, wireSyslog, type Syslog } from '../modules/syslog/index.js';
import { NATS_PLATFORM, RABBITMQ_PLATFORM, wireBuses, type Buses } from '../modules/buses/index.js';
import { systemClock } from '../core/clock.js';
import { createDiskGuard, observeDisk } from '../platform/disk/guard.js';
import { createNetPolicy } from '../platform/net/ssrf.js';
import { brokerKey } from '../platform/queue/identity.js';
import type { Base } from './base.js';

export type Intake = Awaited<ReturnType<typeof wireIntake>>;

export async function wireIntake(b: Base) {
  const { config, db, clock, logger, telemetry, queue } = b;
  const processes = wireProcesses({
    db,
    clock,
    queueBackend: queue.backend,
    broker: brokerKey(b.broker),
    onError: b.onError,
  });
  const audit = wireAudit({ db, clock });
  const integrations = wireIntegrations({
    db,
    clock,
    rateLimiter: b.rateLimiter,
    logger,
    cipher: b.cipher('integration-secrets', 'integration'),
  });
  // The ingest status shows the syslog listeners of a syslog integration (wired below).
  let listenerStates: Syslog['listenerStates'] = async () => [];
  let consumerStates: Buses['consumerStates'] = async () => [];
  // New events are refused before the data directory's disk fills (platform/disk/guard.ts).
  // Events accepted and not yet normalized (read at most once a second): what the disk guard
  // counts as spoken for, and refused beyond WEIR_INGEST_MAX_PENDING_EVENTS.
  const queued = pendingGauge(
    () => readPendingEvents(db),
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
    read: () => readBacklog(db),
    onError: (err) => logger.warn({ err }, "could not read the destinations' backlog"),
  });
  observeBacklog(telemetry.meter, backlog);
  const admission = createAdmission({ disk, queued, maxPendingEvents: config.ingest.maxPendingEvents, backlog });
  const ingest = wireIngest({
    admission,
    db,
    cache: b.cache,
    clock,
    queue,
    integrations: integrations.service,
    hmacKey: b.keys.key('ingest-token-hmac'),
    limits: config.ingest,
    jsonMaxDepth: config.jsonMaxDepth,
    platformTextStreams: (platform) => integrations.platforms.get(platform)?.text_streams,
    syslogListeners: (integrationId) => listenerStates(integrationId),
    busConsumers: (integrationId) => consumerStates(integrationId),
    telemetry,
    onError: (err, message) => logger.warn({ err }, message),
  });
  const hec = wireHec({
    db,
    clock,
    ingest: ingest.service,
    jsonMaxDepth: config.jsonMaxDepth,
    onError: (err, message) => logger.warn({ err }, message),
  });
  const connectorRuntime = createConnectorRuntime({
    net: createNetPolicy({ allowCidrs: config.collection.outboundAllowCidrs }),
    requestTimeoutMs: config.collection.requestTimeoutMs,
    maxRetryWaitMs: config.collection.maxRetryWaitMs,
    now: () => clock.now(),
  });
  const collectorSettings = createSettingsReader(db, clock);
  const drift = wireDrift({ db, clock });
  const ocsf = wireOcsfPolicies({ db, clock });
  const mappings = wireMappings({ db, clock, audit: audit.service });
  await mappings.seedBuiltins();
  for (const platform of VENDOR_PLATFORMS) integrations.platforms.register(platform);
  const syslog = wireSyslog({
    db,
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
  integrations.platforms.register(SYSLOG_PLATFORM, syslog.portCheck);
  const buses = wireBuses({
    db,
    clock,
    logger,
    meter: telemetry.meter,
    ingest: ingest.service,
    net: createNetPolicy({ allowCidrs: config.collection.outboundAllowCidrs }),
    openConfig: async (row) => (await integrations.service.collectTarget(row)).config,
    refreshMs: config.buses.refreshMs,
    batch: { maxEvents: config.ingest.batchMaxEvents, maxBytes: config.ingest.batchMaxBytes },
    jsonMaxDepth: config.jsonMaxDepth,
  });
  consumerStates = (integrationId) => buses.consumerStates(integrationId);
  integrations.platforms.register(RABBITMQ_PLATFORM);
  integrations.platforms.register(NATS_PLATFORM);
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
  return {
    processes,
    audit,
    integrations,
    disk,
    backlog,
    admission,
    ingest,
    hec,
    connectorRuntime,
    collectorSettings,
    drift,
    ocsf,
    mappings,
    syslog,
    buses,
  };
}
