import type { QueuePort } from '../../platform/queue/port.js';
import type { ProcessService } from '../processes/service.js';
import { maintenanceJobs, maintenanceTasks } from './jobs.js';

export function wireMaintenance(deps: {
  queue: QueuePort;
  processes: ProcessService;
  sessions: { prune(): Promise<number> };
}) {
  return {
    jobs: [maintenanceJobs({ ...deps, jobRetentionMs: 24 * 3_600_000 })],
    beatTasks: maintenanceTasks(deps.queue),
  };
}
