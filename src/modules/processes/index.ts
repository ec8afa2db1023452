import type { Clock } from '../../core/clock.js';
import type { Executor } from '../../platform/db/index.js';
import { createProcessService } from './service.js';
import { createProcessStore } from './store.js';

export function wireProcesses(deps: {
  db: Executor;
  clock: Clock;
  queueBackend: string;
  broker?: string;
  onError?: (err: unknown) => void;
}) {
  return { service: createProcessService({ ...deps, store: createProcessStore(deps.db) }) };
}
