// An integration's push ingestion as the status endpoint shows it: token state, the last
// days' counters per stream, and the listeners or consumers that feed it (syslog, buses).
import type { IngestServiceDeps } from './service.js';

export const INGEST_URL = '/api/ingest/{stream}';
export const STATS_DAYS = 7;

function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

export async function ingestStatus(
  deps: Pick<IngestServiceDeps, 'store' | 'tokens' | 'syslogListeners' | 'busConsumers'>,
  integration: { id: number; organization_id: number; platform: string; is_active: boolean },
  now: Date,
) {
  const integrationId = integration.id;
  const since = utcDay(new Date(now.getTime() - (STATS_DAYS - 1) * 86_400_000));
  const bus = integration.platform === 'rabbitmq' || integration.platform === 'nats';
  const [row, streams, listeners, consumers] = await Promise.all([
    deps.store.tokenOf(integrationId),
    deps.store.streamStats(integrationId, since),
    integration.platform === 'syslog' && deps.syslogListeners ? deps.syslogListeners(integrationId) : undefined,
    bus && deps.busConsumers ? deps.busConsumers(integrationId) : undefined,
  ]);
  const unwritten = row ? deps.tokens.unwrittenUse(row.token_hash) : undefined;
  const lastUsed = [row?.last_used_at, unwritten]
    .filter((d): d is Date => d instanceof Date)
    .sort((a, b) => b.getTime() - a.getTime())[0];
  const lastEvent = streams
    .map((s) => s.last_event_at)
    .filter((d): d is Date => d !== null)
    .sort((a, b) => b.getTime() - a.getTime())[0];
  return {
    integration_id: integration.id,
    organization_id: integration.organization_id,
    platform: integration.platform,
    is_active: integration.is_active,
    token: {
      configured: row !== undefined,
      token_prefix: row?.token_prefix ?? null,
      created_at: row?.created_at ?? null,
      last_used_at: lastUsed ?? null,
    },
    ingest_url: INGEST_URL,
    stats: {
      days: STATS_DAYS,
      since,
      events_in: streams.reduce((n, s) => n + s.events_in, 0),
      bytes_in: streams.reduce((n, s) => n + s.bytes_in, 0),
      last_event_at: lastEvent ?? null,
      streams,
    },
    ...(listeners ? { syslog: { listeners } } : {}),
    ...(consumers ? { bus: { consumers } } : {}),
  };
}
