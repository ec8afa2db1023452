// The integration page in one answer (overview) and the collection progress per stream
// (sync-status). Read-only, scoped like every read: an integration outside the caller's
// scope is not found. Traffic counters are kept per UTC day (stream_counters), so "last 24
// h" and "last 7 d" count the UTC days that overlap the period.
import type { Scope } from '../../core/scope.js';
import { DAY_MS } from '../../connectors/sdk.js';
import { checkView, pulls, streamStates } from './checks.js';
import { findIntegration, isManagedProvider, policyOf, type OpsDeps } from './collection-settings.js';
import type { Traffic } from './ops-store.js';

const day = (d: Date) => d.toISOString().slice(0, 10);

function total(map: Map<string, Traffic>): Traffic {
  let events = 0;
  let bytes = 0;
  for (const t of map.values()) {
    events += t.events;
    bytes += t.bytes;
  }
  return { events, bytes };
}

export function createOverviewService(deps: OpsDeps) {
  const { ops, tenants, clock, connectorFor, integrations } = deps;

  return {
    async overview(scope: Scope, id: number) {
      const row = await findIntegration(deps, scope, id);
      const connector = connectorFor(row.platform);
      const now = clock.now();
      const [
        integration,
        states,
        day1,
        day7,
        quarantined,
        drift,
        token,
        lastEvent,
        children,
        backfills,
        lastCheck,
        lastSync,
      ] = await Promise.all([
        integrations.get(scope, id),
        ops.states(row.id),
        ops.traffic(row.id, day(new Date(now.getTime() - DAY_MS))),
        ops.traffic(row.id, day(new Date(now.getTime() - 7 * DAY_MS))),
        ops.quarantined(row.id),
        ops.newDriftFields(row.id),
        ops.ingestionTokenConfigured(row.id),
        ops.lastEventAt(row.id),
        ops.children(row.id),
        ops.backfillsActive(row.id),
        ops.lastCheck(row.id),
        tenants.lastSync(row.id),
      ]);
      const streams = streamStates(row, connector, states, now).map((s) => ({
        ...s,
        events_24h: day1.get(s.stream)?.events ?? 0,
        bytes_24h: day1.get(s.stream)?.bytes ?? 0,
        events_7d: day7.get(s.stream)?.events ?? 0,
        bytes_7d: day7.get(s.stream)?.bytes ?? 0,
      }));
      const managed = isManagedProvider(row, connector);
      return {
        integration,
        collection: {
          mode: managed ? 'managed_provider' : pulls(row, connector) ? 'pull' : 'push',
          connector: connector
            ? { platform: connector.platform, display_name: connector.display_name, auth: connector.auth }
            : null,
          streams,
        },
        traffic: {
          last_24h: total(day1),
          last_7d: total(day7),
          last_event_at: lastEvent,
          by_stream: Object.fromEntries(
            [...day7.keys()].map((s) => [
              s,
              { last_24h: day1.get(s) ?? { events: 0, bytes: 0 }, last_7d: day7.get(s)! },
            ]),
          ),
        },
        quarantine: { count: quarantined },
        drift: { new_fields: drift },
        ingestion_token_configured: token,
        children,
        backfill: backfills,
        last_check: lastCheck ? checkView(lastCheck) : null,
        tenants: managed ? { auto_approve: policyOf(row), last_sync: lastSync ?? null } : null,
      };
    },

    async syncStatus(scope: Scope, id: number) {
      const row = await findIntegration(deps, scope, id);
      const connector = connectorFor(row.platform);
      const [states, runs, lastSync] = await Promise.all([
        ops.states(row.id),
        ops.activeRuns(row.id),
        tenants.lastSync(row.id),
      ]);
      const now = clock.now();
      const runsOf = (stream: string, status: string) =>
        runs.find((r) => r.stream === stream && r.status === status)?.n ?? 0;
      const managed = isManagedProvider(row, connector);
      return {
        integration_id: row.id,
        mode: managed ? 'managed_provider' : pulls(row, connector) ? 'pull' : 'push',
        checked_at: now,
        streams: streamStates(row, connector, states, now).map((s) => ({
          stream: s.stream,
          cursor_kind: s.cursor_kind,
          enabled: s.enabled,
          status: s.status,
          last_success_at: s.last_success_at,
          watermark_at: s.watermark_at,
          lag_seconds: s.lag_seconds,
          last_error: s.last_error,
          last_error_at: s.last_error_at,
          consecutive_failures: s.consecutive_failures,
          last_run_capped: s.last_run_capped,
          next_run_at: s.next_run_at,
          running: runsOf(s.stream, 'running') > 0,
          queued: runsOf(s.stream, 'queued'),
        })),
        tenant_sync:
          managed && lastSync
            ? {
                status: lastSync.status,
                discovered: lastSync.discovered,
                materialized: lastSync.materialized,
                error: lastSync.error,
                warning: lastSync.warning,
                synced_at: lastSync.synced_at,
              }
            : null,
      };
    },
  };
}

export type OverviewService = ReturnType<typeof createOverviewService>;
