// Schedules (/api/schedules/): a saved query run on a cron expression (in a time zone) or an
// interval. The elected beat enqueues each slot's run; the run row is unique per schedule and
// slot, so a beat handover never runs a slot twice. A run covers its query's time range ending
// at its slot. When it completes and its condition holds (always, unless one is set), its result
// goes by e-mail to the recipients of the schedule's organization only, the CSV attached (or
// linked when it is large). A schedule outside the caller's scope is 404, never 403.
import { Cron } from 'croner';
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import type { Logger } from '../../platform/logger.js';
import { decodeRecords } from '../../pipeline/batch-codec.js';
import { setAuditTarget } from '../audit/service.js';
import type { EmailNotifier } from '../email/jobs.js';
import { planQuery, type QueryInput } from './query/definition.js';
import { runOut } from './runs.js';
import type { RunRow, ScheduleRow, SearchStore } from './store.js';

export interface ScheduleCondition {
  op: 'gt' | 'gte' | 'lt' | 'lte' | 'eq' | 'ne';
  value: number;
}

export interface NotifySettings {
  /** E-mail the result to the organization's recipients (default true). */
  email?: boolean;
  /** Attach the CSV (default true; linked instead when over 5 MB). */
  attach_csv?: boolean;
  /** On the number of matching events: send (and alert) only when it holds (default: always). */
  condition?: ScheduleCondition | null;
  /** Also raise a detection when the condition holds, with the run's result attached. */
  alert?: {
    severity_id: number;
    title?: string;
    description?: string;
    mitre?: { tactics?: string[]; techniques?: string[] };
  } | null;
}

export interface ScheduleBody {
  name: string;
  query_id: string;
  cron?: string;
  timezone?: string;
  interval_seconds?: number;
  notify?: NotifySettings;
  enabled?: boolean;
}

const MAX_ATTACHMENT = 5_000_000;
const MIN_INTERVAL_S = 60;

/** Whether a run's matched count satisfies the condition (none: always). */
export function conditionHolds(condition: ScheduleCondition | null | undefined, matched: number): boolean {
  if (!condition) return true;
  const v = condition.value;
  return {
    gt: matched > v,
    gte: matched >= v,
    lt: matched < v,
    lte: matched <= v,
    eq: matched === v,
    ne: matched !== v,
  }[condition.op];
}

function invalid(location: string, message: string): AppError {
  return new AppError('search.invalid_schedule', {
    detail: `${location} ${message}`,
    details: { errors: [{ location, message }] },
  });
}

/** The first slot strictly after `after`. */
export function nextSlot(
  s: Pick<ScheduleRow, 'cron' | 'timezone' | 'interval_seconds' | 'created_at'>,
  after: Date,
): Date {
  if (s.cron) {
    const next = new Cron(s.cron, { paused: true, timezone: s.timezone }).nextRun(after);
    if (!next) throw new Error(`cron ${s.cron} has no next run`);
    return next;
  }
  // Interval slots are counted from the schedule's creation, so every beat computes the same ones.
  const step = s.interval_seconds! * 1000;
  const origin = new Date(s.created_at).getTime();
  const n = Math.floor((after.getTime() - origin) / step) + 1;
  return new Date(origin + Math.max(n, 1) * step);
}

export function scheduleOut(r: ScheduleRow) {
  return {
    id: r.id,
    organization_id: r.organization_id,
    name: r.name,
    query_id: r.query_id,
    cron: r.cron,
    timezone: r.timezone,
    interval_seconds: r.interval_seconds,
    notify: r.notify as NotifySettings,
    enabled: r.enabled,
    next_run_at: r.next_run_at,
    last_slot: r.last_slot,
    created_by: r.created_by,
    created_at: r.created_at,
  };
}

/** Where a schedule's alerts go (the detections module). */
export interface AlertSink {
  raise(a: {
    organization_id: number;
    schedule: { id: string; name: string };
    alert: NonNullable<NotifySettings['alert']>;
    run: { id: string; matched: number; event_ids: string[]; from: Date; to: Date };
    query: unknown;
  }): Promise<string | undefined>;
}

export interface SchedulesDeps {
  alerts?: AlertSink;
  store: SearchStore;
  clock: Clock;
  logger: Logger;
  email: EmailNotifier;
  maxRows: number;
  publicUrl: string | undefined;
  enqueue(runId: string): Promise<void>;
  transaction<T>(fn: () => Promise<T>): Promise<T>;
}

