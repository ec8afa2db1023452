// Turns the routing plan of one batch into what the one pass writes with the batch
// (docs/delivery.md, Routing in the pass): one outbox row per destination (and per shadow), the
// ledger's filtered / routed / copies counts, route statistics and, when on, lineage.
// Destinations an organization may not use (disabled by an administrator, deleted, of
// another organization) get no copy; an event whose every copy was for such destinations
// is filtered `destination_disabled`. A destination stopped by a revoked credential keeps
// receiving copies: they wait in the outbox for a new credential.
import { newId } from '../../core/ids.js';
import { encodeLines } from '../batch-codec.js';
import type { NormalizedRecord } from '../envelope.js';
import type { Copy, RoutingPlan } from '../route/types.js';
import type {
  EngineStore,
  InlineStore,
  LedgerEntry,
  LineageCopyRow,
  LineageEventRow,
  NewDelivery,
  RoutingWrite,
  SourceBatch,
  StoredCopies,
} from './engine-port.js';
import type { DestinationRuntime } from './ports.js';
import { storedColumnValues } from './stored-columns.js';

export const CREDENTIAL_REVOKED = 'credential_revoked';

/** Whether an organization's routes may write copies for the destination now. */
export function usableBy(dest: RoutableDestination | undefined, organizationId: number): boolean {
  if (!dest) return false;
  if (dest.organization_id !== null && dest.organization_id !== organizationId) return false;
  return dest.enabled || dest.disabled_reason === CREDENTIAL_REVOKED;
}

interface Outgoing {
  destinationId: string;
  kind: 'primary' | 'shadow';
  copies: Copy[];
}

/** What buildRoutingWrite reads of a destination (a clone of it crosses to the pass's threads). */
export type RoutableDestination = Pick<
  DestinationRuntime,
  'organization_id' | 'enabled' | 'disabled_reason' | 'shadow_destination_id' | 'type'
>;

/**
 * Destination types whose copies the pass writes itself, in the batch's transaction, instead
 * of an outbox row a lane sends later: the event store (docs/search.md), which lives in
 * Weir's own database.
 */
export const INLINE_TYPES: ReadonlySet<string> = new Set(['event_store']);

const DAY_MS = 86_400_000;
/** An event time further from its receipt than this is not believed (stored under its receipt time). */
const TIME_PAST_MS = 3650 * DAY_MS;
const TIME_FUTURE_MS = DAY_MS;

function intOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= 2_147_483_647 ? v : null;
}

/**
 * The event store's rows of copies: the filter columns read from the in-memory events
 * (`event(i)`, with its id and receipt time), `lines[i]` its stored text.
 */
export function storedCopies(
  destinationId: string,
  origin: { organization_id: number; integration_id: number; stream: string },
  lines: string[],
  event: (i: number) => { id: string; received: number; ocsf: Record<string, unknown> },
): StoredCopies {
  const n = lines.length;
  const out: StoredCopies = {
    destination_id: destinationId,
    ...origin,
    ids: new Array<string>(n),
    lines,
    times: new Array<number>(n),
    received: new Array<number>(n),
    columns: new Array<(string | null)[]>(n),
    class_uid: new Array<number | null>(n),
    category_uid: new Array<number | null>(n),
    activity_id: new Array<number | null>(n),
    severity_id: new Array<number | null>(n),
    bytes: 0,
  };
  for (let i = 0; i < n; i++) {
    const { id, received, ocsf: e } = event(i);
    const t = e.time;
    out.ids[i] = id;
    out.times[i] =
      typeof t === 'number' && Number.isFinite(t) && t >= received - TIME_PAST_MS && t <= received + TIME_FUTURE_MS
        ? t
        : received;
    out.received[i] = received;
    out.columns[i] = storedColumnValues(e);
    out.class_uid[i] = intOrNull(e.class_uid);
    out.category_uid[i] = intOrNull(e.category_uid);
    out.activity_id[i] = intOrNull(e.activity_id);
    out.severity_id[i] = intOrNull(e.severity_id);
    out.bytes += Buffer.byteLength(lines[i]!);
  }
  return out;
}

