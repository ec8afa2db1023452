// The integration operations around collection: filters, auto-approve policy, managed-
// provider tenants, connection tests, health, overview and sync-status.
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT } from '../../platform/http/schemas.js';
import type { CheckService } from './checks.js';
import type { createCollectionSettings } from './collection-settings.js';
import {
  Filters,
  FiltersBody,
  Health,
  HealthQuery,
  Overview,
  PartnerTenants,
  Policy,
  PolicyBody,
  SelectBody,
  SelectResult,
  SyncResult,
  SyncStatus,
  TenantPage,
  TenantQuery,
  TestResult,
} from './ops-schema.js';
import type { OverviewService } from './overview.js';
import { IntegrationParams } from './schema.js';
import type { TenantService } from './tenants.js';

export interface OpsServices {
  settings: ReturnType<typeof createCollectionSettings>;
  tenants: TenantService;
  checks: CheckService;
  overview: OverviewService;
}

const BASE = '/api/integrations/:integration_id';

export function integrationOpsRoutes(app: Api, s: OpsServices): void {
  route(app, {
    method: 'GET',
    url: `${BASE}/collection-filters`,
    operationId: 'integrations.get_collection_filters',
    summary: 'What the integration collects: streams and exclude conditions applied at the source',
    access: { requires: 'integration.read' },
    schema: { params: IntegrationParams, response: { 200: Filters } },
    handler: async (req) => s.settings.filters(scopeOf(req.actor!), req.params.integration_id),
  });

  route(app, {
    method: 'PUT',
    url: `${BASE}/collection-filters`,
    operationId: 'integrations.set_collection_filters',
    summary: 'Replace the collection filters (validated: 422 with the location of every problem)',
    description:
      "Only for platforms with a vendor connector (422 integration.not_collectable otherwise). Streams must be the platform's. Takes effect at the next collection cycle.",
    access: { requires: 'integration.write' },
    schema: { params: IntegrationParams, body: FiltersBody, response: { 200: Filters } },
    handler: async (req) => s.settings.setFilters(scopeOf(req.actor!), req.params.integration_id, req.body),
  });

  route(app, {
    method: 'PATCH',
    url: `${BASE}/auto-approve-policy`,
    operationId: 'integrations.set_auto_approve_policy',
    summary: 'How sync-tenants selects newly discovered tenants of a managed-provider parent',
    description:
      'Only for managed-provider parents (422 integration.not_managed_provider otherwise). Applied to tenants discovered for the first time.',
    access: { requires: 'integration.write' },
    schema: { params: IntegrationParams, body: PolicyBody, response: { 200: Policy } },
    handler: async (req) => s.settings.setPolicy(scopeOf(req.actor!), req.params.integration_id, req.body),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/partner-tenants`,
    operationId: 'integrations.partner_tenants',
    summary: 'Ask the vendor now which customer tenants the partner account manages (stores nothing)',
    description:
      'A vendor failure answers 200 with ok false and error (never 5xx). 422 integration.not_managed_provider for other integrations.',
    access: { requires: 'integration.read' },
    schema: { params: IntegrationParams, response: { 200: PartnerTenants } },
    handler: async (req) => s.tenants.partnerTenants(scopeOf(req.actor!), req.params.integration_id),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/sync-tenants`,
    operationId: 'integrations.sync_tenants',
    summary: "Discover the partner's tenants, apply the auto-approve policy, materialize selected tenants (Enterprise)",
    description:
      'Without the Enterprise edition: 200 with a warning; the discovery and selections are stored, no child integration is created. ' +
      'A vendor failure answers 200 with ok false and error, and is recorded as the last tenant sync.',
    access: { requires: 'integration.write' },
    // A vendor call: no transaction is held open while it runs.
    audit: 'separate',
    schema: { params: IntegrationParams, response: { 200: SyncResult } },
    handler: async (req) => s.tenants.sync(req.actor!, req.params.integration_id),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/discovered-tenants`,
    operationId: 'integrations.discovered_tenants',
    summary: 'Tenants stored by sync-tenants, by name; page and size, with total in the body',
    access: { requires: 'authenticated' },
    schema: { params: IntegrationParams, querystring: TenantQuery, response: { 200: TenantPage } },
    handler: async (req) => {
      const { page = 1, size = DEFAULT_LIMIT, selected, present } = req.query;
      return s.tenants.list(scopeOf(req.actor!), req.params.integration_id, { selected, present }, { page, size });
    },
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/tenants/select`,
    operationId: 'integrations.select_tenants',
    summary: 'Select (or deselect) discovered tenants; Enterprise materializes them as child integrations',
    description:
      'Ids never discovered are listed in errors (integration.unknown_tenant), the others are acted on. Without Enterprise the choice is stored and nothing is materialized (warning).',
    access: { requires: 'integration.write' },
    schema: { params: IntegrationParams, body: SelectBody, response: { 200: SelectResult } },
    handler: async (req) =>
      s.tenants.select(
        scopeOf(req.actor!),
        req.params.integration_id,
        req.body.external_ids,
        req.body.selected ?? true,
      ),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/test-connection`,
    operationId: 'integrations.test_connection',
    summary: 'Open a real connection to the vendor with the stored credentials and record the result',
    description:
      'Answers 200 whatever the outcome: ok false with error_kind and detail when the vendor refuses or is unreachable (never 5xx). ' +
      'Syslog integrations are checked on their listeners (state, and a TCP connection where possible). ' +
      'RabbitMQ and NATS integrations are checked by connecting to their broker with the stored config and secrets (the queue, or the JetStream stream and durable consumer). ' +
      'Push-only integrations (no connector, or collection off) are checked for an ingestion token and received events. Limited to 20 s.',
    access: { requires: 'integration.write' },
    audit: 'separate',
    schema: { params: IntegrationParams, response: { 200: TestResult } },
    handler: async (req) => s.checks.test(req.actor!, req.params.integration_id),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/health`,
    operationId: 'integrations.health',
    summary: 'Connection-test history (newest first) and the current collection state of each stream',
    access: { requires: 'authenticated' },
    schema: { params: IntegrationParams, querystring: HealthQuery, response: { 200: Health } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0 } = req.query;
      return s.checks.health(scopeOf(req.actor!), req.params.integration_id, { limit, offset });
    },
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/overview`,
    operationId: 'integrations.overview',
    summary:
      'The integration (secrets masked), its streams with state and traffic, quarantine, drift, token, children, backfills',
    access: { requires: 'authenticated' },
    schema: { params: IntegrationParams, response: { 200: Overview } },
    handler: async (req) => s.overview.overview(scopeOf(req.actor!), req.params.integration_id),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/sync-status`,
    operationId: 'integrations.sync_status',
    summary:
      "Per stream: last success, watermark and lag, last error, running and queued tasks; a parent's last tenant sync",
    access: { requires: 'authenticated' },
    schema: { params: IntegrationParams, response: { 200: SyncStatus } },
    handler: async (req) => s.overview.syncStatus(scopeOf(req.actor!), req.params.integration_id),
  });
}