export function createSchedulesService(deps: SchedulesDeps) {
  const { store, clock, logger } = deps;

  async function visible(scope: Scope, id: string): Promise<ScheduleRow> {
    const row = await store.getSchedule(scope, id);
    if (!row) throw errors.notFound('Schedule');
    return row;
  }

  function checkTiming(body: ScheduleBody): void {
    if ((body.cron === undefined) === (body.interval_seconds === undefined))
      throw invalid('body', 'needs cron or interval_seconds (one of them)');
    if (body.interval_seconds !== undefined && body.interval_seconds < MIN_INTERVAL_S)
      throw invalid('body/interval_seconds', `must be at least ${MIN_INTERVAL_S}`);
    if (body.timezone !== undefined && body.cron === undefined) throw invalid('body/timezone', 'goes with cron');
    if (body.cron !== undefined) {
      try {
        const c = new Cron(body.cron, { paused: true, timezone: body.timezone ?? 'UTC' });
        const [a, b] = c.nextRuns(2);
        if (!a) throw new Error('it never runs');
        if (b && b.getTime() - a.getTime() < MIN_INTERVAL_S * 1000)
          throw new Error(`runs more often than every ${MIN_INTERVAL_S} seconds`);
      } catch (e) {
        throw invalid(
          body.timezone !== undefined && /time ?zone/i.test((e as Error).message) ? 'body/timezone' : 'body/cron',
          `is not usable: ${(e as Error).message}`,
        );
      }
    }
    const c = body.notify?.condition;
    if (c && !Number.isFinite(c.value)) throw invalid('body/notify/condition/value', 'must be a number');
    const a = body.notify?.alert;
    if (a && !(Number.isInteger(a.severity_id) && a.severity_id >= 1 && a.severity_id <= 6))
      throw invalid('body/notify/alert/severity_id', 'must be an OCSF severity_id from 1 to 6');
  }

  /** The e-mail of a completed scheduled run, when its condition holds; what happened, recorded on the run. */
  async function notify(run: RunRow, schedule: ScheduleRow): Promise<Record<string, unknown>> {
    const settings = schedule.notify as NotifySettings;
    const matched = Number(run.matched ?? 0);
    if (settings.email === false) return { sent: false, reason: 'e-mail is off for this schedule' };
    if (!conditionHolds(settings.condition, matched))
      return {
        sent: false,
        reason: `the condition (matched ${settings.condition!.op} ${settings.condition!.value}) does not hold: ${matched} matched`,
      };
    const csv = run.csv ? await decodeRecords(run.csv) : '';
    const attach = settings.attach_csv !== false && csv.length <= MAX_ATTACHMENT;
    const link = deps.publicUrl
      ? `${deps.publicUrl.replace(/\/$/, '')}/api/search/history/result/${run.id}`
      : undefined;
    const q = run.query as QueryInput;
    const lines = [
      `Schedule "${schedule.name}" ran its query for ${q.time?.from} to ${q.time?.to}.`,
      `${matched} events matched; the result keeps ${run.returned ?? 0}${run.capped ? ' (capped)' : ''}.`,
      attach ? 'The result is attached as CSV.' : 'The CSV is too large to attach.',
      link ? `Result: ${link} (CSV: ${link}/csv)` : `Search id: ${run.id} (GET /api/search/history/result/${run.id})`,
    ];
    const result = await deps.email.notify({
      organizationId: schedule.organization_id,
      subject: `Weir: ${schedule.name}: ${matched} matching events`,
      text: lines.join('\n'),
      ...(attach
        ? {
            attachments: [
              {
                filename: `${schedule.name.replace(/[^A-Za-z0-9._-]+/g, '_')}-${run.id}.csv`,
                content_type: 'text/csv',
                content: csv,
              },
            ],
          }
        : {}),
    });
    return {
      sent: result.deliveries.length > 0,
      deliveries: result.deliveries.map((d) => ({
        id: d.id,
        address: d.address,
        status: d.status,
        ...(d.error ? { error: d.error } : {}),
      })),
      ...(result.deliveries.length === 0 ? { reason: 'the organization has no e-mail recipients' } : {}),
    };
  }

  return {
    async list(scope: Scope, organizationId: number | undefined, page: OffsetPage) {
      const { items, total } = await store.listSchedules(scope, organizationId, page);
      return { items: items.map(scheduleOut), total };
    },

    async create(actor: Actor, body: ScheduleBody) {
      const scope = scopeOf(actor);
      const query = await store.getQuery(scope, body.query_id);
      if (!query) throw errors.notFound('Saved query');
      checkTiming(body);
      const name = body.name.trim();
      if (!name) throw invalid('body/name', 'must not be blank');
      const id = newId();
      const now = clock.now();
      const row = {
        id,
        organization_id: query.organization_id,
        name,
        query_id: query.id,
        cron: body.cron ?? null,
        timezone: body.timezone ?? 'UTC',
        interval_seconds: body.interval_seconds ?? null,
        notify: { email: true, attach_csv: true, condition: null, ...body.notify } as Record<string, unknown>,
        enabled: body.enabled ?? true,
        created_by: actor.kind === 'user' ? actor.id : null,
      };
      const next = nextSlot({ ...row, created_at: now }, now);
      try {
        await store.insertSchedule({ ...row, next_run_at: next }, now);
      } catch (err) {
        if (isUniqueViolation(err))
          throw new AppError('resource.conflict', {
            detail: `A schedule named "${name}" already exists in the organization`,
            details: { field: 'name' },
          });
        throw err;
      }
      setAuditTarget({
        type: 'schedule',
        id,
        organizationId: query.organization_id,
        details: {
          name,
          query_id: query.id,
          cron: row.cron,
          interval_seconds: row.interval_seconds,
          notify: row.notify,
        },
      });
      return scheduleOut((await store.getSchedule(scope, id))!);
    },

    async remove(actor: Actor, id: string): Promise<void> {
      const row = await visible(scopeOf(actor), id);
      setAuditTarget({ type: 'schedule', id, organizationId: row.organization_id, details: { name: row.name } });
      await store.deleteSchedule(id);
    },

    async history(actor: Actor, id: string, page: OffsetPage) {
      const row = await visible(scopeOf(actor), id);
      const { items, total } = await store.listRuns({ scope: scopeOf(actor), scheduleId: row.id }, page);
      return { items: items.map(runOut), total };
    },

    /**
     * The beat's tick: each due schedule's slot becomes one run (unique per schedule and slot)
     * and its job; the schedule moves to its first slot after now (slots missed while no beat
     * ran are not run one by one: the next run covers its own range). Returns the runs made.
     */
    async tick(): Promise<number> {
      const now = clock.now();
      return deps.transaction(async () => {
        let made = 0;
        for (const s of await store.dueSchedules(now, 100)) {
          const slot = new Date(s.next_run_at);
          const saved = await store.getQuery({ global: true, organizationIds: [] }, s.query_id);
          if (saved) {
            try {
              const input: QueryInput = { ...(saved.query as QueryInput), organization_id: s.organization_id };
              const plan = planQuery(input, { now: slot, maxRangeDays: 3650, maxLimit: deps.maxRows });
              const stored = { ...input, time: { from: plan.from.toISOString(), to: plan.to.toISOString() } };
              const id = newId();
              if (
                await store.insertRun(
                  {
                    id,
                    organization_id: s.organization_id,
                    user_id: s.created_by,
                    actor: `schedule:${s.id}`,
                    kind: 'scheduled',
                    query_id: s.query_id,
                    schedule_id: s.id,
                    slot,
                    query: stored as Record<string, unknown>,
                  },
                  now,
                )
              ) {
                await deps.enqueue(id);
                made++;
              }
            } catch (err) {
              logger.warn({ err, schedule_id: s.id }, 'a schedule could not start its run');
            }
          }
          await store.advanceSchedule(s.id, slot, nextSlot(s, new Date(Math.max(now.getTime(), slot.getTime()))));
        }
        return made;
      });
    },

    /** After a scheduled run ended: the e-mail (when it completed and its condition holds). */
    async finished(run: RunRow): Promise<void> {
      if (run.kind !== 'scheduled' || !run.schedule_id || run.state !== 'completed' || run.notified) return;
      const schedule = await store.getSchedule({ global: true, organizationIds: [] }, run.schedule_id);
      if (!schedule) return;
      const notified = await notify(run, schedule);
      const alert = (schedule.notify as NotifySettings).alert;
      if (
        alert &&
        deps.alerts &&
        conditionHolds((schedule.notify as NotifySettings).condition, Number(run.matched ?? 0))
      ) {
        const rows = run.result
          ? (JSON.parse(await decodeRecords(run.result)) as { rows: { event_id: string }[] }).rows
          : [];
        const q = run.query as QueryInput;
        const detection = await deps.alerts.raise({
          organization_id: schedule.organization_id,
          schedule: { id: schedule.id, name: schedule.name },
          alert,
          run: {
            id: run.id,
            matched: Number(run.matched ?? 0),
            event_ids: rows.map((r) => r.event_id),
            from: new Date(q.time?.from ?? run.created_at),
            to: new Date(q.time?.to ?? run.created_at),
          },
          query: q,
        });
        if (detection) notified.detection_id = detection;
      }
      await store.updateRun(run.id, { notified });
      logger.info({ search_id: run.id, schedule_id: schedule.id, ...notified }, 'scheduled search finished');
    },
  };
}

export type SchedulesService = ReturnType<typeof createSchedulesService>;
