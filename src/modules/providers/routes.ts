import { route, type Api } from '../../platform/http/routes.js';
import { Capabilities, ProviderParams, ProviderPlatformList, ProviderTestBody, ProviderTestResult } from './schema.js';
import type { ProviderService } from './service.js';

export function providerRoutes(app: Api, service: ProviderService): void {
  route(app, {
    method: 'GET',
    url: '/api/providers/platforms',
    operationId: 'providers.platforms',
    summary: 'Platforms Weir collects from: auth kind, streams, config schema, tenant discovery',
    access: { requires: 'authenticated' },
    schema: { response: { 200: ProviderPlatformList } },
    handler: async () => service.platforms(),
  });

  route(app, {
    method: 'GET',
    url: '/api/providers/query-capabilities',
    operationId: 'providers.query_capabilities',
    summary:
      'Per platform and stream: cursor kind, backfill look-back, page size, rate-limit behaviour, filterable fields',
    access: { requires: 'authenticated' },
    schema: { response: { 200: Capabilities } },
    handler: async () => service.capabilities(),
  });

  route(app, {
    method: 'POST',
    url: '/api/providers/:platform/test-connection',
    operationId: 'providers.test_connection',
    summary: 'Test a config against the vendor before saving an integration; nothing is stored',
    description:
      'The config is validated against the platform schema (422 integration.invalid_config), then the connector makes its real test call. ' +
      'Answers 200 whatever the vendor says: ok false with error_kind when it refuses or is unreachable (never 5xx). 404 for a platform without a connector.',
    access: { requires: 'authenticated' },
    // A vendor call: no transaction is held open while it runs.
    audit: 'separate',
    schema: { params: ProviderParams, body: ProviderTestBody, response: { 200: ProviderTestResult } },
    handler: async (req) => service.test(req.actor!, req.params.platform, req.body.config),
  });
}
