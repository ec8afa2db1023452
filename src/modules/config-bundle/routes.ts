import { ErrorBody } from '../../platform/http/schemas.js';
import { route, type Api } from '../../platform/http/routes.js';
import { publishSchema } from '../../platform/http/openapi.js';
import {
  BUNDLE_SCHEMA_ID,
  bundleJsonSchema,
  ConfigBundle,
  ExportQuery,
  ImportBody,
  ImportResult,
  MAX_BODY_BYTES,
} from './schema.js';
import type { BundleService } from './service.js';

export function configBundleRoutes(app: Api, service: BundleService): void {
  // A named component of the OpenAPI document (#/components/schemas/ConfigBundle).
  publishSchema(BUNDLE_SCHEMA_ID, bundleJsonSchema());

  route(app, {
    method: 'GET',
    url: '/api/collectors/config/export',
    operationId: 'config_bundle.export',
    summary: "One organization's configuration as one versioned JSON document (secrets as markers)",
    description:
      'Integrations, mappings (with their versions), destinations, routes, enrichment tables (with their rows), sources and policies, ' +
      'detection rules, saved queries and schedules, ' +
      'and the collector settings, keyed by name; references by name. Secrets are never exported: each is ' +
      '{"$secret": "<kind>:<name>:<field>"}, which the import\'s `secrets` fills. docs/config-bundle.md',
    access: { requires: 'user.manage' },
    audit: 'transaction',
    schema: { querystring: ExportQuery, response: { 200: ConfigBundle } },
    handler: async (req) => service.export(req.actor!, req.query.organization_id),
  });

  route(app, {
    method: 'POST',
    url: '/api/collectors/config/import',
    operationId: 'config_bundle.import',
    summary: 'Diff (dry_run) or apply a configuration bundle to one organization, all or nothing',
    description:
      'Each object of the document is create, update, unchanged or conflict (a name with another type or platform, a ' +
      'reference to nothing, a secret still needed). An apply with a conflict is a 409 config_bundle.conflict whose ' +
      'error.details hold the same diff, and changes nothing. Versioned objects get a new version when they change. ' +
      'An unknown or newer format version is a 422 config_bundle.unsupported_version.',
    access: { requires: 'user.manage' },
    bodyLimit: MAX_BODY_BYTES,
    schema: { querystring: ExportQuery, body: ImportBody, response: { 200: ImportResult, 409: ErrorBody } },
    handler: async (req) =>
      service.import(req.actor!, req.query.organization_id, {
        ...req.body,
        document: req.body.document as Record<string, unknown>,
      }),
  });
}
