// What operators run over the pipeline: pull collection and backfills, integration checks,
// providers, search (with live queries against vendors), configuration bundles, the
// dashboard and health.
import { INTERACTIVE_CALL } from '../connectors/call.js';
import { allConnectors, connectorFor } from '../connectors/index.js';
import { wireBackfill } from '../modules/backfill/index.js';
import { wireCollection } from '../modules/collection/index.js';
import { wireConfigBundle } from '../modules/config-bundle/index.js';
import { wireDashboard } from '../modules/dashboard/index.js';
import { wireHealth } from '../modules/health/index.js';
import { wireIntegrationOperations } from '../modules/integrations/index.js';
import { wireProviders } from '../modules/providers/index.js';
import { wireSearch } from '../modules/search/index.js';
import { createLiveExecutors } from '../modules/search/live-executor.js';
import { createLiveQueries } from '../modules/search/live.js';
import type { Access } from './access.js';
import type { Base } from './base.js';
import type { Intake } from './intake.js';
import type { Plane } from './plane.js';

export type Operations = ReturnType<typeof wireOperations>;

export function wireOperations(b: Base, intake: Intake, access: Access, plane: Plane) {
  const { config, db, clock, logger, queue, role } = b;
  const { integrations, connectorRuntime } = intake;
  const { licenses, organizations } = access;
  const backfill = wireBackfill({
    db,
    clock,
    logger,
    queue,
    accept: intake.ingest.accept,
    cache: b.cache,
    lock: b.lock,
    integrations: integrations.service,
    connectorFor,
    connectorRuntime,
    processes: intake.processes.service,
    broker: b.broker,
    lockTtlMs: config.collection.lockTtlMs,
    concurrency: config.collection.concurrency,
    heartbeatIntervalMs: config.heartbeatIntervalMs,
  });
  const collection = wireCollection({
    db,
    clock,
    logger,
    telemetry: b.telemetry,
    queue,
    accept: intake.ingest.accept,
    admission: intake.admission,
    lock: b.lock,
    config: config.collection,
    integrations: integrations.service,
    runtime: connectorRuntime,
    settings: intake.collectorSettings,
    observeGauges: role === 'all' || role === 'beat',
  });
  const integrationOps = wireIntegrationOperations({
    db,
    clock,
    integrations: integrations.service,
    platforms: integrations.platforms,
    connectorFor,
    runtime: connectorRuntime,
    editions: licenses.editions,
    listenerTest: (row) => intake.syslog.testListeners(row),
    brokerTest: (row) => intake.buses.testConnection(row),
  });
  const providers = wireProviders({
    connectors: allConnectors,
    platformOf: (name) => integrations.platforms.get(name),
    runtime: connectorRuntime,
    clock,
    maxRetryWaitMs: config.collection.maxRetryWaitMs,
  });
  const search = wireSearch({
    db,
    clock,
    logger,
    queue,
    config: config.search,
    events: plane.eventStore.events,
    email: plane.email.notifier,
    alerts: plane.detections.alerts,
    dataDeletion: organizations.dataDeletion,
    organizations: organizations.service,
    destinations: plane.destinations.service,
    routes: plane.routing.service,
    outbox: plane.delivery.outbox,
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
          await plane.normalization.registry.refreshIfStale();
          const m = plane.normalization.registry.resolve(organizationId, platform, stream).mapping;
          return m ? { compiled: m.compiled, document: m.document } : undefined;
        },
        maxPages: config.search.liveMaxPages,
        maxRetryWaitMs: INTERACTIVE_CALL.maxRetryWaitMs,
        now: () => clock.now(),
      }),
    }),
  });
  const configBundle = wireConfigBundle({
    db,
    clock,
    modules: {
      integrations: integrations.service,
      secretFieldsOf: (p) => integrations.platforms.get(p)?.secretFields ?? [],
      mappings: intake.mappings.service,
      destinations: plane.destinations.service,
      routes: plane.routing.service,
      tables: plane.enrichment.tables,
      sources: plane.enrichment.sources,
      policies: plane.enrichment.policies,
      collectorSettings: plane.collectorConfig.service,
      rules: plane.detections.rules,
      queries: search.queries,
      schedules: search.schedules,
    },
  });
  const dashboard = wireDashboard({
    db,
    clock,
    editions: licenses.editions,
    isPull: (platform) => Boolean(connectorFor(platform)),
  });
  const health = wireHealth({
    probes: [
      { name: 'database', check: () => b.database.ping() },
      { name: 'cache', check: () => b.cache.ping() },
    ],
    disk: () => {
      const s = intake.disk.state();
      return {
        free_bytes: s.free_bytes,
        reserved_bytes: s.reserved_bytes,
        floor_bytes: s.floor_bytes,
        refusing_events: s.refusing,
      };
    },
  });
  return { backfill, collection, integrationOps, providers, search, configBundle, dashboard, health };
}
