import { offsetEnvelope } from '../../core/paging.js';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody } from '../../platform/http/schemas.js';
import { AuditPage } from '../audit/schema.js';
import {
  AuditQuery,
  DEFAULT_DISCOVER_SAMPLES,
  DEFAULT_SAMPLE_LIMIT,
  DefinitionDetail,
  DefinitionPage,
  DefinitionParams,
  Diff,
  DiffParams,
  DiscoverQuery,
  Discovery,
  DryRunBody,
  DryRunResult,
  ListQuery,
  PageQuery,
  PublishBody,
  RollbackBody,
  SamplePage,
  SamplesQuery,
  TestCasesBody,
  TestCasesResult,
  TypeCastList,
  Version,
  VersionDetail,
  VersionPage,
  VersionParams,
  Definition,
} from './schema.js';
import type { MappingService } from './service.js';
import type { MappingTools } from './tools.js';

// Static paths (dry-run, samples, normalize/type-casts) are registered like the others:
// the router prefers a static segment over :definition_id whatever the order.
export function mappingRoutes(app: Api, service: MappingService, tools: MappingTools): void {
  route(app, {
    method: 'GET',
    url: '/api/mappings',
    operationId: 'mappings.list',
    summary: "Mapping definitions: the built-ins and your organizations' own",
    access: { requires: 'mapping.read' },
    schema: { querystring: ListQuery, response: { 200: DefinitionPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0, platform, stream, builtin, organization_id } = req.query;
      const page = { limit, offset };
      const { items, total } = await service.list(
        scopeOf(req.actor!),
        { platform, stream, builtin, organizationId: organization_id },
        page,
      );
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/mappings/dry-run',
    operationId: 'mappings.dry_run',
    summary: 'Run a draft or stored version on given events or on recent samples; changes nothing',
    description:
      'Exactly one of document (a draft) / definition_id (its live version, or version_id), and exactly one of events ' +
      '(at most 100) / sample. Each result carries the OCSF output, every validation issue and whether the live ' +
      'pipeline would quarantine the event under the OCSF policy named in `policy`. An invalid draft is a 422 ' +
      'mapping.invalid_document listing every problem. Results from samples have their personal data masked ' +
      '(`masked: true`) unless the caller holds quarantine.read, the permission to read raw events.',
    access: { requires: 'mapping.read' },
    audit: false,
    schema: { body: DryRunBody, response: { 200: DryRunResult, 409: ErrorBody } },
    handler: async (req) => tools.dryRun(req.actor!, req.body),
  });

  route(app, {
    method: 'POST',
    url: '/api/mappings/test-cases',
    operationId: 'mappings.test_cases',
    summary: 'Run the test cases of a draft or stored version without publishing; pass or fail per case, with why',
    description:
      'Exactly one of document (a draft) / definition_id (its live version, or version_id). The cases run as publication runs ' +
      'them (docs/mappings.md, Test cases): an invalid draft is a 422 mapping.invalid_document; failing cases are an answer, not an error.',
    addition: true,
    access: { requires: 'mapping.read' },
    audit: false,
    schema: { body: TestCasesBody, response: { 200: TestCasesResult, 409: ErrorBody } },
    handler: async (req) => tools.testCases(req.actor!, req.body),
  });

  route(app, {
    method: 'GET',
    url: '/api/mappings/normalize/type-casts',
    operationId: 'mappings.type_casts',
    summary: 'The casts a mapping assignment may name, with what each accepts and produces',
    access: { requires: 'mapping.read' },
    schema: { response: { 200: TypeCastList } },
    handler: async () => [...tools.typeCasts()],
  });

  route(app, {
    method: 'GET',
    url: '/api/mappings/samples',
    operationId: 'mappings.samples',
    summary: 'Recent raw events of an integration, newest first, personal data masked',
    access: { requires: 'mapping.read' },
    schema: { querystring: SamplesQuery, response: { 200: SamplePage } },
    handler: async (req) => {
      const { limit = DEFAULT_SAMPLE_LIMIT, offset = 0, integration_id, stream } = req.query;
      const page = { limit, offset };
      const { items, total } = await tools.samples(scopeOf(req.actor!), { integration_id, stream }, page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/mappings/:definition_id',
    operationId: 'mappings.get',
    summary: 'One mapping definition with its live document',
    access: { requires: 'mapping.read' },
    schema: { params: DefinitionParams, response: { 200: DefinitionDetail } },
    handler: async (req) => service.get(scopeOf(req.actor!), req.params.definition_id),
  });

  route(app, {
    method: 'GET',
    url: '/api/mappings/:definition_id/audit',
    operationId: 'mappings.audit',
    summary: 'Audit entries about the definition (publications, rollbacks, refused attempts), newest first',
    access: { requires: 'audit.read' },
    schema: { params: DefinitionParams, querystring: AuditQuery, response: { 200: AuditPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0, outcome } = req.query;
      const page = { limit, offset };
      const { items, total } = await service.audit(scopeOf(req.actor!), req.params.definition_id, outcome, page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/mappings/:definition_id/discover-fields',
    operationId: 'mappings.discover_fields',
    summary:
      "Fields seen in recent raw samples of the definition's platform/stream, with types, frequency and whether the live version reads them",
    description:
      "An organization's definition reads that organization's samples; a built-in reads the samples of every integration of " +
      'its platform in your scope. Paths are dotted, array elements written []. Examples are masked.',
    access: { requires: 'mapping.read' },
    schema: { params: DefinitionParams, querystring: DiscoverQuery, response: { 200: Discovery } },
    handler: async (req) => {
      const { integration_id, limit = DEFAULT_DISCOVER_SAMPLES } = req.query;
      return tools.discoverFields(scopeOf(req.actor!), req.params.definition_id, { integration_id, limit });
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/mappings/:definition_id/rollback',
    operationId: 'mappings.rollback',
    summary: 'Make an earlier version live again',
    description:
      'Body: exactly one of version_id and version. 409 mapping.already_live when it is live already. Workers pick the ' +
      'change up within seconds (well under the 30 s promised). Built-in definitions need platform scope.',
    access: { requires: 'mapping.rollback' },
    schema: { params: DefinitionParams, body: RollbackBody, response: { 200: Definition, 409: ErrorBody } },
    handler: async (req) => service.rollback(req.actor!, req.params.definition_id, req.body),
  });

  route(app, {
    method: 'GET',
    url: '/api/mappings/:definition_id/versions',
    operationId: 'mappings.versions_list',
    summary: 'Versions of a definition, newest first',
    access: { requires: 'mapping.read' },
    schema: { params: DefinitionParams, querystring: PageQuery, response: { 200: VersionPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0 } = req.query;
      const page = { limit, offset };
      const { items, total } = await service.versions(scopeOf(req.actor!), req.params.definition_id, page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/mappings/:definition_id/versions',
    operationId: 'mappings.versions_create',
    summary: 'Publish a new version: validated, numbered, and live at once',
    description:
      'The document is checked against the mapping language and the OCSF catalog: 422 mapping.invalid_document with ' +
      'error.details.problems [{at, message}] (at: a JSON pointer into the document). No confirmation window: the version ' +
      'is live when this answers, and workers load it within seconds. Built-in definitions need platform scope (403).',
    access: { requires: 'mapping.write' },
    schema: { params: DefinitionParams, body: PublishBody, response: { 201: Version } },
    handler: async (req, reply) => {
      const created = await service.publish(req.actor!, req.params.definition_id, req.body);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/mappings/:definition_id/versions/:version_a_id/diff/:version_b_id',
    operationId: 'mappings.versions_diff',
    summary: 'What changed from version A to version B',
    description:
      'Changes as JSON pointers with op add/remove/replace and the values before (from) and after (to). Objects are compared by key, arrays (rules, assignments) by index.',
    access: { requires: 'mapping.read' },
    schema: { params: DiffParams, response: { 200: Diff } },
    handler: async (req) =>
      service.diff(scopeOf(req.actor!), req.params.definition_id, req.params.version_a_id, req.params.version_b_id),
  });

  route(app, {
    method: 'GET',
    url: '/api/mappings/:definition_id/versions/:version_id',
    operationId: 'mappings.versions_get',
    summary: 'One version with its document',
    access: { requires: 'mapping.read' },
    schema: { params: VersionParams, response: { 200: VersionDetail } },
    handler: async (req) => service.version(scopeOf(req.actor!), req.params.definition_id, req.params.version_id),
  });
}
