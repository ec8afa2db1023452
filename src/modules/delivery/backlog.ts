// Backlog budgets (decision 0062, docs/delivery.md "Backlog budgets"): each destination has a
// budget of events and bytes waiting for it in the outbox (delivery settings backlog_max_events,
// backlog_max_bytes). Over it, `when_full` applies:
//   block (default)  new events from the integrations whose events wait for that destination
//                    are refused where they come in: push 503 with Retry-After naming the
//                    destination, syslog TCP and RELP stop reading, pull collection pauses;
//   drop_newest      events keep coming in; this destination's copies of them are not written
//                    and count in the ledger as `dropped` (reason backlog_full; a shadow copy
//                    as shadow_dropped).
// Nothing already accepted is dropped to make room. The outbox is read at most once per
// interval, on demand (no timer), and this process's own writes are added in between.
import type { Meter } from '@opentelemetry/api';
import { AppError } from '../../core/errors.js';
import type { LedgerEntry, NewDelivery, RoutingWrite } from '../../pipeline/delivery/engine-port.js';
import { deliverySettings, overBacklogBudget, type DeliverySettingsInput } from '../../pipeline/delivery/settings.js';
import type { BacklogRow } from './store.js';

export const BACKLOG_RETRY_AFTER_S = 5;
export const BACKLOG_FULL_REASON = 'backlog_full';

export interface DestinationBacklog {
  destination_id: string;
  name: string;
  events: number;
  bytes: number;
  max_events: number;
  max_bytes: number;
  when_full: 'block' | 'drop_newest';
  /** Over its budget (events or bytes). */
  full: boolean;
  /** The integrations with events waiting for the destination: the sources that feed it. */
  integrations: Set<number>;
}

export interface BacklogGateDeps {
  read: () => Promise<BacklogRow[]>;
  /** Least time between two reads of the outbox (default 1000 ms). */
  intervalMs?: number;
  onError?: (err: unknown) => void;
}

const isFull = (b: DestinationBacklog) =>
  overBacklogBudget({ backlog_max_events: b.max_events, backlog_max_bytes: b.max_bytes }, b);

function build(rows: BacklogRow[]): Map<string, DestinationBacklog> {
  const out = new Map<string, DestinationBacklog>();
  for (const r of rows) {
    let b = out.get(r.destination_id);
    if (!b) {
      const s = deliverySettings(r.delivery as DeliverySettingsInput);
      b = {
        destination_id: r.destination_id,
        name: r.name,
        events: 0,
        bytes: 0,
        max_events: s.backlog_max_events,
        max_bytes: s.backlog_max_bytes,
        when_full: s.when_full,
        full: false,
        integrations: new Set(),
      };
      out.set(r.destination_id, b);
    }
    b.events += r.events;
    b.bytes += r.bytes;
    if (r.events > 0) b.integrations.add(r.integration_id);
  }
  for (const b of out.values()) b.full = isFull(b);
  return out;
}

/** 503 naming the destination whose backlog holds new events back. */
export function backlogFull(b: DestinationBacklog): AppError {
  return new AppError('delivery.backlog_full', {
    detail:
      `Destination "${b.name}" (${b.destination_id}) has ${b.events} events (${b.bytes} bytes) waiting, over its backlog budget ` +
      `(${b.max_events} events, ${b.max_bytes} bytes): new events that would wait for it are refused until it catches up; what was accepted is kept. ` +
      `Resend in ${BACKLOG_RETRY_AFTER_S} s, or set the destination's delivery.when_full to drop_newest`,
    details: {
      destination_id: b.destination_id,
      destination_name: b.name,
      backlog_events: b.events,
      backlog_bytes: b.bytes,
      max_events: b.max_events,
      max_bytes: b.max_bytes,
      retry_after_seconds: BACKLOG_RETRY_AFTER_S,
    },
    headers: { 'retry-after': String(BACKLOG_RETRY_AFTER_S) },
  });
}

