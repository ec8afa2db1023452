// The API's operations read from its own OpenAPI document, and one object of an organization
// per kind of id the operations take: what suites that call every operation generically
// (the route-table security suite, the boundary sweep) start from.
import { storeTableData } from '../../src/modules/enrichment/common.js';
import { encodeRecords } from '../../src/pipeline/batch-codec.js';
import { newId } from '../../src/core/ids.js';
import type { TestApp } from './app.js';
import { createPrincipal } from './identity.js';
import { loginDocument } from './mappings.js';
import type { JsonSchema } from './schema-example.js';

export interface ApiParameter {
  in: 'path' | 'query' | 'header' | 'cookie';
  name: string;
  required?: boolean;
  schema?: JsonSchema;
}

export interface ApiOperation {
  method: string;
  path: string;
  operationId: string;
  requires: string;
  globalScope: boolean;
  /** Names of the path parameters. */
  params: string[];
  parameters: ApiParameter[];
  body?: JsonSchema;
  /** The required query parameters, as one object schema. */
  query?: JsonSchema;
  /** The statuses the document declares for it. */
  statuses: string[];
}

export async function loadOperations(t: TestApp): Promise<ApiOperation[]> {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  const out: ApiOperation[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const parameters = (op.parameters ?? []) as ApiParameter[];
      const content = (op.requestBody as { content?: Record<string, { schema?: JsonSchema }> } | undefined)?.content;
      const queryRequired = parameters.filter((x) => x.in === 'query' && x.required);
      out.push({
        method: method.toUpperCase(),
        path: p,
        operationId: String(op.operationId),
        requires: String(op['x-weir-requires']),
        globalScope: Boolean(op['x-weir-global-scope']),
        params: parameters.filter((x) => x.in === 'path').map((x) => x.name),
        statuses: Object.keys((op.responses ?? {}) as Record<string, unknown>),
        parameters,
        body: content?.['application/json']?.schema,
        query: queryRequired.length
          ? {
              type: 'object',
              required: queryRequired.map((q) => q.name),
              properties: Object.fromEntries(queryRequired.map((q) => [q.name, q.schema ?? {}])),
            }
          : undefined,
      });
    }
  }
  return out;
}

/**
 * Creates one object of the organization per kind of id the API takes, and answers their ids
 * by path parameter name (org_id, integration_id, user_id, destination_id, ...).
 */
