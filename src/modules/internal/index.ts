import type { Api } from '../../platform/http/routes.js';
import type { Authenticator } from '../../platform/http/access.js';
import { withInternalKey } from './authenticator.js';
import { internalRoutes } from './routes.js';
import { createInternalService, type TenantLookups } from './service.js';

export function wireInternal(deps: {
  tenants: TenantLookups;
  authenticator: Authenticator;
  internalKey: string | undefined;
}) {
  const service = createInternalService({ tenants: deps.tenants });
  return {
    service,
    /** The identity authenticator, accepting the deprecated shared key on internal routes when configured. */
    authenticator: withInternalKey(deps.authenticator, deps.internalKey),
    routes: (app: Api) => internalRoutes(app, service),
  };
}
