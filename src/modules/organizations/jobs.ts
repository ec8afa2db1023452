// Deleting an organization's data: a list of per-table steps run by a worker. Modules that
// own organization data add their step (addStep) when they are wired. A required step that
// fails fails the job (retried; the steps are idempotent); a best-effort step that fails
// (the search-index cleanup) is recorded and the job ends `partial` while the rest completes.
import type { Clock } from '../../core/clock.js';
import type { JobRegistration } from '../../platform/queue/jobs.js';
import { defineJobs, type JobQueue } from '../queues.js';
import type { OrganizationStore } from './store.js';

export const ORGANIZATIONS_QUEUE = 'organizations';
export const DELETE_DATA_JOB = 'organizations.delete_data';

export interface DeleteDataPayload {
  deletion_id: string;
}

export interface OrganizationJobs {
  [ORGANIZATIONS_QUEUE]: { [DELETE_DATA_JOB]: DeleteDataPayload };
}

export interface StepOutcome {
  /** Rows removed, when the step counts them. */
  rows?: number;
  /** Set when the step had nothing to do and why (e.g. no search index configured). */
  skipped?: string;
}

export interface OrgDataStep {
  /** Stable name recorded in the deletion's detail. */
  name: string;
  /** A failure is recorded and the job ends `partial` instead of failing. */
  bestEffort?: boolean;
  run(organizationId: number): Promise<StepOutcome | void>;
}

export interface StepRecord {
  name: string;
  state: 'done' | 'skipped' | 'failed';
  rows?: number;
  reason?: string;
}

export type DeletionState = 'queued' | 'running' | 'completed' | 'partial' | 'failed';
const FINAL: readonly string[] = ['completed', 'partial', 'failed'];

/** The steps every instance has today; later modules add theirs. */
export function builtInSteps(store: OrganizationStore): OrgDataStep[] {
  // The event store's step (search_index, best effort) is added by the search module.
  return [{ name: 'integrations', run: async (orgId) => ({ rows: await store.deleteIntegrations(orgId) }) }];
}

export function createDataDeletion(deps: { store: OrganizationStore; clock: Clock }) {
  const { store, clock } = deps;
  const steps: OrgDataStep[] = builtInSteps(store);

  /** Required steps first, best-effort ones (external systems) last. */
  const ordered = () => [...steps.filter((s) => !s.bestEffort), ...steps.filter((s) => s.bestEffort)];

  async function run(deletionId: string, attempt: number, maxAttempts: number): Promise<void> {
    const deletion = await store.getDeletion(deletionId);
    if (!deletion || FINAL.includes(deletion.state)) return;
    await store.updateDeletion(deletionId, { state: 'running' });
    const records: StepRecord[] = [];
    for (const step of ordered()) {
      try {
        const outcome = (await step.run(deletion.organization_id)) ?? {};
        records.push({
          name: step.name,
          state: outcome.skipped ? 'skipped' : 'done',
          ...(outcome.rows !== undefined ? { rows: outcome.rows } : {}),
          ...(outcome.skipped ? { reason: outcome.skipped } : {}),
        });
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        records.push({ name: step.name, state: 'failed', reason });
        if (step.bestEffort) continue;
        const last = attempt >= maxAttempts;
        await store.updateDeletion(deletionId, {
          state: last ? 'failed' : 'running',
          detail: { steps: records, failed_steps: [step.name], attempt },
          finished_at: last ? clock.now() : null,
        });
        throw err;
      }
    }
    const failed = records.filter((r) => r.state === 'failed').map((r) => r.name);
    await store.updateDeletion(deletionId, {
      state: failed.length ? 'partial' : 'completed',
      detail: { steps: records, failed_steps: failed },
      finished_at: clock.now(),
    });
  }

  return {
    /** Adds a module's step (call at wiring time). */
    addStep(step: OrgDataStep): void {
      if (steps.some((s) => s.name === step.name))
        throw new Error(`Data-deletion step ${step.name} is already registered`);
      steps.push(step);
    },
    steps: () => ordered().map((s) => s.name),
    run,
  };
}

export type DataDeletion = ReturnType<typeof createDataDeletion>;

export function organizationJobs(deletion: DataDeletion): JobRegistration {
  return defineJobs({
    queue: ORGANIZATIONS_QUEUE,
    role: 'worker',
    concurrency: 1,
    handlers: {
      [DELETE_DATA_JOB]: async (job) => {
        const { deletion_id } = job.payload;
        await deletion.run(deletion_id, job.attempt, job.maxAttempts);
      },
    },
  });
}

export async function enqueueDeletion(queue: Pick<JobQueue, 'enqueue'>, deletionId: string): Promise<void> {
  const payload: DeleteDataPayload = { deletion_id: deletionId };
  await queue.enqueue(ORGANIZATIONS_QUEUE, DELETE_DATA_JOB, payload, {
    jobId: deletionId,
    attempts: 5,
    backoffMs: 5_000,
  });
}
