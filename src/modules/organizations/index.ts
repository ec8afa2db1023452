import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { QueuePort } from '../../platform/queue/port.js';
import type { EditionState } from '../licenses/service.js';
import { createDataDeletion, enqueueDeletion, organizationJobs } from './jobs.js';
import { organizationRoutes } from './routes.js';
import { createOrganizationService, type OrganizationServiceDeps } from './service.js';
import { createOrganizationStore } from './store.js';

export interface OrganizationsDeps {
  db: Kysely<DB>;
  clock: Clock;
  queue: QueuePort;
  editions: { current(): Promise<EditionState> };
  invalidateOwner(owner: { kind: 'user' | 'service_account'; id: number }): Promise<void>;
  caseCustomers?: OrganizationServiceDeps['caseCustomers'];
}

export function wireOrganizations(deps: OrganizationsDeps) {
  const store = createOrganizationStore(deps.db);
  const dataDeletion = createDataDeletion({ store, clock: deps.clock });
  const service = createOrganizationService({
    store,
    clock: deps.clock,
    editions: deps.editions,
    enqueueDeletion: (id) => enqueueDeletion(deps.queue, id),
    invalidateOwner: deps.invalidateOwner,
    ...(deps.caseCustomers ? { caseCustomers: deps.caseCustomers } : {}),
  });
  return {
    service,
    /** Modules owning organization data add their deletion step here. */
    dataDeletion,
    jobs: [organizationJobs(dataDeletion)],
    routes: (app: Api) => organizationRoutes(app, service),
  };
}

export type Organizations = Omit<ReturnType<typeof wireOrganizations>, 'routes' | 'jobs'>;