/**
 * The outbox rows, ledger, statistics and lineage of one planned batch. Each row's lines are
 * in `bodies`; encodeDeliveries stores them in the row's `events`.
 */
export function buildRoutingWrite(
  batch: SourceBatch,
  records: NormalizedRecord[],
  plan: RoutingPlan,
  destinations: ReadonlyMap<string, RoutableDestination>,
  lineage: boolean,
): RoutingWrite {
  const n = records.length;
  const org = batch.organization_id;
  const copied = new Uint8Array(n);
  const planned = new Uint8Array(n);
  const outgoing: Outgoing[] = [];
  const shadows = new Map<string, Copy[][]>();
  const routeCopies = new Map<string, number>();
  for (const [destinationId, copies] of plan.copies) {
    if (copies.length === 0) continue;
    const dest = destinations.get(destinationId);
    if (!usableBy(dest, org)) {
      for (const c of copies) planned[c.index] = 1;
      continue;
    }
    for (const c of copies) {
      copied[c.index] = 1;
      routeCopies.set(c.routeId, (routeCopies.get(c.routeId) ?? 0) + 1);
    }
    outgoing.push({ destinationId, kind: 'primary', copies });
    const shadowId = dest!.shadow_destination_id;
    if (shadowId && shadowId !== destinationId && usableBy(destinations.get(shadowId), org)) {
      // Several destinations mirrored into one: its shadow row carries all their copies.
      const list = shadows.get(shadowId);
      if (list) list.push(copies);
      else shadows.set(shadowId, [copies]);
    }
  }
  // A shadow of one destination shares that destination's copies (and body); of several, their union.
  for (const [destinationId, lists] of shadows)
    outgoing.push({ destinationId, kind: 'shadow', copies: lists.length === 1 ? lists[0]! : lists.flat() });

  const origin = { organization_id: org, integration_id: batch.integration_id, stream: batch.stream };
  const deliveries: NewDelivery[] = [];
  const bodies: string[][] = [];
  const bodyOf = new Map<Copy[], string[]>();
  const lineageCopies: LineageCopyRow[] = [];
  const ledger: LedgerEntry[] = [];
  const stored: StoredCopies[] = [];
  for (const out of outgoing) {
    let lines = bodyOf.get(out.copies);
    if (!lines) {
      lines = out.copies.map((c) => c.line);
      bodyOf.set(out.copies, lines);
    }
    if (out.kind === 'primary' && INLINE_TYPES.has(destinations.get(out.destinationId)!.type)) {
      // Written with the batch: copied and delivered in the same transaction.
      const copies = out.copies;
      const rows = storedCopies(out.destinationId, origin, lines, (i) => {
        const r = records[copies[i]!.index]!;
        return { id: r.id, received: Date.parse(r.received_at), ocsf: r.ocsf };
      });
      stored.push(rows);
      ledger.push({ ...origin, outcome: 'copies', destination_id: out.destinationId, count: rows.ids.length });
      ledger.push({ ...origin, outcome: 'delivered', destination_id: out.destinationId, count: rows.ids.length });
      if (lineage) {
        for (const c of out.copies)
          lineageCopies.push({
            event_id: records[c.index]!.id,
            destination_id: out.destinationId,
            delivery_batch_id: batch.id,
            route_id: c.routeId,
            kind: 'primary',
          });
      }
      continue;
    }
    let bytes = 0;
    for (const line of lines) bytes += Buffer.byteLength(line);
    bodies.push(lines);
    const id = newId();
    deliveries.push({
      id,
      destination_id: out.destinationId,
      ...origin,
      source_batch_id: batch.id,
      kind: out.kind,
      event_count: out.copies.length,
      bytes,
      event_ids: out.copies.map((c) => records[c.index]!.id).join(','),
      events: '',
    });
    if (out.kind === 'primary')
      ledger.push({ ...origin, outcome: 'copies', destination_id: out.destinationId, count: out.copies.length });
    if (lineage) {
      for (const c of out.copies) {
        lineageCopies.push({
          event_id: records[c.index]!.id,
          destination_id: out.destinationId,
          delivery_batch_id: id,
          route_id: c.routeId,
          kind: out.kind,
        });
      }
    }
  }

  let routed = 0;
  let disabled = 0;
  for (let i = 0; i < n; i++) {
    if (copied[i]) routed++;
    else if (planned[i]) disabled++;
  }
  if (routed > 0) ledger.push({ ...origin, outcome: 'routed', count: routed });
  const filtered: [string, number][] = [...Object.entries(plan.filtered), ['destination_disabled', disabled]];
  for (const [reason, count] of filtered) if (count > 0) ledger.push({ ...origin, outcome: 'filtered', reason, count });

  const routeStats = [...new Set([...plan.matched.keys(), ...plan.sampledOut.keys()])]
    .map((routeId) => ({
      route_id: routeId,
      organization_id: org,
      matched: plan.matched.get(routeId) ?? 0,
      sampled_out: plan.sampledOut.get(routeId) ?? 0,
      copies: routeCopies.get(routeId) ?? 0,
    }))
    .filter((r) => r.matched > 0 || r.sampled_out > 0);

  const lineageEvents: LineageEventRow[] = [];
  if (lineage) {
    for (let i = 0; i < n; i++) {
      const r = records[i]!;
      const info = plan.records[i];
      lineageEvents.push({
        event_id: r.id,
        ...origin,
        mapping_version_id: r.mapping_version_id ?? null,
        received_at: r.received_at,
        normalized_batch_id: batch.id,
        routes: info?.routes ?? [],
        filtered: copied[i] ? null : (info?.filtered ?? (planned[i] ? 'destination_disabled' : null)),
      });
    }
  }
  return { batchId: batch.id, deliveries, bodies, ledger, routeStats, lineageEvents, lineageCopies, stored };
}

