import { Type } from 'typebox';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody, setPageHeaders } from '../../platform/http/schemas.js';
import {
  CreateBody,
  type DeliveryStatusName,
  EmailParams,
  ListQuery,
  PutConfigBody,
  Recipient,
  RecipientList,
  SmtpConfig,
  TestBody,
  TestResult,
} from './schema.js';
import type { EmailService } from './service.js';
import type { LastDelivery } from './store.js';

export function emailRoutes(
  app: Api,
  service: EmailService,
  lastDeliveries: (ids: number[]) => Promise<Map<number, LastDelivery>>,
): void {
  const withDelivery = async <R extends { id: number }>(rows: R[]) => {
    const last = await lastDeliveries(rows.map((r) => r.id));
    return rows.map((r) => {
      const d = last.get(r.id);
      return {
        ...r,
        last_delivery: d
          ? {
              id: d.id,
              status: d.status as DeliveryStatusName,
              attempts: d.attempts,
              last_error: d.last_error,
              subject: d.subject,
              updated_at: d.updated_at,
            }
          : null,
      };
    });
  };

  route(app, {
    method: 'GET',
    url: '/api/emails/',
    operationId: 'emails.list',
    summary: 'Recipients of your organizations, each with its last delivery (status, attempts, last error)',
    access: { requires: 'user.manage' },
    schema: { querystring: ListQuery, response: { 200: RecipientList } },
    handler: async (req, reply) => {
      const page = { page: req.query.page ?? 1, size: req.query.size ?? DEFAULT_LIMIT };
      const { items, total } = await service.listRecipients(scopeOf(req.actor!), page, req.query.organization_id);
      setPageHeaders(reply, total, page);
      return withDelivery(items);
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/emails/',
    operationId: 'emails.create',
    summary: 'Add a recipient to an organization: messages about its data go to its recipients only',
    access: { requires: 'user.manage', globalScope: true },
    schema: { body: CreateBody, response: { 201: Recipient, 409: ErrorBody } },
    handler: async (req, reply) => {
      const row = await service.createRecipient(scopeOf(req.actor!), req.body);
      reply.code(201);
      return { ...row, last_delivery: null };
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/emails/config',
    operationId: 'emails.get_config',
    summary: 'The SMTP settings; the password is never returned, only whether one is set',
    access: { requires: 'user.manage' },
    schema: { response: { 200: SmtpConfig } },
    handler: async () => service.getConfig(),
  });

  route(app, {
    method: 'PUT',
    url: '/api/emails/config',
    operationId: 'emails.put_config',
    summary: 'Set the SMTP settings (a password omitted is kept)',
    description:
      'security none (plaintext) is refused unless the host resolves to a loopback or private address. ' +
      'The host must be reachable under the outbound policy (WEIR_OUTBOUND_ALLOW_CIDRS for loopback).',
    access: { requires: 'user.manage', globalScope: true },
    schema: { body: PutConfigBody, response: { 200: SmtpConfig } },
    handler: async (req) => service.putConfig(req.actor!, req.body),
  });

  route(app, {
    method: 'POST',
    url: '/api/emails/test',
    operationId: 'emails.test',
    summary: 'Send a test message now; 200 says whether it was sent and, if not, why',
    description:
      'Without platform scope the message goes only to a recipient of your organizations or to your own address (else 403).',
    access: { requires: 'user.manage' },
    // An outbound SMTP session: no transaction is held while it runs.
    audit: 'separate',
    optionalBody: true,
    schema: { body: TestBody, response: { 200: TestResult } },
    handler: async (req) => service.test(req.actor!, req.body.to),
  });

  route(app, {
    method: 'DELETE',
    url: '/api/emails/:email_id',
    operationId: 'emails.delete',
    summary: 'Remove a recipient; its pending messages are cancelled',
    access: { requires: 'user.manage', globalScope: true },
    schema: { params: EmailParams, response: { 204: Type.Null() } },
    handler: async (req, reply) => {
      await service.deleteRecipient(scopeOf(req.actor!), req.params.email_id);
      reply.code(204);
      return null;
    },
  });
}
