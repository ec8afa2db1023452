import type { CaseManagementConfig } from '../../config.js';
import type { Clock } from '../../core/clock.js';
import type { CachePort } from '../../platform/cache/port.js';
import type { Api } from '../../platform/http/routes.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import { createIrisClient } from './client.js';
import { caseRoutes } from './routes.js';
import { createCaseService } from './service.js';

export function wireCaseManagement(deps: {
  config: CaseManagementConfig;
  net: NetPolicy;
  cache: CachePort;
  clock: Clock;
}) {
  const { url, apiKey, timeoutMs } = deps.config;
  const client = url && apiKey ? createIrisClient({ url, apiKey, timeoutMs, net: deps.net }) : undefined;
  const service = createCaseService({ client, cache: deps.cache, clock: deps.clock });
  return { service, routes: (app: Api) => caseRoutes(app, service) };
}
