import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { Logger } from '../../platform/logger.js';
import type { QueuePort } from '../../platform/queue/port.js';
import type { PlatformDefinition } from '../../connectors/platform-definition.js';
import type { OrgDataStep } from '../organizations/jobs.js';
import { captureBeatTasks, captureJobs } from './jobs.js';
import { createCaptureRecorder } from './recorder.js';
import { collectorConfigRoutes } from './routes.js';
import { createCollectorConfigService } from './service.js';
import type { SettingsReader } from './settings.js';
import { createCollectorConfigStore } from './store.js';

export { createCaptureRecorder, type CaptureRecorder } from './recorder.js';

export interface CollectorConfigWiring {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  queue: QueuePort;
  /** The process's settings reader (shared with collection and normalization): a PUT invalidates it. */
  settings: SettingsReader;
  platforms: { list(): PlatformDefinition[] };
  dataDeletion?: { addStep(step: OrgDataStep): void };
}

export function wireCollectorConfig(deps: CollectorConfigWiring) {
  const store = createCollectorConfigStore(deps.db);
  // The normalization stage of this process records through this one (container passes it as `capture`).
  const recorder = createCaptureRecorder({ db: deps.db, clock: deps.clock, logger: deps.logger });
  const service = createCollectorConfigService({
    store,
    clock: deps.clock,
    settings: deps.settings,
    platforms: () => deps.platforms.list(),
    onSessionsChanged: () => recorder.invalidate(),
  });
  deps.dataDeletion?.addStep({
    name: 'capture_sessions',
    run: async (organizationId) => ({ rows: await store.deleteOrganization(organizationId) }),
  });
  return {
    service,
    recorder,
    routes: (app: Api) => collectorConfigRoutes(app, service),
    jobs: [captureJobs(service)],
    beatTasks: captureBeatTasks(deps.queue),
  };
}

export type CollectorConfig = Omit<ReturnType<typeof wireCollectorConfig>, 'routes'>;
