import { Type } from 'typebox';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody } from '../../platform/http/schemas.js';
import type { EnrichmentOperations } from './operations.js';
import type { PoliciesService } from './policies.js';
import {
  ActivityPage,
  ActivityQuery,
  DryRunBody,
  DryRunResult,
  Enrichers,
  KeySources,
  Metrics,
  MetricsQuery,
} from './schema-operations.js';
import {
  CreatedTable,
  CreatePolicyBody,
  CreateSourceBody,
  CreateTableBody,
  EnableBody,
  OrgQuery,
  PatchSourceBody,
  Policy,
  PolicyList,
  PolicyParams,
  PolicyVersion,
  PolicyVersionBody,
  PolicyVersionList,
  PolicyVersionParams,
  RollbackBody,
  Source,
  SOURCE_BODY_LIMIT,
  SourceList,
  SourceParams,
  TABLE_BODY_LIMIT,
  TableDetail,
  TableList,
  TableParams,
  TableQuery,
  TableVersionBody,
  TableVersionList,
  TableVersionSchema,
  TestBody,
  TestResult,
} from './schema.js';
import type { SourcesService } from './sources.js';
import type { TablesService } from './tables.js';

const BASE = '/api/collectors/enrichment';
const NoContent = Type.Null({ description: 'Deleted' });
const DOCS = 'docs/enrichment.md.';
const access = { requires: 'user.manage' } as const;

export interface EnrichmentApi {
  tables: TablesService;
  sources: SourcesService;
  policies: PoliciesService;
  operations: EnrichmentOperations;
}

