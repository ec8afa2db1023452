import { Type } from 'typebox';
import { offsetEnvelope } from '../../core/paging.js';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody } from '../../platform/http/schemas.js';
import { AuditPage } from '../audit/schema.js';
import {
  AuditQuery,
  CreateBody,
  CredentialAuditQuery,
  Destination,
  DestinationWritten,
  DestinationPage,
  DestinationParams,
  DestinationTypeList,
  ListQuery,
  RotateBody,
  ShadowBody,
  TestResultSchema,
  UpdateBody,
} from './schema.js';
import type { DestinationService } from './service.js';

const BASE = '/api/collectors/destinations';
const NoContent = Type.Null({ description: 'Deleted' });

// The static paths (destination-types; health, served by the delivery-status module) win
// over :destination_id whatever the registration order.
export function destinationRoutes(app: Api, service: DestinationService): void {
  route(app, {
    method: 'GET',
    url: BASE,
    operationId: 'destinations.list',
    summary: 'Destinations of your organizations and the global ones, by name',
    access: { requires: 'destination.read' },
    schema: { querystring: ListQuery, response: { 200: DestinationPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0, organization_id, type, enabled, global } = req.query;
      const page = { limit, offset };
      const { items, total } = await service.list(
        scopeOf(req.actor!),
        { organizationId: organization_id, type, enabled, global },
        page,
      );
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'POST',
    url: BASE,
    operationId: 'destinations.create',
    summary: 'Create a destination',
    description:
      "config is validated against the type's config_schema (422 destination.invalid_config listing every problem), the " +
      'credential against its credential_schema (422 destination.invalid_credential; a type with credential_required needs ' +
      'one). Without organization_id an organization caller gets its only organization; a platform caller without it (or ' +
      "with null) creates a global destination, usable by every organization's routes. Enabled, it receives events from " +
      'the next dispatch cycle once a route names it. warnings lists what the caller should know although the destination ' +
      'was saved: a host the outbound address guard refuses (loopback, link-local, cloud metadata) unless ' +
      'WEIR_OUTBOUND_ALLOW_CIDRS allows it, which would otherwise first show as blocked_address in the dead-letter queue.',
    access: { requires: 'user.manage' },
    schema: { body: CreateBody, response: { 201: DestinationWritten, 409: ErrorBody } },
    handler: async (req, reply) => {
      const created = await service.create(req.actor!, req.body);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/destination-types`,
    operationId: 'destinations.types',
    summary: 'The destination types, with the JSON Schemas of their config and credential and the delivery defaults',
    access: { requires: 'destination.read' },
    schema: { response: { 200: DestinationTypeList } },
    handler: async () => service.types(),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/:destination_id`,
    operationId: 'destinations.get',
    summary: 'One destination (whether it has a credential, never the credential)',
    access: { requires: 'destination.read' },
    schema: { params: DestinationParams, response: { 200: Destination } },
    handler: async (req) => service.get(scopeOf(req.actor!), req.params.destination_id),
  });

  route(app, {
    method: 'PUT',
    url: `${BASE}/:destination_id`,
    operationId: 'destinations.update',
    summary: "Change a destination's name, description, config, delivery settings or enabled state",
    description:
      'Fields left out stay. delivery replaces the stored overrides (omitted keys take their defaults). The credential is ' +
      'not changed here (422): use credential/rotate. Enabling a destination whose credential was revoked, without a new ' +
      'one, is 400 destination.no_credential. Global destinations need platform scope (403). A new config is checked ' +
      'against the outbound address guard like at creation (warnings).',
    access: { requires: 'user.manage' },
    schema: { params: DestinationParams, body: UpdateBody, response: { 200: DestinationWritten, 409: ErrorBody } },
    handler: async (req) => service.update(req.actor!, req.params.destination_id, req.body),
  });

  route(app, {
    method: 'DELETE',
    url: `${BASE}/:destination_id`,
    operationId: 'destinations.delete',
    summary: 'Delete a destination, its dead-letter queue, statistics and waiting events',
    description:
      '409 destination.in_use (error.details.route_ids) while routes name it. Destinations that mirrored to it lose their ' +
      'shadow. Events still waiting for it are counted dead-lettered (reason destination_deleted) in the ledger.',
    access: { requires: 'user.manage' },
    schema: { params: DestinationParams, response: { 204: NoContent, 409: ErrorBody } },
    handler: async (req, reply) => {
      await service.remove(req.actor!, req.params.destination_id);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/:destination_id/audit`,
    operationId: 'destinations.audit',
    summary: 'Audit entries about the destination, newest first',
    access: { requires: 'destination.read' },
    schema: { params: DestinationParams, querystring: AuditQuery, response: { 200: AuditPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0, outcome } = req.query;
      const page = { limit, offset };
      const { items, total } = await service.audit(scopeOf(req.actor!), req.params.destination_id, outcome, page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/:destination_id/credential/audit`,
    operationId: 'destinations.credential_audit',
    summary: 'Audit entries of the credential: set at creation, rotations, revocations and tests, newest first',
    access: { requires: 'user.manage' },
    schema: { params: DestinationParams, querystring: CredentialAuditQuery, response: { 200: AuditPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0 } = req.query;
      const page = { limit, offset };
      const { items, total } = await service.credentialAudit(scopeOf(req.actor!), req.params.destination_id, page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/:destination_id/credential/revoke`,
    operationId: 'destinations.credential_revoke',
    summary: 'Erase the credential and stop delivery until a new one is set',
    description:
      'The destination is disabled (disabled_reason credential_revoked); its events wait in the outbox until credential/rotate.',
    access: { requires: 'user.manage' },
    schema: { params: DestinationParams, response: { 200: Destination } },
    handler: async (req) => service.revoke(req.actor!, req.params.destination_id),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/:destination_id/credential/rotate`,
    operationId: 'destinations.credential_rotate',
    summary:
      'Replace the credential (validated, encrypted at once); re-enables a destination whose credential was revoked',
    access: { requires: 'user.manage' },
    schema: { params: DestinationParams, body: RotateBody, response: { 200: Destination } },
    handler: async (req) => service.rotate(req.actor!, req.params.destination_id, req.body.credential),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/:destination_id/shadow`,
    operationId: 'destinations.shadow',
    summary: 'Mirror every primary copy for this destination to another one (null stops it)',
    description:
      'The target must be another destination of the same organization, or a global one (a global destination mirrors only ' +
      'to a global one), and must not lead back here: 422 destination.invalid_shadow. Shadow copies never affect this ' +
      'destination and are never dead-lettered.',
    access: { requires: 'user.manage' },
    schema: { params: DestinationParams, body: ShadowBody, response: { 200: Destination } },
    handler: async (req) => service.shadow(req.actor!, req.params.destination_id, req.body.target_destination_id),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/:destination_id/test`,
    operationId: 'destinations.test',
    summary: 'Open a real connection to the destination with its credential; delivers no event',
    description:
      'Answers 200 whatever the outcome: ok false with error_kind when the destination cannot be reached (blocked_address ' +
      'when the SSRF guard refuses the address: see WEIR_OUTBOUND_ALLOW_CIDRS). Limited to 10 s.',
    access: { requires: 'user.manage' },
    // An outbound call: no transaction is held open while it runs.
    audit: 'separate',
    schema: { params: DestinationParams, response: { 200: TestResultSchema } },
    handler: async (req) => service.test(req.actor!, req.params.destination_id),
  });
}
