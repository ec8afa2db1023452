import { Type } from 'typebox';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody, setPageHeaders } from '../../platform/http/schemas.js';
import { COMMUNITY_ORG_LIMIT } from '../licenses/service.js';
import {
  BulkDeactivateBody,
  BulkResult,
  CreateBody,
  CustomerMappings,
  DataDeletionAccepted,
  DataDeletionBody,
  ListQuery,
  Organization,
  OrganizationList,
  OrgParams,
  Retention,
  RetentionBody,
  SyncResult,
  UpdateBody,
} from './schema.js';
import type { OrganizationService } from './service.js';

export function organizationRoutes(app: Api, service: OrganizationService): void {
  route(app, {
    method: 'GET',
    url: '/api/organizations/',
    operationId: 'organizations.list',
    summary: 'Organizations in your scope, by id; the count is in X-Total-Count',
    access: { requires: 'authenticated' },
    schema: { querystring: ListQuery, response: { 200: OrganizationList } },
    handler: async (req, reply) => {
      const page = { page: req.query.page ?? 1, size: req.query.size ?? DEFAULT_LIMIT };
      const { items, total } = await service.list(scopeOf(req.actor!), page);
      setPageHeaders(reply, total, page);
      return items;
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/organizations/',
    operationId: 'organizations.create',
    summary: "Create an organization within the edition's ceiling",
    description: `The organization starts with an event store (destination type event_store) and a first route "Everything to the event store" that sends it every event (final: false), so nothing pushed before routes are configured is out of reach; edit, disable or delete them like any other. Beyond the ceiling (Community: ${COMMUNITY_ORG_LIMIT}; Enterprise: the license's org_limit) the answer is 403 edition.org_limit_reached.`,
    access: { requires: 'user.manage', globalScope: true },
    schema: { body: CreateBody, response: { 201: Organization, 409: ErrorBody } },
    handler: async (req, reply) => {
      const created = await service.create(req.body, req.actor!);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/organizations/bulk/deactivate',
    operationId: 'organizations.bulk_deactivate',
    summary: 'Deactivate up to 500 organizations; ids outside your scope are reported as not found',
    access: { requires: 'user.manage' },
    schema: { body: BulkDeactivateBody, response: { 200: BulkResult } },
    handler: async (req) => service.bulkDeactivate(scopeOf(req.actor!), req.body.ids),
  });

  route(app, {
    method: 'GET',
    url: '/api/organizations/:org_id',
    operationId: 'organizations.get',
    summary: 'One organization',
    access: { requires: 'authenticated' },
    schema: { params: OrgParams, response: { 200: Organization } },
    handler: async (req) => service.get(scopeOf(req.actor!), req.params.org_id),
  });

  route(app, {
    method: 'PUT',
    url: '/api/organizations/:org_id',
    operationId: 'organizations.update',
    summary: 'Rename, deactivate or reactivate an organization',
    access: { requires: 'user.manage' },
    schema: { params: OrgParams, body: UpdateBody, response: { 200: Organization, 409: ErrorBody } },
    handler: async (req) => service.update(scopeOf(req.actor!), req.params.org_id, req.body),
  });

  route(app, {
    method: 'DELETE',
    url: '/api/organizations/:org_id',
    operationId: 'organizations.delete',
    summary: 'Delete an organization with its users, service accounts, tokens and data',
    access: { requires: 'user.manage', globalScope: true },
    schema: { params: OrgParams, response: { 204: Type.Null() } },
    handler: async (req, reply) => {
      await service.remove(scopeOf(req.actor!), req.params.org_id);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/organizations/:org_id/retention',
    operationId: 'organizations.get_retention',
    summary: 'Quarantine/data retention of the organization, in days',
    access: { requires: 'integration.read' },
    schema: { params: OrgParams, response: { 200: Retention } },
    handler: async (req) => service.retention(scopeOf(req.actor!), req.params.org_id),
  });

  route(app, {
    method: 'PUT',
    url: '/api/organizations/:org_id/retention',
    operationId: 'organizations.set_retention',
    summary: 'Set the retention in days (1-3650)',
    access: { requires: 'org.manage' },
    schema: { params: OrgParams, body: RetentionBody, response: { 200: Retention } },
    handler: async (req) => service.setRetention(scopeOf(req.actor!), req.params.org_id, req.body.retention_days),
  });

  route(app, {
    method: 'DELETE',
    url: '/api/organizations/:org_id/data',
    operationId: 'organizations.delete_data',
    summary: "Irreversibly delete the organization's data (runs as a job)",
    description:
      'The body must be exactly {"confirm": "DELETE <organization name>"}, else 400. Answers 202 with the deletion id; ' +
      'the job ends completed, or partial when a best-effort step (search-index cleanup) failed.',
    access: { requires: 'org.manage' },
    // Separate audit: the request is recorded and queued outside a transaction, so the job
    // never looks for a row that is not committed yet.
    audit: 'separate',
    schema: { params: OrgParams, body: DataDeletionBody, response: { 202: DataDeletionAccepted } },
    handler: async (req, reply) => {
      const accepted = await service.requestDataDeletion(
        req.actor!,
        scopeOf(req.actor!),
        req.params.org_id,
        req.body.confirm,
      );
      reply.code(202);
      return accepted;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/organizations/:org_id/customer-mappings',
    operationId: 'organizations.customer_mappings',
    summary: "The organization's case-management customer id and partner tenant ids",
    access: { requires: 'org.manage' },
    schema: { params: OrgParams, response: { 200: CustomerMappings } },
    handler: async (req) => service.customerMappings(scopeOf(req.actor!), req.params.org_id),
  });

  route(app, {
    method: 'POST',
    url: '/api/organizations/:org_id/sync-case-customer',
    operationId: 'organizations.sync_case_customer',
    summary: 'Synchronise the organization with its case-management customer',
    description:
      "Finds the organization's customer in DFIR-IRIS (by its stored case_customer_id, else by name), creates it when missing, and stores its id; " +
      'action says which. Without a configured case-management system the answer is 200 {synced: false, reason}: a valid state, not an error. ' +
      'When the system is down or refuses the key the answer is 502 with the reason.',
    access: { requires: 'org.manage' },
    // Separate: the outbound call never holds a database transaction open.
    audit: 'separate',
    schema: { params: OrgParams, response: { 200: SyncResult, 502: ErrorBody } },
    handler: async (req) => service.syncCaseCustomer(scopeOf(req.actor!), req.params.org_id),
  });
}
