import { Readable } from 'node:stream';
import { offsetEnvelope } from '../../core/paging.js';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT } from '../../platform/http/schemas.js';
import { AuditCsvQuery, AuditPage, AuditQuery, CsvBody, HistoryQuery } from './schema.js';
import type { AuditService } from './service.js';
import type { AuditFilter } from './store.js';

type FilterQuery = {
  from?: Date;
  to?: Date;
  actor_kind?: string;
  actor_id?: number;
  operation_id?: string;
  organization_id?: number;
  outcome?: string;
};

function filterOf(q: FilterQuery): AuditFilter {
  return {
    from: q.from,
    to: q.to,
    actorKind: q.actor_kind,
    actorId: q.actor_id,
    operationId: q.operation_id,
    organizationId: q.organization_id,
    outcome: q.outcome,
  };
}

export function auditRoutes(app: Api, service: AuditService): void {
  route(app, {
    method: 'GET',
    url: '/api/history/',
    operationId: 'history.list',
    summary: 'Audit history: your own entries, or every entry of your scope when you manage users',
    description:
      'Newest first. Callers without user.manage see only entries they caused themselves; callers with it see every ' +
      'entry in their scope (platform entries only with global scope). Unlike the original service, limit and offset work.',
    access: { requires: 'authenticated' },
    schema: { querystring: HistoryQuery, response: { 200: AuditPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0, ...q } = req.query;
      const page = { limit, offset };
      const { items, total } = await service.history(req.actor!, filterOf(q), page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/history/audit',
    operationId: 'history.audit',
    summary: 'The audit trail of your scope, newest first',
    description: 'Entries without an organization (platform operations) are visible only with global scope.',
    access: { requires: 'user.manage' },
    schema: { querystring: AuditQuery, response: { 200: AuditPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0, ...q } = req.query;
      const page = { limit, offset };
      const { items, total } = await service.list(scopeOf(req.actor!), filterOf(q), page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/history/audit/csv',
    operationId: 'history.audit_csv',
    summary: 'The audit trail of your scope as CSV, streamed, oldest first',
    description:
      'RFC 4180 with a header row. Cells that a spreadsheet would read as a formula are prefixed with a single quote. ' +
      'For a faithful export of a period, filter by a closed past time window (from and to).',
    access: { requires: 'user.manage' },
    schema: {
      querystring: AuditCsvQuery,
      response: { 200: { description: 'The entries as CSV', content: { 'text/csv': { schema: CsvBody } } } },
    },
    handler: async (req, reply) => {
      const stamp = new Date()
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d+Z$/, 'Z');
      reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="audit-${stamp}.csv"`)
        .header('cache-control', 'no-store');
      return reply.send(Readable.from(service.csv(scopeOf(req.actor!), filterOf(req.query))));
    },
  });
}