export async function seedObjects(t: TestApp, org: number): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  const db = t.container.database.db;
  ids.org_id = String(org);
  ids.organization_id = String(org);
  const integration = await db
    .insertInto('integrations')
    .values({ organization_id: org, name: `integration-${org}`, platform: 'custom', config: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  ids.integration_id = String(integration.id);
  const user = await createPrincipal(t, { role: 'viewer', organizationId: org });
  ids.user_id = String(user.id);
  const serviceAccount = await createPrincipal(t, { role: 'viewer', organizationId: org, kind: 'service_account' });
  ids.service_account_id = String(serviceAccount.id);
  const token = await db.selectFrom('api_tokens').select('id').where('user_id', '=', user.id).executeTakeFirstOrThrow();
  ids.token_id = String(token.id);
  // A mapping definition with one version (mapping ids are UUIDv7 text).
  const definition = newId();
  const version = newId();
  await db
    .insertInto('mapping_definitions')
    .values({ id: definition, organization_id: org, platform: 'custom', stream: 'stream-a', name: `mapping-${org}` })
    .execute();
  await db
    .insertInto('mapping_versions')
    .values({
      id: version,
      definition_id: definition,
      version: 1,
      document: JSON.stringify(loginDocument()),
      checksum: 'seed',
    })
    .execute();
  await db.updateTable('mapping_definitions').set({ live_version_id: version }).where('id', '=', definition).execute();
  ids.definition_id = definition;
  ids.version_id = version;
  ids.version_a_id = version;
  ids.version_b_id = version;
  // A quarantined event and drift field.
  const event = newId();
  await db
    .insertInto('quarantine_events')
    .values({
      id: event,
      organization_id: org,
      integration_id: integration.id,
      stream: 'stream-a',
      received_at: new Date(),
      raw: '{}',
      error_kind: 'no_mapping',
      error_detail: 'seeded',
    })
    .execute();
  ids.event_id = event;
  const field = newId();
  await db
    .insertInto('drift_fields')
    .values({
      id: field,
      organization_id: org,
      integration_id: integration.id,
      stream: 'stream-a',
      path: 'seeded.field',
      value_type: 'string',
      first_seen_at: new Date(),
      last_seen_at: new Date(),
    })
    .execute();
  ids.field_id = field;
  // A destination and a route to it.
  const destination = newId();
  await db
    .insertInto('destinations')
    .values({
      id: destination,
      organization_id: org,
      name: `destination-${org}`,
      type: 'http',
      config: JSON.stringify({ url: 'https://destination.example.test/' }),
      delivery: '{}',
    })
    .execute();
  ids.destination_id = destination;
  const route = newId();
  await db
    .insertInto('routes')
    .values({
      id: route,
      organization_id: org,
      name: `route-${org}`,
      position: 1,
      condition: null,
      transforms: '[]',
      destination_ids: JSON.stringify([destination]),
    })
    .execute();
  ids.route_id = route;
  // A live capture session.
  const session = newId();
  await db
    .insertInto('capture_sessions')
    .values({
      id: session,
      organization_id: org,
      integration_id: integration.id,
      stream: null,
      status: 'active',
      max_events: 10,
      created_by: null,
      created_at: new Date(),
      expires_at: new Date(Date.now() + 3_600_000),
      stopped_at: null,
    })
    .execute();
  ids.session_id = session;
  // A backfill job.
  const job = newId();
  await db
    .insertInto('backfill_jobs')
    .values({
      id: job,
      organization_id: org,
      integration_id: integration.id,
      streams: '["stream-a"]',
      from_ts: new Date(),
      to_ts: new Date(),
      status: 'queued',
      events: 0,
      created_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
  ids.job_id = job;
  // Enrichment: a table with its version, an HTTP source, a policy with its version.
  const table = newId();
  const tableVersion = newId();
  await db
    .insertInto('enrichment_tables')
    .values({
      id: table,
      organization_id: org,
      name: `table-${org}`,
      key_column: 'k',
      match: 'exact',
      live_version_id: tableVersion,
      created_by: null,
    })
    .execute();
  const stored = await storeTableData({ key_column: 'k', match: 'exact', columns: ['k'], rows: [{ k: 'seeded' }] });
  await db
    .insertInto('enrichment_table_versions')
    .values({
      id: tableVersion,
      table_id: table,
      version: 1,
      kind: 'create',
      row_count: 1,
      columns: JSON.stringify(['k']),
      ...stored,
      created_by: null,
    })
    .execute();
  ids.table_id = table;
  const source = newId();
  await db
    .insertInto('enrichment_sources')
    .values({
      id: source,
      organization_id: org,
      name: `source-${org}`,
      kind: 'http',
      config: JSON.stringify({ url_template: 'https://intel.example.test/{key}', method: 'GET' }),
      credential: null,
      credential_key_id: null,
      blob: null,
      blob_info: null,
      table_id: null,
      status: '{}',
      next_fetch_at: null,
      created_by: null,
    })
    .execute();
  ids.source_id = source;
  const policy = newId();
  const policyDefinition = JSON.stringify({
    name: `policy-${org}`,
    order: 1,
    condition: null,
    key: 'src_endpoint.ip',
    lookup: { source_id: 'builtin-geoip' },
    output: { enrichment: { name: 'geo' } },
    on_miss: 'continue',
  });
  await db
    .insertInto('enrichment_policies')
    .values({ id: policy, organization_id: org, name: `policy-${org}`, definition: policyDefinition, created_by: null })
    .execute();
  await db
    .insertInto('enrichment_policy_versions')
    .values({ id: newId(), policy_id: policy, version: 1, definition: policyDefinition, created_by: null })
    .execute();
  ids.policy_id = policy;
  // An e-mail recipient.
  const recipient = await db
    .insertInto('email_recipients')
    .values({ organization_id: org, address: `recipient-${org}@example.test`, name: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  ids.email_id = String(recipient.id);
  // Search: a saved query, a schedule running it, a finished search and a replay.
  const query = newId();
  await db
    .insertInto('saved_queries')
    .values({
      id: query,
      organization_id: org,
      name: `query-${org}`,
      query: JSON.stringify({ query: 'class_uid = 3002' }),
      created_by: null,
      updated_by: null,
    })
    .execute();
  ids.query_id = query;
  const schedule = newId();
  await db
    .insertInto('schedules')
    .values({
      id: schedule,
      organization_id: org,
      name: `schedule-${org}`,
      query_id: query,
      cron: null,
      interval_seconds: 3600,
      notify: JSON.stringify({ email: false }),
      next_run_at: new Date(Date.now() + 3_600_000),
      created_by: null,
    })
    .execute();
  ids.sched_id = schedule;
  const search = newId();
  await db
    .insertInto('search_runs')
    .values({
      id: search,
      organization_id: org,
      user_id: null,
      actor: 'seed',
      kind: 'interactive',
      query_id: null,
      schedule_id: null,
      slot: null,
      query: JSON.stringify({ organization_id: org }),
      state: 'completed',
      matched: 0,
      returned: 0,
      capped: false,
      result: await encodeRecords('{"rows":[],"aggregations":[]}'),
      csv: await encodeRecords('event_id\r\n'),
    })
    .execute();
  ids.search_id = search;
  const replay = newId();
  await db
    .insertInto('replays')
    .values({
      id: replay,
      organization_id: org,
      destination_id: destination,
      query: JSON.stringify({ organization_id: org }),
      state: 'completed',
      created_by: null,
      actor: 'seed',
    })
    .execute();
  ids.replay_id = replay;
  // Detections: a rule with a live version, and a detection.
  const rule = newId();
  const ruleVersion = newId();
  await db
    .insertInto('detection_rules')
    .values({ id: rule, organization_id: org, name: `rule-${org}`, live_version_id: null, created_by: null })
    .execute();
  await db
    .insertInto('detection_rule_versions')
    .values({
      id: ruleVersion,
      rule_id: rule,
      version: 1,
      definition: JSON.stringify({ condition: { field: 'class_uid', op: 'eq', value: 3002 }, severity_id: 3 }),
      created_by: null,
    })
    .execute();
  await db.updateTable('detection_rules').set({ live_version_id: ruleVersion }).where('id', '=', rule).execute();
  ids.rule_id = rule;
  const detection = newId();
  await db
    .insertInto('detections')
    .values({
      id: detection,
      organization_id: org,
      source: 'rule',
      uid: `seed-${detection}`,
      rule_id: rule,
      rule_version: 1,
      schedule_id: null,
      search_id: null,
      integration_id: integration.id,
      stream: 'stream-a',
      title: 'seeded',
      severity_id: 3,
      status: 'new',
      assignee_id: null,
      mitre: JSON.stringify({ tactics: [], techniques: [] }),
      event_ids: '[]',
      event_count: 1,
      finding: '{}',
      first_seen_at: new Date(),
      last_seen_at: new Date(),
      notified_at: null,
      case_id: null,
    })
    .execute();
  ids.detection_id = detection;
  // An identity provider configuration (SSO off; the issuer refuses connections at once), so
  // that the identity operations (test, sync) reach past "not configured".
  await db
    .insertInto('identity_config')
    .values({
      id: 1,
      enabled: false,
      issuer: 'https://127.0.0.1:9/',
      client_id: 'weir',
      scopes: JSON.stringify(['openid']),
      redirect_uri: 'https://weir.example.test/api/auth/sso/callback',
      username_claim: 'preferred_username',
      rules: '[]',
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  return ids;
}
