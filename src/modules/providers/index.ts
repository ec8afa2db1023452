import type { Clock } from '../../core/clock.js';
import type { ConnectorRuntime } from '../../connectors/runtime.js';
import type { Connector } from '../../connectors/sdk.js';
import type { Api } from '../../platform/http/routes.js';
import type { Platform } from '../integrations/platforms.js';
import { providerRoutes } from './routes.js';
import { createProviderService } from './service.js';

export function wireProviders(deps: {
  connectors: () => Connector[];
  platformOf: (name: string) => Platform | undefined;
  runtime: ConnectorRuntime;
  clock: Clock;
  maxRetryWaitMs: number;
}) {
  const service = createProviderService(deps);
  return { service, routes: (app: Api) => providerRoutes(app, service) };
}
