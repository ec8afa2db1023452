// Providers: the vendor platforms Weir can collect from, what their APIs let collection and
// backfill do, and a connection test of a config before any integration is saved. The test
// validates the config against the platform schema, makes the connector's real test call,
// stores nothing and never echoes the config (secret values are stripped from error texts).
import { randomUUID } from 'node:crypto';
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { callVendor, redact } from '../../connectors/call.js';
import type { ConnectorRuntime } from '../../connectors/runtime.js';
import { nameOf, pushdownFields } from '../../connectors/query.js';
import type { Connector } from '../../connectors/sdk.js';
import { builtinMapping } from '../../pipeline/normalize/builtin/index.js';
import { compileField } from '../../pipeline/route/paths.js';
import { setAuditTarget } from '../audit/service.js';
import type { Platform } from '../integrations/platforms.js';

/** The spec's backfill ceiling: no job starts more than 90 days back. */
export const BACKFILL_MAX_DAYS = 90;
/** Response headers the vendor HTTP client reads to wait out a quota (connectors/http.ts). */
export const RATE_LIMIT_HEADERS = [
  'Retry-After',
  'X-Rate-Limit-Reset',
  'X-RateLimit-Reset',
  'X-RateLimit-RetryAfter',
  'X-Rate-Limit-Remaining',
  'X-RateLimit-Remaining',
];

export interface ProviderDeps {
  connectors: () => Connector[];
  platformOf: (name: string) => Platform | undefined;
  runtime: ConnectorRuntime;
  clock: Clock;
  /** Longest Retry-After waited inside a collection cycle (WEIR_COLLECT_MAX_RETRY_WAIT_MS). */
  maxRetryWaitMs: number;
}

function getPaths(node: unknown, out: Set<string>, depth = 0): void {
  if (depth > 40 || node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const x of node) getPaths(x, out, depth + 1);
    return;
  }
  for (const [k, v] of Object.entries(node)) {
    if (k === 'from' || k === 'field')
      for (const p of Array.isArray(v) ? v : [v]) if (typeof p === 'string') out.add(p);
    getPaths(v, out, depth + 1);
  }
}

/**
 * The vendor fields a collection filter can name with confidence: those the built-in
 * mapping of the stream reads (any raw path works; these are the documented ones). Paths the
 * condition language cannot address (negative indexes) are left out.
 */
export function filterableFields(platform: string, stream: string): string[] {
  const mapping = builtinMapping(platform, stream);
  if (!mapping) return [];
  const paths = new Set<string>();
  getPaths(mapping.document, paths);
  return [...paths]
    .filter((p) => {
      if (p.startsWith('envelope')) return false;
      try {
        compileField(p);
        return true;
      } catch {
        return false;
      }
    })
    .sort();
}

/**
 * What a live query on the stream can push down to the vendor with the built-in mapping: the
 * same function the live executor applies to the integration's live mapping
 * (connectors/query.ts), so this answer and the translation agree.
 */
export function liveQueryCapability(connector: Connector, stream: string) {
  const fields = connector.query?.streams[stream];
  if (!connector.query || !fields) return { supported: false, parameter: null, or: false, fields: [] };
  const pushed = pushdownFields(
    fields,
    builtinMapping(connector.platform, stream)?.document as Record<string, unknown> | undefined,
    connector.query.absent,
  );
  return {
    supported: true,
    parameter: connector.query.parameter,
    or: connector.query.or,
    fields: [...pushed.entries()]
      .map(([field, v]) => ({ field, vendor_field: nameOf(v), ops: [...v.ops] }))
      .sort((a, b) => a.field.localeCompare(b.field)),
  };
}

export function createProviderService(deps: ProviderDeps) {
  const { runtime, clock } = deps;
  /** Connectors whose platform is registered (every one in a wired container). */
  const available = () =>
    deps
      .connectors()
      .filter((c) => deps.platformOf(c.platform))
      .sort((a, b) => a.platform.localeCompare(b.platform));

  return {
    platforms() {
      return available().map((c) => ({
        platform: c.platform,
        display_name: c.display_name,
        vendor: c.vendor,
        description: c.description,
        auth: c.auth,
        streams: c.streams.map((s) => ({
          name: s.name,
          display_name: s.display_name,
          description: s.description,
          cursor_kind: s.cursor,
        })),
        config_schema: c.config_schema as Record<string, unknown>,
        secret_fields: deps.platformOf(c.platform)?.secretFields ?? [],
        tenant_discovery: Boolean(c.tenants),
      }));
    },

    capabilities() {
      const rateLimit = {
        handling:
          'A 429 (or a spent quota) is waited out inside the call when the vendor asks for at most max_wait_in_call_seconds; ' +
          "a longer wait ends the cycle and moves the stream's next run to the vendor's time. 5xx and network failures are retried with backoff.",
        max_wait_in_call_seconds: Math.round(deps.maxRetryWaitMs / 1000),
        headers: RATE_LIMIT_HEADERS,
      };
      return available().map((c) => ({
        platform: c.platform,
        tenant_discovery: Boolean(c.tenants),
        rate_limit: rateLimit,
        streams: c.streams.map((s) => ({
          stream: s.name,
          cursor_kind: s.cursor,
          page_size: s.pageSize,
          interval_seconds: Math.round(s.intervalMs / 1000),
          default_window_seconds: Math.round(s.defaultWindowMs / 1000),
          max_window_seconds: Math.round(s.maxWindowMs / 1000),
          settle_seconds: Math.round(s.settleMs / 1000),
          retention_days: s.retentionDays,
          backfill: {
            supported: true,
            max_lookback_days: Math.min(BACKFILL_MAX_DAYS, s.retentionDays),
            chunk_seconds: Math.round(s.maxWindowMs / 1000),
          },
          filterable_fields: filterableFields(c.platform, s.name),
          live_query: liveQueryCapability(c, s.name),
        })),
      }));
    },

    async test(actor: Actor, platformName: string, config: Record<string, unknown>) {
      const connector = deps.connectors().find((c) => c.platform === platformName);
      const platform = deps.platformOf(platformName);
      if (!connector || !platform) throw errors.notFound('Platform', { platform: platformName });
      const issues = platform.validate(config);
      if (issues.length > 0) {
        throw new AppError('integration.invalid_config', {
          detail: `${issues[0]!.location} ${issues[0]!.message}`,
          details: { platform: platformName, errors: issues },
        });
      }
      const secrets = platform.secretFields
        .map((f) => f.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], config))
        .filter((v): v is string => typeof v === 'string');
      // A fresh token-cache scope: nothing from this test is reused by an integration.
      const outcome = await callVendor(
        runtime,
        { key: `provider-test:${randomUUID()}`, config, secrets, tenantId: null },
        (ctx) => connector.test(ctx),
      );
      setAuditTarget({
        type: 'provider',
        id: platformName,
        details: { ok: outcome.ok, ...(outcome.ok ? {} : { error_kind: outcome.error.kind }), by: actor.kind },
      });
      return {
        ok: outcome.ok,
        platform: platformName,
        detail: outcome.ok ? redact(String(outcome.value), secrets) : `${outcome.error.kind}: ${outcome.error.message}`,
        error_kind: outcome.ok ? null : outcome.error.kind,
        status: outcome.ok ? null : outcome.error.status,
        latency_ms: outcome.latencyMs,
        checked_at: clock.now(),
      };
    },
  };
}

export type ProviderService = ReturnType<typeof createProviderService>;
