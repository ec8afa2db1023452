import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import { BUILTIN_MAPPINGS } from '../../pipeline/normalize/builtin/index.js';
import { inTransaction } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { AuditService } from '../audit/service.js';
import { createMappingEngine } from './engine.js';
import { mappingRoutes } from './routes.js';
import { seedBuiltins, type BuiltinMapping } from './seed.js';
import { createMappingService } from './service.js';
import { createMappingStore } from './store.js';
import { createMappingTools } from './tools.js';

export function wireMappings(deps: { db: Kysely<DB>; clock: Clock; audit: Pick<AuditService, 'list'> }) {
  const store = createMappingStore(deps.db);
  const engine = createMappingEngine();
  const service = createMappingService({
    store,
    clock: deps.clock,
    checkDocument: engine.checkDocument,
    runTests: engine.runTests,
    audit: deps.audit,
  });
  const tools = createMappingTools({ store, mappings: service, engine, clock: deps.clock });
  const seedDeps = { store, clock: deps.clock, transaction: <T>(fn: () => Promise<T>) => inTransaction(deps.db, fn) };
  return {
    service,
    tools,
    /** Brings the built-in catalog (or the given entries) into the database; run at every start. */
    seedBuiltins: (builtins: readonly BuiltinMapping[] = BUILTIN_MAPPINGS) => seedBuiltins(seedDeps, builtins),
    routes: (app: Api) => mappingRoutes(app, service, tools),
  };
}

export type Mappings = Omit<ReturnType<typeof wireMappings>, 'routes'>;
