import { Type } from 'typebox';
import { route, type Api } from '../../platform/http/routes.js';
import { ActivateBody, EditionInfo, LicenseStatus } from './schema.js';
import type { EditionState, LicenseService } from './service.js';

function statusBody(s: EditionState) {
  return {
    edition: s.edition,
    status: s.status,
    expires_at: s.expiresAt,
    expired_in_grace: s.expiredInGrace,
    grace_days: s.graceDays,
    org_limit: s.orgLimit,
    features: s.features,
  };
}

export function licenseRoutes(app: Api, service: LicenseService): void {
  route(app, {
    method: 'POST',
    url: '/api/licenses/activate',
    operationId: 'licenses.activate',
    summary: 'Activate a license: capabilities change at once for the whole instance',
    description:
      'An invalid token (signature, claims, or expired beyond its grace period) is 400 license.invalid and is never stored.',
    access: { requires: 'user.manage', globalScope: true },
    schema: { body: ActivateBody, response: { 200: LicenseStatus } },
    handler: async (req) => statusBody(await service.activate(req.actor!, req.body.license_token)),
  });

  route(app, {
    method: 'DELETE',
    url: '/api/licenses',
    operationId: 'licenses.delete',
    summary: 'Remove the active license: the instance returns to Community at once',
    access: { requires: 'user.manage', globalScope: true },
    schema: { response: { 204: Type.Null() } },
    handler: async (_req, reply) => {
      await service.remove();
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/licenses/status',
    operationId: 'licenses.status',
    summary: 'The license in force: edition, expiry, grace, organization ceiling, features',
    access: { requires: 'authenticated' },
    schema: { response: { 200: LicenseStatus } },
    handler: async () => statusBody(await service.status()),
  });

  route(app, {
    method: 'GET',
    url: '/api/edition',
    operationId: 'edition.get',
    summary: 'The effective edition and its features',
    access: { requires: 'authenticated' },
    schema: { response: { 200: EditionInfo } },
    handler: async () => {
      const s = await service.status();
      return { edition: s.edition, features: s.features };
    },
  });
}
