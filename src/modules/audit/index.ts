import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import { createAuditService } from './service.js';
import { createAuditStore } from './store.js';

export function wireAudit(deps: { db: Kysely<DB>; clock: Clock }) {
  return { service: createAuditService({ store: createAuditStore(deps.db), clock: deps.clock }) };
}
