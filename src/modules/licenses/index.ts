import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { CachePort } from '../../platform/cache/port.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import { trustedLicenseKeys, type TrustedKey } from './keys.js';
import { licenseRoutes } from './routes.js';
import { createEditions, createLicenseService } from './service.js';
import { createLicenseStore } from './store.js';

export function wireLicenses(deps: { db: Kysely<DB>; cache: CachePort; clock: Clock; trustTestLicenses: boolean }) {
  let keys: Promise<TrustedKey[]> | undefined;
  const trusted = () => (keys ??= trustedLicenseKeys({ trustTestLicenses: deps.trustTestLicenses }));
  const store = createLicenseStore(deps.db);
  const editions = createEditions({ store, cache: deps.cache, clock: deps.clock, keys: trusted });
  const service = createLicenseService({ store, cache: deps.cache, clock: deps.clock, keys: trusted, editions });
  return { editions, service, routes: (app: Api) => licenseRoutes(app, service) };
}
