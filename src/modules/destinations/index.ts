import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { SinkType } from '../../pipeline/sinks/types.js';
import { createCredentialCipher } from '../../platform/crypto/credentials.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { Logger } from '../../platform/logger.js';
import { createNetPolicy } from '../../platform/net/ssrf.js';
import type { AuditService } from '../audit/service.js';
import { createDestinationDirectory } from './directory.js';
import { destinationRoutes } from './routes.js';
import { createDestinationService } from './service.js';
import { createSinkTypeRegistry } from './sink-types.js';
import { createDestinationStore } from './store.js';

export interface DestinationsDeps {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  audit: Pick<AuditService, 'list'>;
  /** keys.key('credentials') of the current master secret and of the previous ones. */
  credentialKeys: { current: Buffer; previous: readonly Buffer[] };
  /** config.delivery.outboundAllowCidrs: what the SSRF guard lets destination tests reach. */
  outboundAllowCidrs: readonly string[];
  fileRoot: string;
  /** The destination types (default SINK_TYPES); tests add fakes with types.register(). */
  sinkTypes?: readonly SinkType[];
  testTimeoutMs?: number;
}

export function wireDestinations(deps: DestinationsDeps) {
  const store = createDestinationStore(deps.db);
  const types = createSinkTypeRegistry(deps.sinkTypes);
  const cipher = createCredentialCipher(deps.credentialKeys.current, deps.credentialKeys.previous);
  const service = createDestinationService({
    store,
    types,
    cipher,
    clock: deps.clock,
    logger: deps.logger,
    net: createNetPolicy({ allowCidrs: deps.outboundAllowCidrs }),
    fileRoot: deps.fileRoot,
    audit: deps.audit,
    testTimeoutMs: deps.testTimeoutMs,
  });
  const directory = createDestinationDirectory({ store, cipher, types });
  return {
    service,
    directory,
    cipher,
    types,
    /** Re-seals credentials left under a previous WEIR_SECRET_KEY; run at every start, after migrations. */
    reencryptCredentials: () => service.reencryptCredentials(),
    routes: (app: Api) => destinationRoutes(app, service),
  };
}

export type Destinations = Omit<ReturnType<typeof wireDestinations>, 'routes'>;
