import { Type } from 'typebox';
import { offsetEnvelope } from '../../core/paging.js';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody } from '../../platform/http/schemas.js';
import type { Notifications } from './notify.js';
import type { RulesService } from './rules.js';
import type { DetectionService, PatchBody as Patch } from './service.js';
import {
  CaseAnswer,
  CreateRuleBody,
  DetectionDetail,
  DetectionList,
  DetectionParams,
  ListQuery,
  PatchBody,
  RollbackBody,
  Rule,
  RuleList,
  RuleListQuery,
  RuleParams,
  RuleVersion,
  SigmaBody,
  SigmaCompiled,
  SigmaQuery,
  UpdateRuleBody,
} from './schema.js';
import { listRequest, triageRoutes } from './routes-triage.js';
import type { Triage } from './triage.js';

const pageOf = (q: { limit?: number; offset?: number }) => ({ limit: q.limit ?? DEFAULT_LIMIT, offset: q.offset ?? 0 });

export function detectionRoutes(
  app: Api,
  s: { detections: DetectionService; rules: RulesService; notifications: Notifications; triage: Triage },
): void {
  route(app, {
    method: 'GET',
    url: '/api/detections',
    operationId: 'detections.list',
    summary:
      'Detections of your organizations, most severe then most recent first (sort=time: most recent first), filtered by status, severity, time, rule, source, integration and group',
    access: { requires: 'authenticated' },
    schema: { querystring: ListQuery, response: { 200: DetectionList } },
    handler: async (req) => {
      const q = req.query;
      const { filter, sort, page } = listRequest(q);
      const { items, total } = await s.triage.list(scopeOf(req.actor!), filter, sort, page);
      return offsetEnvelope(items, total, page);
    },
  });

  triageRoutes(app, s.triage);

  route(app, {
    method: 'GET',
    url: '/api/detections/:detection_id',
    operationId: 'detections.get',
    summary: 'A detection with its OCSF finding and its whole history (status changes, assignments, comments)',
    access: { requires: 'authenticated' },
    schema: { params: DetectionParams, response: { 200: DetectionDetail } },
    handler: async (req) =>
      s.triage.detail(scopeOf(req.actor!), await s.detections.get(scopeOf(req.actor!), req.params.detection_id)),
  });

  route(app, {
    method: 'PATCH',
    url: '/api/detections/:detection_id',
    operationId: 'detections.update',
    summary:
      'Triage: change the status, the assignee, or add a comment; every change is in the history and the audit trail',
    access: { requires: 'query.run' },
    schema: { params: DetectionParams, body: PatchBody, response: { 200: DetectionDetail } },
    handler: async (req) =>
      s.triage.detail(
        scopeOf(req.actor!),
        await s.detections.patch(req.actor!, req.params.detection_id, req.body as Patch),
      ),
  });

  route(app, {
    method: 'POST',
    url: '/api/detections/:detection_id/case',
    operationId: 'detections.open_case',
    summary: 'Open a case for the detection in the case-management system (DFIR-IRIS), with a link back',
    addition: true,
    access: { requires: 'query.run' },
    audit: 'separate',
    schema: { params: DetectionParams, response: { 201: CaseAnswer, 409: ErrorBody, 502: ErrorBody } },
    handler: async (req, reply) => {
      reply.code(201);
      return s.notifications.openCase(req.actor!, req.params.detection_id);
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/detections/rules',
    operationId: 'detection_rules.list',
    summary: 'Detection rules of your organizations, each with its live version',
    addition: true,
    access: { requires: 'mapping.read' },
    schema: { querystring: RuleListQuery, response: { 200: RuleList } },
    handler: async (req) => {
      const page = pageOf(req.query);
      const { items, total } = await s.rules.list(scopeOf(req.actor!), req.query.organization_id, page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/detections/rules',
    operationId: 'detection_rules.create',
    summary: 'Create a detection rule (version 1, live at once); checked whole, 422 with every problem located',
    addition: true,
    access: { requires: 'query.save' },
    schema: { body: CreateRuleBody, response: { 201: Rule, 409: ErrorBody } },
    handler: async (req, reply) => {
      reply.code(201);
      return s.rules.create(req.actor!, req.body as never);
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/detections/rules/sigma',
    operationId: 'detection_rules.import_sigma',
    summary:
      'Create a detection rule from one Sigma rule (YAML), compiled to OCSF; 422 naming what cannot be compiled faithfully (field, modifier, position). dry_run=true only compiles',
    addition: true,
    access: { requires: 'query.save' },
    schema: { querystring: SigmaQuery, body: SigmaBody, response: { 200: SigmaCompiled, 201: Rule, 409: ErrorBody } },
    handler: async (req, reply) => {
      const dryRun = req.query.dry_run === true;
      const out = await s.rules.importSigma(req.actor!, req.body as never, dryRun);
      reply.code(dryRun ? 200 : 201);
      return out;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/detections/rules/:rule_id',
    operationId: 'detection_rules.get',
    summary: 'A detection rule with its live definition',
    addition: true,
    access: { requires: 'mapping.read' },
    schema: { params: RuleParams, response: { 200: Rule } },
    handler: async (req) => s.rules.get(scopeOf(req.actor!), req.params.rule_id),
  });

  route(app, {
    method: 'PUT',
    url: '/api/detections/rules/:rule_id',
    operationId: 'detection_rules.update',
    summary: 'Rename, enable or disable a rule; a new definition is a new version, live at once',
    addition: true,
    access: { requires: 'query.save' },
    schema: { params: RuleParams, body: UpdateRuleBody, response: { 200: Rule, 409: ErrorBody } },
    handler: async (req) => s.rules.update(req.actor!, req.params.rule_id, req.body as never),
  });

  route(app, {
    method: 'DELETE',
    url: '/api/detections/rules/:rule_id',
    operationId: 'detection_rules.delete',
    summary: 'Delete a rule and its versions (its detections stay)',
    addition: true,
    access: { requires: 'query.save' },
    schema: { params: RuleParams, response: { 204: Type.Null() } },
    handler: async (req, reply) => {
      await s.rules.remove(req.actor!, req.params.rule_id);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/detections/rules/:rule_id/versions',
    operationId: 'detection_rules.versions',
    summary: 'Every version of a rule, newest first',
    addition: true,
    access: { requires: 'mapping.read' },
    schema: { params: RuleParams, response: { 200: Type.Array(RuleVersion) } },
    handler: async (req) => s.rules.versions(scopeOf(req.actor!), req.params.rule_id),
  });

  route(app, {
    method: 'POST',
    url: '/api/detections/rules/:rule_id/rollback',
    operationId: 'detection_rules.rollback',
    summary: "Make an earlier version's definition live again, as a new version",
    addition: true,
    access: { requires: 'query.save' },
    schema: { params: RuleParams, body: RollbackBody, response: { 200: Rule, 409: ErrorBody } },
    handler: async (req) => s.rules.rollback(req.actor!, req.params.rule_id, req.body.version, req.body.comment),
  });
}
