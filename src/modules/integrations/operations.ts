// Wiring of the integration operations around collection. Separate from wireIntegrations
// because they need what is built after it: the connector runtime and the edition.
import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { ConnectorRuntime } from '../../connectors/runtime.js';
import type { Connector } from '../../connectors/sdk.js';
import { inTransaction } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import { createCheckService } from './checks.js';
import { createCollectionSettings, type OpsDeps } from './collection-settings.js';
import { createOpsStore } from './ops-store.js';
import { createOverviewService } from './overview.js';
import type { PlatformRegistry } from './platforms.js';
import { integrationOpsRoutes } from './routes-ops.js';
import type { IntegrationService } from './service.js';
import { createTenantStore } from './tenant-store.js';
import { createTenantService } from './tenants.js';

export function wireIntegrationOperations(deps: {
  db: Kysely<DB>;
  clock: Clock;
  integrations: IntegrationService;
  platforms: PlatformRegistry;
  connectorFor: (platform: string) => Connector | undefined;
  runtime: ConnectorRuntime;
  editions: { isEnterprise(): Promise<boolean> };
  listenerTest?: OpsDeps['listenerTest'];
  brokerTest?: OpsDeps['brokerTest'];
}) {
  const ops: OpsDeps = {
    integrations: deps.integrations,
    platforms: deps.platforms,
    connectorFor: deps.connectorFor,
    ops: createOpsStore(deps.db),
    tenants: createTenantStore(deps.db),
    runtime: deps.runtime,
    editions: deps.editions,
    clock: deps.clock,
    transaction: (fn) => inTransaction(deps.db, fn),
    ...(deps.listenerTest ? { listenerTest: deps.listenerTest } : {}),
    ...(deps.brokerTest ? { brokerTest: deps.brokerTest } : {}),
  };
  const services = {
    settings: createCollectionSettings(ops),
    tenants: createTenantService(ops),
    checks: createCheckService(ops),
    overview: createOverviewService(ops),
  };
  return { service: services, routes: (app: Api) => integrationOpsRoutes(app, services) };
}
