// The data plane after intake: capture, routes and destinations, the event store, delivery,
// enrichment, e-mail, detections, normalization (the one pass that reads most of them),
// quarantine and delivery status.
import { wireCollectorConfig } from '../modules/collector-config/index.js';
import { wireDelivery } from '../modules/delivery/index.js';
import { wireDeliveryStatus } from '../modules/delivery-status/index.js';
import { wireDestinations } from '../modules/destinations/index.js';
import { wireDetections } from '../modules/detections/index.js';
import { wireEmail } from '../modules/email/index.js';
import { wireEnrichment } from '../modules/enrichment/index.js';
import { wireNormalization } from '../modules/normalization/index.js';
import { wirePipelineHealth } from '../modules/pipeline-health/index.js';
import { wireQuarantine } from '../modules/quarantine/index.js';
import { wireRouting } from '../modules/routing/index.js';
import { wireEventStore } from '../modules/search/index.js';
import { defaultPassThreads } from '../pipeline/pass/pool.js';
import { packageVersion } from '../platform/version.js';
import type { Access } from './access.js';
import type { Base } from './base.js';
import type { Intake } from './intake.js';

export type Plane = Awaited<ReturnType<typeof wirePlane>>;

export async function wirePlane(b: Base, intake: Intake, access: Access) {
  const { config, db, clock, logger, queue, role } = b;
  const { audit, integrations, collectorSettings } = intake;
  const { licenses, organizations } = access;
  const collectorConfig = wireCollectorConfig({
    db,
    clock,
    logger,
    queue,
    settings: collectorSettings,
    platforms: integrations.platforms,
    dataDeletion: organizations.dataDeletion,
  });
  const pipelineHealth = wirePipelineHealth({ db, cache: b.cache, clock, settings: collectorSettings });
  const routing = wireRouting({ db, clock, audit: audit.service });
  const destinations = wireDestinations({
    db,
    clock,
    logger,
    audit: audit.service,
    credentialKeys: b.keysOf('credentials'),
    outboundAllowCidrs: config.delivery.outboundAllowCidrs,
    fileRoot: config.delivery.fileRoot,
  });
  await destinations.reencryptCredentials();
  // The event store: a destination type the one pass writes inline (modules/search).
  const eventStore = await wireEventStore(db, b.database.kind, config.search);
  destinations.types.register(eventStore.sinkType);
  await integrations.sealSecrets();
  // What the data plane's modules share (delivery, normalization).
  const shared = { db, clock, logger, telemetry: b.telemetry, queue, dataDeletion: organizations.dataDeletion };
  const delivery = wireDelivery({
    ...shared,
    config: config.delivery,
    directory: destinations.directory,
    exclusive: b.database.kind === 'pglite',
    net: b.net(),
    sinkTypeOf: (type) => destinations.types.get(type)?.sinkType,
    stopTimeoutMs: Math.floor(config.shutdownTimeoutMs / 2),
    inlineStore: eventStore.inline,
    bodies: b.bodies,
    backlog: intake.backlog,
  });
  b.bodySegments.push(() => delivery.store.bodySegments());
  // Enrichment is read by the pass (normalization); its dry-run reads normalization's samples.
  let recentEvents: (organizationId: number, limit: number) => Promise<Record<string, unknown>[]> = async () => [];
  const enrichment = wireEnrichment({
    db,
    clock,
    logger,
    queue,
    cipher: b.cipher('credentials', 'enrichment-source'),
    net: b.net(),
    editions: licenses.editions,
    pollMs: config.normalize.mappingRefreshMs,
    dataDeletion: organizations.dataDeletion,
    samples: (organizationId, limit) => recentEvents(organizationId, limit),
  });
  const email = wireEmail({
    db,
    clock,
    logger,
    queue,
    audit: audit.service,
    config: config.email,
    dataDeletion: organizations.dataDeletion,
    cipher: b.cipher('credentials', 'smtp'),
    net: b.net(),
  });
  await email
    .resealPassword()
    .catch((err: unknown) => logger.warn({ err }, 'the SMTP password could not be re-encrypted under the current key'));
  const detections = wireDetections({
    db,
    clock,
    logger,
    queue,
    email: email.notifier,
    refreshMs: config.normalize.mappingRefreshMs,
    notifyIntervalMs: config.search.detectionNotifyMs,
    publicUrl: config.search.publicUrl,
    weirVersion: packageVersion(),
    cases: access.caseManagement.service,
    dataDeletion: organizations.dataDeletion,
    events: eventStore.events,
    organization: async (id) => {
      const org = await organizations.service.get({ global: true, organizationIds: [] }, id).catch(() => undefined);
      return org ? { id: org.id, name: org.name, case_customer_id: org.case_customer_id ?? null } : undefined;
    },
  });
  const normalization = wireNormalization({
    ...shared,
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
  const quarantine = wireQuarantine({ db, clock, reprocessor: normalization.service });
  const deliveryStatus = wireDeliveryStatus({
    db,
    clock,
    lineageEnabled: config.delivery.lineageEnabled,
    onError: b.onError,
    onTapOpened: () => delivery.engine.tapOpened(),
    onOutboxWritten: () => delivery.engine.wakeLanes(),
    bodies: b.bodies,
  });
  return {
    collectorConfig,
    pipelineHealth,
    routing,
    destinations,
    eventStore,
    delivery,
    enrichment,
    email,
    detections,
    normalization,
    quarantine,
    deliveryStatus,
  };
}