export function enrichmentRoutes(app: Api, api: EnrichmentApi): void {
  const { tables, sources, policies, operations } = api;

  route(app, {
    method: 'GET',
    url: `${BASE}/activity`,
    operationId: 'enrichment.activity',
    summary: 'Recent enrichment changes and notable events (feed fetch failures, source errors), newest first',
    access,
    schema: { querystring: ActivityQuery, response: { 200: ActivityPage } },
    handler: async (req) =>
      operations.activity(scopeOf(req.actor!), {
        limit: req.query.limit ?? DEFAULT_LIMIT,
        offset: req.query.offset ?? 0,
        ...(req.query.organization_id !== undefined ? { organization_id: req.query.organization_id } : {}),
      }),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/dry-run`,
    operationId: 'enrichment.dry_run',
    summary:
      "Run the local rules (tables, GeoIP, uploaded databases) on given events or the organization's recent samples; changes nothing",
    description: `Rules that call an external service (HTTP sources) come back with outcome skipped: use the source test. Drafts are checked as a publication would (422). ${DOCS}`,
    access,
    audit: false,
    bodyLimit: 16 * 1024 * 1024,
    schema: { body: DryRunBody, response: { 200: DryRunResult } },
    handler: async (req) => operations.dryRun(req.actor!, req.body),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/enrichers`,
    operationId: 'enrichment.enrichers',
    summary: "The kinds of enrichment available and the JSON Schema of each one's configuration",
    access,
    schema: { response: { 200: Enrichers } },
    handler: async () => operations.enrichers(),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/key-sources`,
    operationId: 'enrichment.key_sources',
    summary: "Fields usable as lookup keys, from the OCSF classes the organization's live mappings produce",
    access,
    schema: { querystring: OrgQuery, response: { 200: KeySources } },
    handler: async (req) => operations.keySources(scopeOf(req.actor!), req.query.organization_id),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/metrics`,
    operationId: 'enrichment.metrics',
    summary: 'Per policy: events seen, hits, misses, errors, unanswered external lookups and latency, per minute',
    description: 'window_minutes is at most 180 (422 beyond): the live series keeps three hours.',
    access,
    schema: { querystring: MetricsQuery, response: { 200: Metrics } },
    handler: async (req) => operations.metrics(scopeOf(req.actor!), req.query),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/policies`,
    operationId: 'enrichment.policies.list',
    summary: 'Enrichment policies of your organizations, in the order they run',
    access,
    schema: { querystring: OrgQuery, response: { 200: PolicyList } },
    handler: async (req) => policies.list(scopeOf(req.actor!), req.query.organization_id),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/policies`,
    operationId: 'enrichment.policies.create',
    summary: 'Create a policy (its version 1); live in every worker within a poll',
    description: `An invalid rule (unknown field, unknown table or source, a target the class lacks, a column the lookup lacks) is refused with 422 enrichment.invalid_rule and error.details.errors [{path, message}]. ${DOCS}`,
    access,
    schema: { body: CreatePolicyBody, response: { 201: Policy, 409: ErrorBody } },
    handler: async (req, reply) => {
      const created = await policies.create(req.actor!, req.body);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/policies/:policy_id/enable`,
    operationId: 'enrichment.policies.enable',
    summary: 'Enable (or, with enabled: false, disable) a policy',
    description: 'Enabling checks the rule again (what it looks up in may be gone): 422 enrichment.invalid_rule.',
    access,
    schema: { params: PolicyParams, body: EnableBody, response: { 200: Policy } },
    optionalBody: true,
    handler: async (req) => policies.enable(req.actor!, req.params.policy_id, req.body.enabled ?? true),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/policies/:policy_id/rollback`,
    operationId: 'enrichment.policies.rollback',
    summary: "Publish an earlier version's definition again, as a new version",
    access,
    schema: { params: PolicyParams, body: RollbackBody, response: { 201: PolicyVersion, 409: ErrorBody } },
    handler: async (req, reply) => {
      const v = await policies.rollback(req.actor!, req.params.policy_id, req.body.version, req.body.comment);
      reply.code(201);
      return v;
    },
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/policies/:policy_id/versions`,
    operationId: 'enrichment.policies.versions',
    summary: 'Versions of a policy, newest first',
    access,
    schema: { params: PolicyParams, response: { 200: PolicyVersionList } },
    handler: async (req) => policies.versions(scopeOf(req.actor!), req.params.policy_id),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/policies/:policy_id/versions`,
    operationId: 'enrichment.policies.publish',
    summary: 'Publish a new version of a policy (the whole definition)',
    description: `Checked like a creation: 422 enrichment.invalid_rule with every problem and its location. ${DOCS}`,
    access,
    schema: { params: PolicyParams, body: PolicyVersionBody, response: { 201: PolicyVersion, 409: ErrorBody } },
    handler: async (req, reply) => {
      const v = await policies.addVersion(req.actor!, req.params.policy_id, req.body);
      reply.code(201);
      return v;
    },
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/policies/:policy_id/versions/:version_id`,
    operationId: 'enrichment.policies.version',
    summary: 'One version of a policy',
    access,
    schema: { params: PolicyVersionParams, response: { 200: PolicyVersion } },
    handler: async (req) => policies.version(scopeOf(req.actor!), req.params.policy_id, req.params.version_id),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/sources`,
    operationId: 'enrichment.sources.list',
    summary:
      'Sources usable by your organizations: the built-in GeoIP, your own, and those shared with every organization',
    access,
    schema: { querystring: OrgQuery, response: { 200: SourceList } },
    handler: async (req) => sources.list(scopeOf(req.actor!), req.query.organization_id),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/sources`,
    operationId: 'enrichment.sources.create',
    summary: 'Create a source: an uploaded MaxMind database, an HTTP lookup API or an indicator feed',
    description:
      'shared: true needs Enterprise (403 enrichment.source_sharing_requires_enterprise). A feed gets its own table, ' +
      `fetched at once and then every interval_minutes. The credential is sealed and never returned. ${DOCS}`,
    access,
    bodyLimit: SOURCE_BODY_LIMIT,
    schema: { body: CreateSourceBody, response: { 201: Source, 409: ErrorBody } },
    handler: async (req, reply) => {
      const created = await sources.create(req.actor!, req.body);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'DELETE',
    url: `${BASE}/sources/:source_id`,
    operationId: 'enrichment.sources.delete',
    summary: 'Delete a source (409 naming the policies that use it)',
    access,
    schema: { params: SourceParams, response: { 204: NoContent, 409: ErrorBody } },
    handler: async (req, reply) => {
      await sources.remove(req.actor!, req.params.source_id);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'PATCH',
    url: `${BASE}/sources/:source_id`,
    operationId: 'enrichment.sources.update',
    summary: 'Change a source: name, configuration, credential (null removes it), sharing, enabled, database file',
    access,
    bodyLimit: SOURCE_BODY_LIMIT,
    schema: { params: SourceParams, body: PatchSourceBody, response: { 200: Source, 409: ErrorBody } },
    handler: async (req) => sources.update(req.actor!, req.params.source_id, req.body),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/sources/:source_id/test`,
    operationId: 'enrichment.sources.test',
    summary: 'Make a real call now: look a key up (HTTP API, database) or fetch and parse the feed (stores nothing)',
    description: 'Answers 200 with ok: false when the source fails; the credential never appears.',
    access,
    audit: false,
    schema: { params: SourceParams, body: TestBody, response: { 200: TestResult } },
    optionalBody: true,
    handler: async (req) => operations.test(req.actor!, req.params.source_id, req.body.key),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/tables`,
    operationId: 'enrichment.tables.list',
    summary: 'Lookup tables of your organizations (without their rows)',
    access,
    schema: { querystring: OrgQuery, response: { 200: TableList } },
    handler: async (req) => tables.list(scopeOf(req.actor!), req.query.organization_id),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/tables`,
    operationId: 'enrichment.tables.create',
    summary: 'Create a lookup table from CSV or JSON rows (version 1)',
    description: `Up to 2,000,000 rows. 422 enrichment.invalid_table lists each problem with its row. ${DOCS}`,
    access,
    bodyLimit: TABLE_BODY_LIMIT,
    schema: { body: CreateTableBody, response: { 201: CreatedTable, 409: ErrorBody } },
    handler: async (req, reply) => {
      const created = await tables.create(req.actor!, req.body);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'DELETE',
    url: `${BASE}/tables/:table_id`,
    operationId: 'enrichment.tables.delete',
    summary: 'Delete a table (409 enrichment.in_use naming the enabled policies and feeds that use it)',
    access,
    schema: { params: TableParams, response: { 204: NoContent, 409: ErrorBody } },
    handler: async (req, reply) => {
      await tables.remove(req.actor!, req.params.table_id, sources.feedsUsing);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/tables/:table_id`,
    operationId: 'enrichment.tables.get',
    summary: 'A table with its live version and a page of its rows',
    access,
    schema: { params: TableParams, querystring: TableQuery, response: { 200: TableDetail } },
    handler: async (req) =>
      tables.get(scopeOf(req.actor!), req.params.table_id, {
        limit: req.query.limit ?? 20,
        offset: req.query.offset ?? 0,
      }),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/tables/:table_id/rollback`,
    operationId: 'enrichment.tables.rollback',
    summary: "Make an earlier version's rows live again, as a new version",
    access,
    schema: { params: TableParams, body: RollbackBody, response: { 201: TableVersionSchema, 409: ErrorBody } },
    handler: async (req, reply) => {
      const v = await tables.rollback(req.actor!, req.params.table_id, req.body.version, req.body.comment);
      reply.code(201);
      return v;
    },
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/tables/:table_id/versions`,
    operationId: 'enrichment.tables.versions',
    summary: 'Versions of a table, newest first',
    access,
    schema: { params: TableParams, response: { 200: TableVersionList } },
    handler: async (req) => tables.versions(scopeOf(req.actor!), req.params.table_id),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/tables/:table_id/versions`,
    operationId: 'enrichment.tables.publish',
    summary: 'Add a version: a full replacement (csv or rows) or a row patch (upsert, delete)',
    access,
    bodyLimit: TABLE_BODY_LIMIT,
    schema: { params: TableParams, body: TableVersionBody, response: { 201: TableVersionSchema } },
    handler: async (req, reply) => {
      const v = await tables.addVersion(req.actor!, req.params.table_id, req.body);
      reply.code(201);
      return v;
    },
  });
}
