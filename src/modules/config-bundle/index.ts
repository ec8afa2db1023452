import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import { packageVersion } from '../../platform/version.js';
import { configBundleRoutes } from './routes.js';
import { createBundleService } from './service.js';
import type { BundlePorts } from './snapshot.js';
import { createBundleStore } from './store.js';

export type BundleModules = Omit<BundlePorts, 'organizationName' | 'weirVersion' | 'now'>;

/** The configuration bundle (GET/POST /api/collectors/config/export|import), over the modules' services. */
export function wireConfigBundle(deps: { db: Kysely<DB>; clock: Clock; modules: BundleModules }) {
  const store = createBundleStore(deps.db);
  const service = createBundleService({
    ...deps.modules,
    organizationExists: store.organizationExists,
    organizationIds: store.organizationIds,
    organizationName: store.organizationName,
    rolledBack: store.rolledBack,
    weirVersion: packageVersion(),
    now: () => deps.clock.now(),
  });
  return { service, routes: (app: Api) => configBundleRoutes(app, service) };
}
