import type { Api } from '../../platform/http/routes.js';
import { createPersonalTokens } from './personal.js';
import { tokenRoutes } from './routes.js';
import type { TokenService } from './service.js';

/** The api-tokens family over the identity core's token service. */
export function wireTokens(deps: {
  tokens: TokenService;
  users: { byId(id: number): Promise<{ role: string } | undefined> };
}) {
  const service = createPersonalTokens({
    tokens: deps.tokens,
    roleOfUser: async (id) => (await deps.users.byId(id))?.role,
  });
  return { service, routes: (app: Api) => tokenRoutes(app, service) };
}
