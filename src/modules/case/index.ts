import type { Clock } from '../../core/clock.js';
import type { CachePort } from '../../platform/cache/port.js';
import type { Api } from '../../platform/http/routes.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import { createIrisClient } from './client.js';
import { caseRoutes } from './routes.js';
import { createCaseService } from './service.js';

/** The case-management system (DFIR-IRIS): unset URL = not configured, a valid state. */
export interface CaseManagementConfig {
  /** WEIR_CASE_URL: base URL of the DFIR-IRIS instance. */
  url: string | undefined;
  /** WEIR_CASE_API_KEY, or the first line of the file WEIR_CASE_API_KEY_FILE names. */
  apiKey: string | undefined;
  /** WEIR_CASE_TIMEOUT_MS: per request (default 5 s). */
  timeoutMs: number;
}

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