export function createBacklogGate(deps: BacklogGateDeps) {
  const intervalMs = deps.intervalMs ?? 1000;
  let snapshot = new Map<string, DestinationBacklog>();
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;

  /** Starts a read when the last one is older than the interval; the read under way, if any. */
  function refresh(): Promise<void> | undefined {
    const now = Date.now();
    if (!reading && now - readAt >= intervalMs) {
      readAt = now;
      // A failed read keeps the last snapshot: the writes themselves report a database that is down.
      reading = deps
        .read()
        .then(
          (rows) => {
            snapshot = build(rows);
          },
          deps.onError ?? (() => undefined),
        )
        .finally(() => {
          reading = undefined;
        });
    }
    return reading;
  }

  async function current(): Promise<Map<string, DestinationBacklog>> {
    await refresh();
    return snapshot;
  }

  function blocking(map: Map<string, DestinationBacklog>, integrationId: number): DestinationBacklog | undefined {
    for (const b of map.values()) if (b.full && b.when_full === 'block' && b.integrations.has(integrationId)) return b;
    return undefined;
  }

  return {
    /** The backlog of each destination with events waiting (at most one interval old). */
    current,
    /** The refusal for new events of an integration, when a destination it feeds is full and blocks. */
    async refusal(integrationId: number): Promise<AppError | undefined> {
      const b = blocking(await current(), integrationId);
      return b ? backlogFull(b) : undefined;
    },
    /** The same from the last reading, without waiting (a read starts when it is due): for UDP, which cannot wait. */
    refusalNow(integrationId: number): AppError | undefined {
      void refresh();
      const b = blocking(snapshot, integrationId);
      return b ? backlogFull(b) : undefined;
    },
    /**
     * Before a routing write's transaction: the copies for full drop_newest destinations are
     * taken out of it and counted in its ledger instead (dropped, or shadow_dropped).
     */
    async dropOverBudget(write: RoutingWrite): Promise<void> {
      if (write.deliveries.length === 0) return;
      const map = await current();
      const dropped = new Set<string>();
      const ledger: LedgerEntry[] = [];
      const kept = write.deliveries.filter((d) => {
        const b = map.get(d.destination_id);
        if (!b || !b.full || b.when_full !== 'drop_newest' || (d.kind !== 'primary' && d.kind !== 'shadow'))
          return true;
        dropped.add(d.id);
        ledger.push({
          organization_id: d.organization_id,
          integration_id: d.integration_id,
          stream: d.stream,
          outcome: d.kind === 'shadow' ? 'shadow_dropped' : 'dropped',
          destination_id: d.destination_id,
          reason: BACKLOG_FULL_REASON,
          count: d.event_count,
        });
        return false;
      });
      if (dropped.size === 0) return;
      write.deliveries = kept;
      write.ledger = [...write.ledger, ...ledger];
      write.lineageCopies = write.lineageCopies.filter((c) => !dropped.has(c.delivery_batch_id));
    },
    /** The last reading, without waiting (a read starts when one is due): for gauges. */
    peek(): ReadonlyMap<string, DestinationBacklog> {
      void refresh();
      return snapshot;
    },
    /** After a commit: this process's new outbox rows, counted until the next read sees them. */
    added(deliveries: readonly NewDelivery[]): void {
      for (const d of deliveries) {
        const b = snapshot.get(d.destination_id);
        if (!b) {
          // A destination the last reading did not see: the next check reads again.
          readAt = Number.NEGATIVE_INFINITY;
          continue;
        }
        b.events += d.event_count;
        b.bytes += d.bytes;
        b.integrations.add(d.integration_id);
        b.full = isFull(b);
      }
    },
  };
}

export type BacklogGate = ReturnType<typeof createBacklogGate>;

/** weir_destination_backlog_events / _bytes and weir_destination_backlog_full (1 over budget) per destination_id, from the gate's last reading. */
export function observeBacklog(meter: Meter, gate: Pick<BacklogGate, 'peek'>): void {
  const events = meter.createObservableGauge('weir_destination_backlog_events', {
    description: 'Events waiting for a destination in the outbox (the backlog budget counts these)',
    unit: '{event}',
  });
  const bytes = meter.createObservableGauge('weir_destination_backlog_bytes', {
    description: 'Bytes (before compression) of the events waiting for a destination',
    unit: 'By',
  });
  const full = meter.createObservableGauge('weir_destination_backlog_full', {
    description: '1 while a destination is over its backlog budget (when_full applies), else 0',
  });
  meter.addBatchObservableCallback(
    (result) => {
      for (const b of gate.peek().values()) {
        const attrs = { destination_id: b.destination_id };
        result.observe(events, b.events, attrs);
        result.observe(bytes, b.bytes, attrs);
        result.observe(full, b.full ? 1 : 0, attrs);
      }
    },
    [events, bytes, full],
  );
}
