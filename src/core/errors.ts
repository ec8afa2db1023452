// One catalog of stable error codes. Services throw AppError; the HTTP layer maps it to
// the body {detail, error: {code, message, details}} in exactly one place
// (platform/http/errors.ts). Codes never change once published; messages may.

export interface CatalogEntry {
  status: number;
  message: string;
}

export const ERROR_CATALOG = {
  'request.malformed_json': { status: 400, message: 'The request body is not valid JSON' },
  'request.json_too_deep': { status: 400, message: 'The JSON body is nested too deeply' },
  'request.invalid': { status: 400, message: 'The request is not valid' },
  'request.body_too_large': { status: 413, message: 'The request body is too large' },
  'request.too_many_events': { status: 413, message: 'The request holds more events than one request may' },
  'request.unsupported_media_type': { status: 415, message: 'Unsupported content type' },
  'request.validation_failed': { status: 422, message: 'The request does not match the schema' },
  'request.unknown_parameter': { status: 422, message: 'Unknown query parameter' },
  'request.invalid_date': { status: 422, message: 'The date is not valid' },
  'request.conflicting_parameters': { status: 422, message: 'Two parameters name the same value differently' },
  'request.invalid_text': { status: 422, message: 'A string holds a character that cannot be stored' },
  'request.bad_url': { status: 400, message: 'The URL is not valid' },
  'request.uri_too_long': { status: 414, message: 'A path parameter is too long' },
  'request.header_too_large': { status: 431, message: 'The request headers are too large' },
  'request.timeout': { status: 408, message: 'The request took too long to arrive' },
  'request.malformed_http': { status: 400, message: 'The request is not valid HTTP' },
  'auth.unauthenticated': { status: 401, message: 'Not authenticated' },
  'auth.invalid_token': { status: 401, message: 'Invalid or expired API token' },
  'auth.user_inactive': { status: 401, message: 'User is inactive' },
  'auth.organization_inactive': { status: 401, message: 'Organization is inactive' },
  'auth.session_expired': { status: 401, message: 'Session expired' },
  'auth.invalid_credentials': { status: 401, message: 'Invalid username or password' },
  'auth.already_bootstrapped': { status: 409, message: 'The service already has users' },
  'auth.username_taken': { status: 409, message: 'The username is already taken' },
  'auth.wrong_current_password': { status: 400, message: 'The current password is not correct' },
  'auth.users_only': { status: 400, message: 'This operation applies to users, not service accounts' },
  'auth.last_platform_admin': { status: 409, message: 'The last active platform administrator cannot be removed' },
  'auth.password_login_disabled': { status: 403, message: 'Password login is turned off for single sign-on users' },
  'sso.not_configured': { status: 404, message: 'Single sign-on is not configured' },
  'sso.login_failed': { status: 401, message: 'Single sign-on failed' },
  'sso.not_admitted': { status: 403, message: "The identity provider's claims match no rule" },
  'identity.invalid_config': { status: 422, message: 'The identity configuration is not valid' },
  'identity.not_configured': { status: 409, message: 'No identity provider is configured' },
  'identity.sync_running': { status: 409, message: 'A sync is already running' },
  'api_token.service_account_id_not_allowed': { status: 400, message: 'service_account_id is not accepted here' },
  'api_token.name_taken': { status: 400, message: 'A token with this name already exists' },
  'api_token.wrong_endpoint': { status: 400, message: 'Service accounts create tokens elsewhere' },
  'license.invalid': { status: 400, message: 'The license token is not valid' },
  'edition.enterprise_required': { status: 403, message: 'This feature needs the Enterprise edition' },
  'edition.org_limit_reached': { status: 403, message: "The edition's ceiling on organizations is reached" },
  'auth.forbidden': { status: 403, message: 'Permission denied' },
  'resource.not_found': { status: 404, message: 'Not found' },
  'route.not_found': { status: 404, message: 'Not found' },
  'route.method_not_allowed': { status: 405, message: 'Method not allowed' },
  'resource.conflict': { status: 409, message: 'Conflict' },
  'config_bundle.conflict': {
    status: 409,
    message: 'The configuration bundle cannot be applied: see the items in conflict',
  },
  'config_bundle.invalid_document': { status: 422, message: 'The configuration bundle is not valid' },
  'config_bundle.unsupported_version': {
    status: 422,
    message: "The configuration bundle's format or version is not one this Weir reads",
  },
  'rate_limit.exceeded': { status: 429, message: 'Rate limit exceeded' },
  'integration.unknown_platform': { status: 422, message: 'Unknown integration platform' },
  'integration.invalid_config': { status: 422, message: 'The configuration does not match the platform schema' },
  'integration.invalid_parent': {
    status: 422,
    message: 'parent_id must name a top-level integration of the same organization',
  },
  'integration.name_taken': {
    status: 409,
    message: 'An integration with this name already exists in the organization',
  },
  'integration.has_active_children': { status: 409, message: 'The integration has active child integrations' },
  'ingest.invalid_token': { status: 401, message: 'Invalid or missing ingestion token' },
  'ingest.integration_inactive': { status: 403, message: 'The integration is not active' },
  'ingest.no_events_accepted': { status: 400, message: 'No event in the body was accepted' },
  'ingest.unsupported_encoding': { status: 415, message: 'Unsupported Content-Encoding' },
  'ingest.undeclared_gzip': { status: 400, message: 'The body is gzip data but Content-Encoding does not say so' },
  'ingest.token_in_query': { status: 422, message: 'Ingestion tokens are not accepted in the URL' },
  'ingest.saturated': { status: 503, message: 'The pipeline is saturated; retry later' },
  'delivery.backlog_full': {
    status: 503,
    message: "A destination's backlog is over its budget: new events for it are refused; retry later",
  },
  'storage.disk_low': { status: 503, message: 'The disk is nearly full: new events are refused; retry later' },
  'mapping.invalid_document': { status: 422, message: 'The mapping document is not valid' },
  'mapping.tests_failed': { status: 422, message: 'A test case of the mapping document fails' },
  'mapping.builtin_needs_platform_scope': {
    status: 403,
    message: 'Built-in mappings can be changed only with platform scope',
  },
  'mapping.already_live': { status: 409, message: 'This version is already live' },
  'quarantine.already_reprocessed': { status: 409, message: 'The event was already reprocessed' },
  'route.invalid_definition': { status: 422, message: 'The route definition is not valid' },
  'route.name_taken': { status: 409, message: 'A route with this name already exists in the organization' },
  'route.unknown_destination': {
    status: 422,
    message: 'A destination of the route does not exist or is not usable by its organization',
  },
  'route.reorder_incomplete': {
    status: 422,
    message: "Reorder takes the complete list of the organization's route ids, each once",
  },
  'route.already_current': { status: 409, message: 'The route is already at this version' },
  'enrichment.invalid_rule': { status: 422, message: 'The enrichment rule is not valid' },
  'enrichment.invalid_table': { status: 422, message: 'The table data is not valid' },
  'enrichment.invalid_source': { status: 422, message: 'The source configuration is not valid' },
  'enrichment.name_taken': { status: 409, message: 'The name is already used in the organization' },
  'enrichment.in_use': { status: 409, message: 'A policy or feed uses it' },
  'enrichment.already_current': { status: 409, message: 'It is already at this version' },
  'enrichment.builtin_source': { status: 409, message: 'A built-in source cannot be changed or deleted' },
  'enrichment.source_sharing_requires_enterprise': {
    status: 403,
    message: 'Sharing a source across organizations needs the Enterprise edition',
  },
  'destination.unknown_type': { status: 422, message: 'Unknown destination type' },
  'destination.invalid_config': { status: 422, message: 'The configuration does not match the destination type' },
  'destination.invalid_credential': { status: 422, message: 'The credential does not match the destination type' },
  'destination.name_taken': { status: 409, message: 'A destination with this name already exists' },
  'destination.in_use': { status: 409, message: 'Routes still deliver to this destination' },
  'destination.global_needs_platform_scope': {
    status: 403,
    message: 'Global destinations can be changed only with platform scope',
  },
  'destination.invalid_shadow': { status: 422, message: 'The shadow target is not valid' },
  'destination.no_credential': { status: 400, message: 'The destination has no credential' },
  'detection.invalid_rule': { status: 422, message: 'The detection rule is not valid' },
  'detection.already_current': { status: 409, message: 'That version is already live' },
  'detection.invalid_sigma': { status: 422, message: 'The Sigma rule cannot be compiled faithfully' },
  'detection.invalid_change': { status: 422, message: 'The change cannot be made' },
  'search.invalid_query': { status: 422, message: 'The query is not valid' },
  'search.store_unavailable': { status: 503, message: 'The event store cannot be searched now' },
  'search.result_expired': { status: 410, message: 'The result has expired' },
  'search.not_finished': { status: 409, message: 'The search has not finished' },
  'search.query_in_use': { status: 409, message: 'Schedules run this query' },
  'search.invalid_schedule': { status: 422, message: 'The schedule is not valid' },
  'search.live_unsupported': { status: 422, message: 'The integration cannot be queried live' },
  'search.destination_unusable': { status: 422, message: 'The destination cannot receive a replay' },
  'destination.event_store_exists': { status: 409, message: 'The organization already has an event store' },
  'destination.event_store_needs_organization': { status: 422, message: 'An event store belongs to one organization' },
  'destination.tap_needs_platform_scope': { status: 403, message: 'Tapping a global destination needs platform scope' },
  'collection.not_collectable': { status: 422, message: 'The integration does not collect from a vendor API' },
  'collection.unknown_stream': { status: 404, message: 'The platform has no such stream' },
  'backfill.stream_singular': { status: 422, message: 'Backfill takes streams (a list), not stream' },
  'backfill.managed_provider_parent': {
    status: 422,
    message: 'A managed-provider parent cannot be backfilled; backfill its child integrations',
  },
  'backfill.window_too_long': { status: 400, message: 'A backfill window is at most 90 days' },
  'backfill.start_too_old': { status: 400, message: 'A backfill starts at most 90 days in the past' },
  'backfill.invalid_window': { status: 400, message: 'The backfill window is not valid' },
  'backfill.unknown_stream': { status: 422, message: 'The platform has no such stream' },
  'backfill.already_finished': { status: 409, message: 'The backfill job has already finished' },
  'integration.not_managed_provider': { status: 422, message: 'The integration is not a managed-provider parent' },
  'integration.unknown_tenant': { status: 422, message: 'The tenant was not discovered for this integration' },
  'integration.not_collectable': { status: 422, message: 'The platform has no vendor connector' },
  'capture.not_active': { status: 409, message: 'The capture session is not active' },
  'capture.limit_exceeded': { status: 422, message: 'The capture session exceeds the configured limits' },
  'case.unavailable': { status: 502, message: 'The case-management system did not answer usefully' },
  'dependency.unavailable': { status: 503, message: 'A dependency is unavailable' },
  'internal.error': { status: 500, message: 'Internal server error' },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface AppErrorOptions {
  /** Human text for `detail`; defaults to the catalog message. */
  detail?: string;
  details?: Record<string, unknown>;
  /** Extra response headers (Retry-After, Allow, WWW-Authenticate...). */
  headers?: Record<string, string>;
  /** Overrides the catalog status (only for statuses raised by the HTTP framework itself). */
  status?: number;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(options.detail ?? ERROR_CATALOG[code].message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? ERROR_CATALOG[code].status;
    this.details = options.details ?? {};
    this.headers = options.headers ?? {};
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

// Convenience constructors for the errors services throw most.
export const errors = {
  notFound: (what = 'Resource', details?: Record<string, unknown>) =>
    new AppError('resource.not_found', { detail: `${what} not found`, details }),
  conflict: (detail: string, details?: Record<string, unknown>) =>
    new AppError('resource.conflict', { detail, details }),
  invalid: (detail: string, details?: Record<string, unknown>) => new AppError('request.invalid', { detail, details }),
  validation: (detail: string, details?: Record<string, unknown>) =>
    new AppError('request.validation_failed', { detail, details }),
  forbidden: (detail = 'Permission denied', details?: Record<string, unknown>) =>
    new AppError('auth.forbidden', { detail, details }),
  unavailable: (dependency: string) =>
    new AppError('dependency.unavailable', {
      detail: `Dependency unavailable: ${dependency}`,
      details: { dependency },
    }),
};
