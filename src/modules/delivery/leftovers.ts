// Normalized batches an earlier version left `route_state = 'pending'` (before the one pass,
// decision 0028). The dispatcher's routing stage that claimed them is gone (decision 0064):
// migration 0025_retire_routing_stage queued one job per such batch, and the job routes it
// with what the one pass routes with (the same routes, destinations snapshot, body log,
// event store, backlog budgets and write). Until then the batch's events count as pending.
// The mark flips to done in the write's transaction, only if it was still pending: a job
// run twice, or a batch an older dispatcher routed meanwhile, writes nothing twice.
// routeRecords is that routing for records in memory (tests fill the outbox with it).
import type { Clock } from '../../core/clock.js';
import type { JobHandler } from '../../platform/queue/port.js';
import { decodeLines } from '../../pipeline/batch-codec.js';
import type { RoutingWrite, SourceBatch } from '../../pipeline/delivery/engine-port.js';
import {
  buildRoutingWrite,
  encodeDeliveries,
  type RoutableDestination,
} from '../../pipeline/delivery/routing-write.js';
import type { OrgRoutes } from '../../pipeline/delivery/routes-cache.js';
import type { NormalizedRecord } from '../../pipeline/envelope.js';
import { ocsfText } from '../../pipeline/route/compile.js';
import type { DeliveryStore } from './store.js';

/** The job migration 0025_retire_routing_stage queues on the delivery queue, its payload `{batch_id}`. */
export const ROUTE_LEFTOVER_JOB = 'delivery.route_leftover';

/** What the one pass routes with (the delivery module's passRouting). */
interface PassRouting {
  lineage: boolean;
  routes(organizationId: number): Promise<OrgRoutes>;
  destinations(refresh: boolean): Promise<ReadonlyMap<string, RoutableDestination>>;
  prepare(write: RoutingWrite): Promise<void>;
  release(write: RoutingWrite): void;
  write(write: RoutingWrite, at: Date): Promise<void>;
  written(write: RoutingWrite): void;
}

export function createLeftoverRouting(deps: {
  store: Pick<DeliveryStore, 'leftovers'>;
  routing: PassRouting;
  transact: <T>(fn: () => Promise<T>) => Promise<T>;
  clock: Clock;
}) {
  const { store, routing } = deps;

  /**
   * Routes normalized records as the pass does and writes them in one transaction, after
   * `mark` (skipped, and false returned, when it says no). `lines`: the records' stored JSON
   * texts, whose `ocsf` member is the copy's text.
   */
  async function routeRecords(
    batch: SourceBatch,
    records: NormalizedRecord[],
    lines?: readonly string[],
    mark?: () => Promise<boolean>,
  ): Promise<boolean> {
    const texts = records.map((r, i) => (lines && ocsfText(lines[i]!)) ?? JSON.stringify(r.ocsf));
    const plan = (await routing.routes(batch.organization_id)).compiled().plan(records, texts);
    let destinations = await routing.destinations(false);
    // A route saved a moment ago may name a destination created a moment ago.
    if ([...plan.copies.keys()].some((id) => !destinations.has(id))) destinations = await routing.destinations(true);
    const write = buildRoutingWrite(batch, records, plan, destinations, routing.lineage);
    await encodeDeliveries(write);
    await routing.prepare(write);
    let written = false;
    try {
      const at = deps.clock.now();
      written = await deps.transact(async () => {
        if (mark && !(await mark())) return false;
        await routing.write(write, at);
        return true;
      });
    } finally {
      routing.release(write);
    }
    if (written && write.deliveries.length > 0) routing.written(write);
    return written;
  }

  /** Routes a leftover batch if it is still pending; false when it was not (routed before, or gone with its organization). */
  async function route(batchId: string): Promise<boolean> {
    const batch = await store.leftovers.read(batchId);
    if (!batch) return false;
    const lines = await decodeLines(batch.events);
    const records = lines.map((l) => JSON.parse(l) as NormalizedRecord);
    return routeRecords(batch, records, lines, () => store.leftovers.markRouted(batch.id));
  }

  const handler: JobHandler = async (job) => {
    const { batch_id } = job.payload as { batch_id: string };
    await route(batch_id);
  };

  const handlers: Record<string, JobHandler> = { [ROUTE_LEFTOVER_JOB]: handler };
  return { route, routeRecords, handlers };
}
