// Backfill jobs: organization-owned rows, every API read filtered by the caller's scope.
// The worker reads and writes its job by id (it acts for the job, not for a caller).
import { sql, type Kysely, type Selectable } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { BackfillJobsTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';

export type BackfillJobRow = Selectable<BackfillJobsTable>;
export type JobStatus = BackfillJobRow['status'];

export interface StreamProgress {
  chunk_from: string;
  chunk_to: string | null;
  cursor: string | null;
  events: number;
  filtered: number;
  pages: number;
  done: boolean;
  clamped_from: string | null;
}

export type Progress = Record<string, StreamProgress>;

export interface NewJob {
  id: string;
  organization_id: number;
  integration_id: number;
  streams: string[];
  from_ts: Date;
  to_ts: Date;
  progress: Progress;
  warnings: string[];
  created_by: number | null;
}

export interface UsageDelta {
  organizationId: number;
  integrationId: number;
  stream: string;
  day: string;
  requests: number;
  rateLimited: number;
  errors: number;
  bytes: number;
  pages: number;
  events: number;
  filtered: number;
}

const FINAL: JobStatus[] = ['completed', 'failed', 'cancelled'];
/** Warnings kept per job: a job re-enqueued many times by a vendor's rate limit must not grow without bound. */
const MAX_WARNINGS = 50;

export function isFinal(status: JobStatus): boolean {
  return FINAL.includes(status);
}

export function createBackfillStore(db: Kysely<DB>) {
  const q = () => executor(db);
  const jobs = () => q().selectFrom('backfill_jobs');

  return {
    async insert(job: NewJob, now: Date): Promise<BackfillJobRow> {
      return q()
        .insertInto('backfill_jobs')
        .values({
          ...job,
          streams: JSON.stringify(job.streams),
          progress: JSON.stringify(job.progress),
          warnings: JSON.stringify(job.warnings),
          status: 'queued',
          events: 0,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    async get(scope: Scope, id: string): Promise<BackfillJobRow | undefined> {
      return jobs().selectAll().where(scoped(scope, 'organization_id')).where('id', '=', id).executeTakeFirst();
    },

    async list(
      scope: Scope,
      integrationId: number,
      status: JobStatus | undefined,
      page: OffsetPage,
    ): Promise<{ items: BackfillJobRow[]; total: number }> {
      let base = jobs().where(scoped(scope, 'organization_id')).where('integration_id', '=', integrationId);
      if (status !== undefined) base = base.where('status', '=', status);
      const [items, count] = await Promise.all([
        base
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(count.n) };
    },

    /**
     * Cancel in one statement: a queued job (no worker holds it) ends at once; a running
     * one is flagged for its worker. Undefined when the job had already finished.
     */
    async requestCancel(scope: Scope, id: string, now: Date): Promise<BackfillJobRow | undefined> {
      return q()
        .updateTable('backfill_jobs')
        .set({
          cancel_requested: true,
          status: sql`case when status = 'queued' then 'cancelled' else status end`,
          finished_at: sql`case when status = 'queued' then ${now}::timestamptz else finished_at end`,
          resume_at: null,
          updated_at: now,
        })
        .where(scoped(scope, 'organization_id'))
        .where('id', '=', id)
        .where('status', 'in', ['queued', 'running'])
        .returningAll()
        .executeTakeFirst();
    },

    // ---- the worker's side ----

    getById: (id: string) => jobs().selectAll().where('id', '=', id).executeTakeFirst(),

    async cancelRequested(id: string): Promise<boolean> {
      const row = await jobs().select('cancel_requested').where('id', '=', id).executeTakeFirst();
      return row?.cancel_requested ?? true;
    },

    /** queued|running -> running; undefined when the job was cancelled or finished meanwhile. */
    async start(id: string, now: Date): Promise<BackfillJobRow | undefined> {
      return q()
        .updateTable('backfill_jobs')
        .set({
          status: 'running',
          started_at: sql`coalesce(started_at, ${now}::timestamptz)`,
          resume_at: null,
          updated_at: now,
        })
        .where('id', '=', id)
        .where('status', 'in', ['queued', 'running'])
        .returningAll()
        .executeTakeFirst();
    },

    /** Written after every accepted page: the per-stream resume point and the totals. */
    async saveProgress(
      id: string,
      progress: Progress,
      delta: { events: number; pages: number },
      now: Date,
    ): Promise<void> {
      await q()
        .updateTable('backfill_jobs')
        .set({
          progress: JSON.stringify(progress),
          events: sql`events + ${delta.events}`,
          pages: sql`pages + ${delta.pages}`,
          updated_at: now,
        })
        .where('id', '=', id)
        .execute();
    },

    async addWarning(id: string, warning: string, now: Date): Promise<void> {
      await q()
        .updateTable('backfill_jobs')
        .set({
          warnings: sql`case when jsonb_array_length(warnings) < ${MAX_WARNINGS} then warnings || jsonb_build_array(${warning}::text) else warnings end`,
          updated_at: now,
        })
        .where('id', '=', id)
        .execute();
    },

    /** Back to queued until resumeAt (a vendor's long Retry-After); progress is kept. */
    async requeue(id: string, resumeAt: Date, now: Date): Promise<boolean> {
      const res = await q()
        .updateTable('backfill_jobs')
        .set({ status: 'queued', resume_at: resumeAt, updated_at: now })
        .where('id', '=', id)
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },

    async finish(
      id: string,
      status: 'completed' | 'failed' | 'cancelled',
      error: string | null,
      now: Date,
    ): Promise<void> {
      await q()
        .updateTable('backfill_jobs')
        .set({ status, error, finished_at: now, resume_at: null, updated_at: now })
        .where('id', '=', id)
        .where('status', 'in', ['queued', 'running'])
        .execute();
    },

    /** Vendor API usage of a page, added to the integration's daily usage (the cost summary counts backfills too). */
    async recordUsage(u: UsageDelta): Promise<void> {
      await q()
        .insertInto('collector_usage')
        .values({
          organization_id: u.organizationId,
          integration_id: u.integrationId,
          stream: u.stream,
          day: u.day,
          requests: u.requests,
          rate_limited: u.rateLimited,
          errors: u.errors,
          bytes: u.bytes,
          pages: u.pages,
          events: u.events,
          filtered: u.filtered,
        })
        .onConflict((oc) =>
          oc.columns(['integration_id', 'stream', 'day']).doUpdateSet({
            requests: sql`collector_usage.requests + excluded.requests`,
            rate_limited: sql`collector_usage.rate_limited + excluded.rate_limited`,
            errors: sql`collector_usage.errors + excluded.errors`,
            bytes: sql`collector_usage.bytes + excluded.bytes`,
            pages: sql`collector_usage.pages + excluded.pages`,
            events: sql`collector_usage.events + excluded.events`,
            filtered: sql`collector_usage.filtered + excluded.filtered`,
          }),
        )
        .execute();
    },

    // ---- what the service checks about the integration ----

    async hasChildren(integrationId: number): Promise<boolean> {
      return Boolean(
        await q().selectFrom('integrations').select('id').where('parent_id', '=', integrationId).executeTakeFirst(),
      );
    },

    /** Jobs in scope still queued olderThan after they were due (created, or their resume time). */
    async stuck(
      scope: Scope,
      olderThan: Date,
      limit = 100,
    ): Promise<
      Pick<BackfillJobRow, 'id' | 'organization_id' | 'integration_id' | 'created_at' | 'updated_at' | 'resume_at'>[]
    > {
      return jobs()
        .select(['id', 'organization_id', 'integration_id', 'created_at', 'updated_at', 'resume_at'])
        .where(scoped(scope, 'organization_id'))
        .where('status', '=', 'queued')
        .where(sql<boolean>`coalesce(resume_at, updated_at) < ${olderThan}`)
        .orderBy('created_at')
        .limit(limit)
        .execute();
    },
  };
}

export type BackfillStore = ReturnType<typeof createBackfillStore>;