/**
 * Stores each row's lines in `events` in their stored form (pipeline/batch-codec.ts), each
 * distinct body encoded once: a destination and its shadow share one.
 */
export async function encodeDeliveries(
  write: Pick<RoutingWrite, 'deliveries' | 'bodies'>,
  encode: (lines: readonly string[]) => Promise<string> | string = encodeLines,
): Promise<void> {
  const encoded = new Map<string[], Promise<string> | string>();
  write.deliveries.forEach((row, i) => {
    const lines = write.bodies[i]!;
    if (!encoded.has(lines)) encoded.set(lines, encode(lines));
  });
  for (let i = 0; i < write.deliveries.length; i++) write.deliveries[i]!.events = await encoded.get(write.bodies[i]!)!;
  write.bodies = [];
}

const HOUR = 3_600_000;

/** Writes a routing write (rows already encoded); joins the caller's transaction. */
export async function storeRoutingWrite(
  store: Pick<
    EngineStore,
    | 'insertDeliveries'
    | 'addLedger'
    | 'addRouteStats'
    | 'insertLineage'
    | 'addDestinationStats'
    | 'writeDestinationState'
  >,
  write: RoutingWrite,
  at: Date,
  lineage: boolean,
  inline?: InlineStore,
): Promise<void> {
  const hour = new Date(Math.floor(at.getTime() / HOUR) * HOUR);
  await store.insertDeliveries(write.deliveries);
  if (write.stored.length > 0) {
    if (!inline) throw new Error('copies for the event store, but no event store is wired');
    await inline.write(write.stored);
    for (const s of write.stored) {
      await store.addDestinationStats(
        {
          destination_id: s.destination_id,
          delivered: s.ids.length,
          bytes: s.bytes,
          requests: 1,
          failed_requests: 0,
          dead_lettered: 0,
          shadow_delivered: 0,
          latency_ms: 0,
        },
        hour,
      );
      // Delivered with the batch: its health shows when, as a lane's does after a send.
      await store.writeDestinationState(
        s.destination_id,
        { state: 'closed', consecutive_failures: 0, opened_at: null },
        { at, ok: true, error: null },
      );
    }
  }
  await store.addLedger(write.ledger, at);
  await store.addRouteStats(write.routeStats, hour);
  if (lineage) await store.insertLineage(write.lineageEvents, write.lineageCopies);
}
