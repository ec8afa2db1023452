import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import { ocsfCatalog } from '../../ocsf/index.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import { ocsfPolicyRoutes } from './routes.js';
import { createOcsfPolicyService } from './service.js';
import { createOcsfPolicyStore } from './store.js';

/** The API family `ocsf`: output policies per organization and the compliance report. */
export function wireOcsfPolicies(deps: { db: Kysely<DB>; clock: Clock }) {
  const service = createOcsfPolicyService({
    store: createOcsfPolicyStore(deps.db),
    clock: deps.clock,
    // The catalog loads on first use, not when the container is built.
    className: (uid) => ocsfCatalog().classByUid(uid)?.caption ?? null,
  });
  return { service, routes: (app: Api) => ocsfPolicyRoutes(app, service) };
}
