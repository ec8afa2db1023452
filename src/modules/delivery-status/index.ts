import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { BodyLog } from '../../platform/bodylog/log.js';
import { inSnapshot } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import { deliveryStatusRoutes } from './routes.js';
import { createDeliveryStatusService } from './service.js';
import { createDeliveryStatusStore } from './store.js';
import { createTapService } from './tap.js';

export type { DeliveryStatusService } from './service.js';
export type { TapService } from './tap.js';

/**
 * The delivery status APIs of the destinations family: DLQ (list, reprocess), health
 * (single and batch, with the ledger), metrics, lineage and tap. `lineageEnabled` is
 * config.delivery.lineageEnabled.
 */
export function wireDeliveryStatus(deps: {
  db: Kysely<DB>;
  clock: Clock;
  lineageEnabled: boolean;
  tapPollMs?: number;
  onError?: (err: unknown) => void;
  onTapOpened?: () => void;
  onOutboxWritten?: () => void;
  bodies?: BodyLog | undefined;
}) {
  const store = createDeliveryStatusStore(deps.db, deps.bodies, deps.onOutboxWritten);
  const service = createDeliveryStatusService({
    store,
    clock: deps.clock,
    lineageEnabled: deps.lineageEnabled,
    snapshot: (fn) => inSnapshot(deps.db, fn),
  });
  const tap = createTapService({
    store,
    clock: deps.clock,
    pollMs: deps.tapPollMs,
    onError: deps.onError,
    onOpened: deps.onTapOpened,
  });
  return { service, tap, routes: (app: Api) => deliveryStatusRoutes(app, service, tap) };
}
