// createQueue: BullMQ when REDIS_URL is set (distributed), else the database queue
// (embedded default). Both implement QueuePort; `backend` tells them apart, e.g. for the
// database queue's prune(), which BullMQ does not need (it evicts finished jobs itself).
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../db/index.js';
import { BullMqQueue, type BullMqQueueOptions } from './bullmq.js';
import { DatabaseQueue, type DatabaseQueueOptions } from './database.js';

export type * from './port.js';
export { QueueClosedError, QueueOptionsError } from './errors.js';
export { BullMqQueue } from './bullmq.js';
export { DatabaseQueue } from './database.js';

export type QueueAdapter = DatabaseQueue | BullMqQueue;

export interface QueueOptions
  extends Omit<DatabaseQueueOptions, 'db' | 'logger'>, Omit<BullMqQueueOptions, 'redisUrl' | 'prefix' | 'logger'> {
  redisUrl?: string | undefined;
  redisPrefix: string;
  db: Kysely<DB>;
  logger?: Logger | undefined;
}

export function createQueue(options: QueueOptions): QueueAdapter {
  const { redisUrl, redisPrefix, db, ...tuning } = options;
  if (redisUrl) return new BullMqQueue({ ...tuning, redisUrl, prefix: redisPrefix });
  return new DatabaseQueue({ ...tuning, db });
}
