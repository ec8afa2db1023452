import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { offsetEnvelope } from '../../core/paging.js';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody } from '../../platform/http/schemas.js';
import {
  CaptureSession,
  CaptureVendorList,
  CapturedEvent,
  CollectorConfig,
  CreateSessionBody,
  EventPage,
  EventParams,
  EventQuery,
  EventsQuery,
  ExportQuery,
  NdjsonBody,
  SessionListQuery,
  SessionPage,
  SessionParams,
  SettingsPatch,
} from './schema.js';
import type { CollectorConfigService } from './service.js';

const BASE = '/api/collectors/config';
const SESSIONS = `${BASE}/capture-sessions`;

export function collectorConfigRoutes(app: Api, service: CollectorConfigService): void {
  route(app, {
    method: 'GET',
    url: BASE,
    operationId: 'collector_config.get',
    summary: 'The global collector settings, with their defaults, ranges and descriptions',
    access: { requires: 'user.manage' },
    schema: { response: { 200: CollectorConfig } },
    handler: async () => service.config(),
  });

  route(app, {
    method: 'PUT',
    url: BASE,
    operationId: 'collector_config.update',
    summary: 'Change some collector settings (platform-wide); the audit entry records each old and new value',
    description:
      'Partial: absent settings keep their value. Out-of-range values are 422. Workers read the change within 5 seconds.',
    access: { requires: 'user.manage', globalScope: true },
    schema: { body: SettingsPatch, response: { 200: CollectorConfig } },
    handler: async (req) => service.updateConfig(req.actor!, req.body),
  });

  route(app, {
    method: 'GET',
    url: SESSIONS,
    operationId: 'collector_config.capture_list',
    summary: 'Live capture sessions in your scope, newest first',
    access: { requires: 'user.manage' },
    schema: { querystring: SessionListQuery, response: { 200: SessionPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0, status, integration_id, organization_id } = req.query;
      const page = { limit, offset };
      const { items, total } = await service.listSessions(
        scopeOf(req.actor!),
        { status, integrationId: integration_id, organizationId: organization_id },
        page,
      );
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'POST',
    url: SESSIONS,
    operationId: 'collector_config.capture_create',
    summary: 'Start capturing the raw events of an integration (optionally one stream)',
    description:
      'Captures what reaches the normalization stage, pushed or collected, within about 2 seconds of creation. Captured events are ' +
      'personal data: they are kept until the session is deleted, or 7 days after it ended. Beyond the collector settings ' +
      'capture_max_minutes and capture_max_events, or with 5 sessions already active on the integration: 422 capture.limit_exceeded.',
    access: { requires: 'user.manage' },
    schema: { body: CreateSessionBody, response: { 201: CaptureSession } },
    handler: async (req, reply) => {
      const created = await service.createSession(req.actor!, req.body);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'DELETE',
    url: `${SESSIONS}/:session_id`,
    operationId: 'collector_config.capture_delete',
    summary: 'Remove a capture session and every event it captured',
    access: { requires: 'user.manage' },
    schema: { params: SessionParams, response: { 204: Type.Null({ description: 'Removed with its events' }) } },
    handler: async (req, reply) => {
      await service.deleteSession(scopeOf(req.actor!), req.params.session_id);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: `${SESSIONS}/:session_id/events`,
    operationId: 'collector_config.capture_events',
    summary: 'The events a session captured, oldest first, as captured (mask=true masks personal data)',
    description: 'Oldest first, so paging stays stable while the session still captures.',
    access: { requires: 'user.manage' },
    schema: { params: SessionParams, querystring: EventsQuery, response: { 200: EventPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0, mask = false } = req.query;
      const page = { limit, offset };
      const { items, total } = await service.listEvents(scopeOf(req.actor!), req.params.session_id, page, mask);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'GET',
    url: `${SESSIONS}/:session_id/events/:event_id`,
    operationId: 'collector_config.capture_event',
    summary: 'One captured event, as captured (mask=true masks personal data)',
    access: { requires: 'user.manage' },
    schema: { params: EventParams, querystring: EventQuery, response: { 200: CapturedEvent } },
    handler: async (req) =>
      service.event(scopeOf(req.actor!), req.params.session_id, req.params.event_id, req.query.mask ?? false),
  });

  route(app, {
    method: 'GET',
    url: `${SESSIONS}/:session_id/export`,
    operationId: 'collector_config.capture_export',
    summary: 'The captured events as NDJSON, oldest first, masked unless mask=false',
    description:
      'One event per line, so the file can be pushed back to /api/ingest/{stream}. Personal data (e-mail and IP addresses, ' +
      'names, long digit runs) is masked by default; mask=false exports the raw events and takes them out of the system. ' +
      'Every export is recorded in the audit trail with its mask setting.',
    access: { requires: 'user.manage', globalScope: true },
    // Reads nothing it changes, but an export of personal data is recorded; no transaction is held while it streams.
    audit: 'separate',
    schema: {
      params: SessionParams,
      querystring: ExportQuery,
      response: {
        200: { description: 'The events as NDJSON', content: { 'application/x-ndjson': { schema: NdjsonBody } } },
      },
    },
    handler: async (req, reply) => {
      const mask = req.query.mask ?? true;
      const { session, lines } = await service.export(scopeOf(req.actor!), req.params.session_id, mask);
      reply
        .type('application/x-ndjson; charset=utf-8')
        .header('content-disposition', `attachment; filename="capture-${session.id}${mask ? '' : '-raw'}.ndjson"`)
        .header('cache-control', 'no-store');
      // Returned, not sent: the unit of work writes the audit entry before the first byte leaves.
      return Readable.from(lines);
    },
  });

  route(app, {
    method: 'POST',
    url: `${SESSIONS}/:session_id/stop`,
    operationId: 'collector_config.capture_stop',
    summary: 'Stop an active capture session; its events stay until it is deleted',
    description: 'A session that is not active (stopped, full, expired) answers 409 capture.not_active.',
    access: { requires: 'user.manage' },
    schema: { params: SessionParams, response: { 200: CaptureSession, 409: ErrorBody } },
    handler: async (req) => service.stopSession(scopeOf(req.actor!), req.params.session_id),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/capture-vendors`,
    operationId: 'collector_config.capture_vendors',
    summary: 'Every platform with the streams that can be captured (pushed and collected alike)',
    access: { requires: 'user.manage' },
    schema: { response: { 200: CaptureVendorList } },
    handler: async () => service.vendors(),
  });
}
