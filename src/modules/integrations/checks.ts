// Connection tests and the health history they build. A pull integration (collection on, or
// a managed-provider parent) is tested with a real call to the vendor (connector.test). A
// syslog integration is tested on its listeners (bound, accepting connections, per listener).
// A rabbitmq or nats integration is tested on its broker: a real connection with its stored
// config and secrets that checks the queue, or the JetStream stream and durable consumer.
// A push-only integration has no vendor to call: its check is what can be known from here,
// whether an ingestion token is configured and when the last event arrived. Every result is
// recorded in integration_checks; vendor failures are results (ok: false), never 5xx, and no
// text of a result carries a secret (callVendor redacts the target's secret values).
import type { Actor } from '../../core/actor.js';
import { newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import { offsetEnvelope } from '../../core/paging.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import { callVendor, redact } from '../../connectors/call.js';
import { compileCollectionFilters } from '../../connectors/filters.js';
import type { Connector, StreamSpec } from '../../connectors/sdk.js';
import { setAuditTarget } from '../audit/service.js';
import {
  BROKER_PLATFORMS,
  findIntegration,
  isManagedProvider,
  type BrokerTestResult,
  type ListenerTestResult,
  type OpsDeps,
} from './collection-settings.js';
import type { CheckRow, StateRow } from './ops-store.js';
import type { IntegrationRow } from './store.js';

export type CheckKind = 'vendor' | 'push' | 'listener' | 'broker';

/** What test-connection checks for this integration. */
function checkKind(row: IntegrationRow, connector: Connector | undefined, deps: OpsDeps): CheckKind {
  if (pulls(row, connector)) return 'vendor';
  if (BROKER_PLATFORMS.includes(row.platform) && deps.brokerTest) return 'broker';
  return row.platform === 'syslog' && deps.listenerTest ? 'listener' : 'push';
}

export function checkView(c: CheckRow) {
  return { id: c.id, ok: c.ok, status: c.status, latency_ms: c.latency_ms, detail: c.detail, checked_at: c.checked_at };
}

/** Whether Weir pulls from the vendor for this integration (and so a vendor call is the check). */
export function pulls(row: IntegrationRow, connector: Connector | undefined): connector is Connector {
  if (!connector) return false;
  return (row.config as Record<string, unknown> | null)?.collect === true || isManagedProvider(row, connector);
}

export type StreamStatus = 'healthy' | 'failing' | 'pending' | 'disabled';

/** One stream's collection state as the health, overview and sync-status answers show it. */
export function streamState(spec: StreamSpec, state: StateRow | undefined, enabled: boolean, now: Date) {
  const watermark = state?.watermark_at ?? null;
  const status: StreamStatus = !enabled
    ? 'disabled'
    : !state?.last_run_at
      ? 'pending'
      : state.consecutive_failures > 0
        ? 'failing'
        : 'healthy';
  return {
    stream: spec.name,
    cursor_kind: spec.cursor,
    enabled,
    status,
    last_run_at: state?.last_run_at ?? null,
    last_success_at: state?.last_success_at ?? null,
    watermark_at: watermark,
    // Lag is judged from the watermark (date cursors); opaque cursors have none.
    lag_seconds: watermark ? Math.max(0, Math.round((now.getTime() - new Date(watermark).getTime()) / 1000)) : null,
    consecutive_failures: state?.consecutive_failures ?? 0,
    last_run_capped: state?.last_run_capped ?? false,
    last_error: state?.last_error ?? null,
    last_error_at: state?.last_error_at ?? null,
    next_run_at: state?.next_run_at ?? null,
    gap: state?.gap_from && state.gap_to ? { from: state.gap_from, to: state.gap_to } : null,
  };
}

/** Every stream of the integration's connector with its state; streams switched off by collect or the filters read `disabled`. */
export function streamStates(row: IntegrationRow, connector: Connector | undefined, states: StateRow[], now: Date) {
  if (!connector) return [];
  const collecting = pulls(row, connector) && !isManagedProvider(row, connector) && row.is_active;
  let enabled: (s: string) => boolean = () => true;
  try {
    enabled = compileCollectionFilters(row.collection_filters).streamEnabled;
  } catch {
    // A stored filter that no longer validates fails its cycles visibly (last_error); here the stream still shows.
  }
  const byStream = new Map(states.map((s) => [s.stream, s]));
  return connector.streams.map((spec) =>
    streamState(spec, byStream.get(spec.name), collecting && enabled(spec.name), now),
  );
}

export function createCheckService(deps: OpsDeps) {
  const { ops, clock, connectorFor, integrations, runtime } = deps;

  async function pushCheck(
    row: IntegrationRow,
  ): Promise<{ ok: boolean; detail: string; status: null; latencyMs: number }> {
    const started = performance.now();
    const [token, lastEvent] = await Promise.all([ops.ingestionTokenConfigured(row.id), ops.lastEventAt(row.id)]);
    const parts = [
      token
        ? 'ingestion token configured'
        : `no ingestion token: create one with POST /api/ingest/integrations/${row.id}/token`,
      lastEvent ? `last event received at ${lastEvent.toISOString()}` : 'no event received yet',
    ];
    if (!row.is_active) parts.push('the integration is inactive: pushed events are refused');
    const ok = token && row.is_active;
    return {
      ok,
      detail: `push-only integration (nothing to call): ${parts.join('; ')}`,
      status: null,
      latencyMs: Math.round(performance.now() - started),
    };
  }

  return {
    async test(actor: Actor, id: number) {
      const row = await findIntegration(deps, scopeOf(actor), id);
      const connector = connectorFor(row.platform);
      let result: {
        ok: boolean;
        detail: string;
        status: number | null;
        latencyMs: number;
        kind: CheckKind;
        errorKind: string | null;
      };
      let listeners: ListenerTestResult['listeners'] | undefined;
      let broker: BrokerTestResult['broker'] | undefined;
      const kind = checkKind(row, connector, deps);
      // A check Weir runs itself (no vendor call): its outcome and how long it took.
      const ownCheck = async <T extends { ok: boolean; detail: string }>(
        run: () => Promise<T>,
        errorKind: (t: T) => string | null,
      ): Promise<{ t: T; outcome: typeof result }> => {
        const started = performance.now();
        const t = await run();
        const latencyMs = Math.round(performance.now() - started);
        return { t, outcome: { ok: t.ok, detail: t.detail, status: null, latencyMs, kind, errorKind: errorKind(t) } };
      };
      if (kind === 'broker' && deps.brokerTest) {
        const test = deps.brokerTest;
        const own = await ownCheck(
          () => test(row),
          (t) => t.errorKind,
        );
        broker = own.t.broker;
        result = own.outcome;
      } else if (kind === 'listener' && deps.listenerTest) {
        const test = deps.listenerTest;
        const own = await ownCheck(
          () => test(row),
          (t) => (t.ok ? null : 'listener'),
        );
        listeners = own.t.listeners;
        result = own.outcome;
      } else if (pulls(row, connector)) {
        const target = await integrations.collectTarget(row);
        const outcome = await callVendor(runtime, { key: row.id, ...target }, (ctx) => connector.test(ctx));
        result = outcome.ok
          ? {
              ok: true,
              detail: redact(String(outcome.value), target.secrets),
              status: null,
              latencyMs: outcome.latencyMs,
              kind: 'vendor',
              errorKind: null,
            }
          : {
              ok: false,
              detail: `${outcome.error.kind}: ${outcome.error.message}`,
              status: outcome.error.status,
              latencyMs: outcome.latencyMs,
              kind: 'vendor',
              errorKind: outcome.error.kind,
            };
      } else {
        result = { ...(await pushCheck(row)), kind: 'push', errorKind: null };
      }
      const checkedAt = clock.now();
      const check = {
        id: newId(),
        organization_id: row.organization_id,
        integration_id: row.id,
        ok: result.ok,
        status: result.status,
        latency_ms: result.latencyMs,
        detail: result.detail.slice(0, 2_000),
        checked_by: actor.kind === 'user' ? actor.id : null,
        checked_at: checkedAt,
      };
      await deps.transaction(() => ops.insertCheck(check));
      setAuditTarget({
        organizationId: row.organization_id,
        details: { ok: result.ok, kind: result.kind, ...(result.errorKind ? { error_kind: result.errorKind } : {}) },
      });
      return {
        id: check.id,
        ok: result.ok,
        kind: result.kind,
        detail: check.detail,
        status: result.status,
        error_kind: result.errorKind,
        latency_ms: result.latencyMs,
        checked_at: checkedAt,
        ...(listeners ? { listeners } : {}),
        ...(broker ? { broker } : {}),
      };
    },

    async health(scope: Scope, id: number, page: OffsetPage) {
      const row = await findIntegration(deps, scope, id);
      const connector = connectorFor(row.platform);
      const [checks, states] = await Promise.all([ops.checks(row.id, page), ops.states(row.id)]);
      const last = page.offset === 0 ? checks.items[0] : await ops.lastCheck(row.id);
      return {
        integration_id: row.id,
        check_kind: checkKind(row, connector, deps),
        last_check: last ? checkView(last) : null,
        checks: offsetEnvelope(checks.items.map(checkView), checks.total, page),
        streams: streamStates(row, connector, states, clock.now()),
      };
    },
  };
}

export type CheckService = ReturnType<typeof createCheckService>;
