// Schedules (docs/search.md "Saved queries and schedules"): a saved query run on a cron
// expression or an interval, its result e-mailed to the organization's recipients when a
// condition on the matching events holds, optionally raising a detection. Listed paged on the
// server with the next run and the last run's state; created from a saved query; deleted with
// a confirmation (query.save only); each schedule's runs open in the search's result view.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, call, type ApiError, type In, type Ok } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { formatNumber } from '../../ui/format';
import { Badge, DataTable, Dialog, ErrorNote, Field, Pager, Time } from '../../ui/kit';
import { SEVERITIES } from '../detections/labels';

const PAGE = 10;

type Schedule = Ok<'schedules.list'>['items'][number];
type Body = In<'schedules.create'>;
type Op = 'gt' | 'gte' | 'lt' | 'lte' | 'eq' | 'ne';

const OPS: [Op, string][] = [
  ['gt', 'more than'],
  ['gte', 'at least'],
  ['lt', 'fewer than'],
  ['lte', 'at most'],
  ['eq', 'exactly'],
  ['ne', 'other than'],
];

/** How often a schedule runs, in words. */
export function cadence(s: Pick<Schedule, 'cron' | 'timezone' | 'interval_seconds'>): string {
  if (s.cron) return `cron ${s.cron} (${s.timezone})`;
  const n = s.interval_seconds ?? 0;
  if (n % 86_400 === 0) return `every ${n / 86_400} d`;
  if (n % 3_600 === 0) return `every ${n / 3_600} h`;
  if (n % 60 === 0) return `every ${n / 60} min`;
  return `every ${n} s`;
}

/** The saved query a schedule runs, by its name (cached per query). */
function QueryName({ id }: { id: string }) {
  const q = useQuery({
    queryKey: ['saved-query', id],
    queryFn: () => call(api.GET('/api/queries/{query_id}', { params: { path: { query_id: id } } })),
    staleTime: 60_000,
  });
  return <span>{q.data?.name ?? (q.error ? 'unknown query' : '…')}</span>;
}

/** The state of a schedule's newest run, or "never run". */
function LastRun({ id }: { id: string }) {
  const last = useQuery({
    queryKey: ['schedule-history', id, 'last'],
    queryFn: () =>
      call(
        api.GET('/api/schedules/{sched_id}/history', {
          params: { path: { sched_id: id }, query: { limit: 1, offset: 0 } },
        }),
      ),
    refetchInterval: (q) =>
      q.state.data?.items.some((r) => r.state === 'queued' || r.state === 'running') ? 2000 : false,
  });
  if (last.error) return <span className="hint">unknown</span>;
  if (!last.data) return <span>…</span>;
  const run = last.data.items[0];
  return run ? (
    <span className="row">
      <Badge value={run.state} /> <Time value={run.created_at} />
    </span>
  ) : (
    <Badge value="never_run" />
  );
}

export function Schedules({ onOpen }: { onOpen: (searchId: string) => void }) {
  const { can } = useSession();
  const org = useOrgFilter();
  const client = useQueryClient();
  const [offset, setOffset] = useState(0);
  const [creating, setCreating] = useState(false);
  const [history, setHistory] = useState<Schedule>();
  const list = useQuery({
    queryKey: ['schedules', org, offset],
    queryFn: () => call(api.GET('/api/schedules/', { params: { query: { ...org, limit: PAGE, offset } } })),
  });
  const remove = useMutation({
    mutationFn: (id: string) => call(api.DELETE('/api/schedules/{sched_id}', { params: { path: { sched_id: id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['schedules'] }),
  });
  const writable = can('query.save');
  return (
    <section className="panel" aria-labelledby="schedules">
      <h2 id="schedules">Schedules</h2>
      {writable ? (
        <p>
          <button type="button" onClick={() => setCreating(true)}>
            New schedule
          </button>
        </p>
      ) : null}
      <ErrorNote error={list.error ?? remove.error} />
      <DataTable
        caption="Schedules"
        rows={list.data?.items ?? []}
        rowKey={(s) => s.id}
        empty="No schedule yet."
        columns={[
          { header: 'Name', cell: (s) => <strong>{s.name}</strong> },
          { header: 'Query', cell: (s) => <QueryName id={s.query_id} /> },
          { header: 'Cadence', cell: (s) => <code>{cadence(s)}</code> },
          {
            header: 'Next run',
            cell: (s) => (s.enabled ? <Time value={s.next_run_at} /> : <Badge value="disabled" />),
          },
          { header: 'Last run', cell: (s) => <LastRun id={s.id} /> },
          {
            header: 'Actions',
            cell: (s) => (
              <span className="row">
                <button type="button" onClick={() => setHistory(s)} aria-label={`History of ${s.name}`}>
                  History
                </button>
                {writable ? (
                  <button
                    type="button"
                    className="danger"
                    disabled={remove.isPending}
                    onClick={() =>
                      window.confirm(`Delete the schedule ${s.name}? Its runs stay in the history.`) &&
                      remove.mutate(s.id)
                    }
                    aria-label={`Delete ${s.name}`}
                  >
                    Delete
                  </button>
                ) : null}
              </span>
            ),
          },
        ]}
      />
      {list.data ? (
        <Pager label="Schedules" total={list.data.total} limit={PAGE} offset={offset} onOffset={setOffset} />
      ) : null}
      <Dialog title="New schedule" open={creating} onClose={() => setCreating(false)}>
        <NewSchedule
          onCreated={() => {
            setCreating(false);
            setOffset(0);
            void client.invalidateQueries({ queryKey: ['schedules'] });
          }}
        />
      </Dialog>
      <Dialog
        title={`Runs of ${history?.name ?? ''}`}
        open={history !== undefined}
        onClose={() => setHistory(undefined)}
      >
        {history ? (
          <ScheduleHistory
            schedule={history}
            onOpen={(id) => {
              setHistory(undefined);
              onOpen(id);
            }}
          />
        ) : null}
      </Dialog>
    </section>
  );
}

/** What a run's e-mail (and alert) did: `notified` as the API records it. */
function notifiedText(n: unknown): string {
  if (!n || typeof n !== 'object') return '—';
  const v = n as { sent?: boolean; reason?: string; detection_id?: string };
  const parts = [v.sent ? 'e-mailed' : `not e-mailed${v.reason ? `: ${v.reason}` : ''}`];
  if (v.detection_id) parts.push('detection raised');
  return parts.join('; ');
}

function ScheduleHistory({ schedule, onOpen }: { schedule: Schedule; onOpen: (searchId: string) => void }) {
  const [offset, setOffset] = useState(0);
  const runs = useQuery({
    queryKey: ['schedule-history', schedule.id, offset],
    queryFn: () =>
      call(
        api.GET('/api/schedules/{sched_id}/history', {
          params: { path: { sched_id: schedule.id }, query: { limit: PAGE, offset } },
        }),
      ),
    refetchInterval: (q) =>
      q.state.data?.items.some((r) => r.state === 'queued' || r.state === 'running') ? 2000 : false,
  });
  return (
    <>
      <p className="hint">
        {cadence(schedule)}; next run <Time value={schedule.next_run_at} />.
      </p>
      <ErrorNote error={runs.error} />
      <DataTable
        caption={`Runs of ${schedule.name}`}
        rows={runs.data?.items ?? []}
        rowKey={(r) => r.id}
        empty="No run yet."
        columns={[
          { header: 'When', cell: (r) => <Time value={r.created_at} /> },
          { header: 'State', cell: (r) => <Badge value={r.state} /> },
          { header: 'Matched', className: 'num', cell: (r) => formatNumber(r.matched) },
          { header: 'Notified', cell: (r) => notifiedText(r.notified) },
          {
            header: 'Actions',
            cell: (r) =>
              r.result_available ? (
                <button
                  type="button"
                  onClick={() => onOpen(r.id)}
                  aria-label={`Open result of the run of ${new Date(r.created_at).toISOString()}`}
                >
                  Open result
                </button>
              ) : (
                <span className="hint">{r.error ?? 'result expired'}</span>
              ),
          },
        ]}
      />
      {runs.data ? (
        <Pager
          label={`Runs of ${schedule.name}`}
          total={runs.data.total}
          limit={PAGE}
          offset={offset}
          onOffset={setOffset}
        />
      ) : null}
    </>
  );
}

interface Form {
  name: string;
  queryId: string;
  kind: 'cron' | 'interval';
  cron: string;
  timezone: string;
  minutes: string;
  email: boolean;
  attachCsv: boolean;
  op: Op | '';
  value: string;
  alert: boolean;
  severity: number;
  title: string;
  tactics: string;
  techniques: string;
}

const INITIAL: Form = {
  name: '',
  queryId: '',
  kind: 'cron',
  cron: '0 8 * * 1-5',
  timezone: 'UTC',
  minutes: '60',
  email: true,
  attachCsv: true,
  op: 'gt',
  value: '0',
  alert: false,
  severity: 3,
  title: '',
  tactics: '',
  techniques: '',
};

const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** The form as the API's body. */
export function toBody(f: Form): Body {
  const mitre = {
    ...(list(f.tactics).length ? { tactics: list(f.tactics) } : {}),
    ...(list(f.techniques).length ? { techniques: list(f.techniques) } : {}),
  };
  return {
    name: f.name.trim(),
    query_id: f.queryId,
    ...(f.kind === 'cron'
      ? { cron: f.cron.trim(), timezone: f.timezone.trim() || 'UTC' }
      : { interval_seconds: Math.round(Number(f.minutes) * 60) }),
    notify: {
      email: f.email,
      attach_csv: f.attachCsv,
      condition: f.op ? { op: f.op, value: Number(f.value) } : null,
      alert: f.alert
        ? {
            severity_id: f.severity,
            ...(f.title.trim() ? { title: f.title.trim() } : {}),
            ...(Object.keys(mitre).length ? { mitre } : {}),
          }
        : null,
    },
  };
}

function NewSchedule({ onCreated }: { onCreated: () => void }) {
  const org = useOrgFilter();
  const [form, setForm] = useState<Form>(INITIAL);
  const set = (patch: Partial<Form>) => setForm((f) => ({ ...f, ...patch }));
  const queries = useQuery({
    queryKey: ['saved-queries', org, 'all'],
    queryFn: () => call(api.GET('/api/queries/', { params: { query: { ...org, limit: 100, offset: 0 } } })),
  });
  const create = useMutation<Schedule, ApiError, Body>({
    mutationFn: (body) => call(api.POST('/api/schedules/', { body })),
    onSuccess: onCreated,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate(toBody(form));
  };
  const saved = queries.data?.items ?? [];
  return (
    <form onSubmit={submit} aria-label="New schedule">
      <ErrorNote error={queries.error} />
      <Field label="Name">
        {(id) => (
          <input id={id} required maxLength={200} value={form.name} onChange={(e) => set({ name: e.target.value })} />
        )}
      </Field>
      <Field
        label="Saved query"
        hint={
          saved.length === 0 && queries.data
            ? 'Save a query first: a schedule runs a saved query.'
            : "The schedule belongs to the query's organization."
        }
      >
        {(id, hint) => (
          <select
            id={id}
            aria-describedby={hint}
            required
            value={form.queryId}
            onChange={(e) => set({ queryId: e.target.value })}
          >
            <option value="">Choose a saved query</option>
            {saved.map((q) => (
              <option key={q.id} value={q.id}>
                {q.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Runs">
        {(id) => (
          <select id={id} value={form.kind} onChange={(e) => set({ kind: e.target.value as Form['kind'] })}>
            <option value="cron">On a cron expression</option>
            <option value="interval">Every few minutes</option>
          </select>
        )}
      </Field>
      {form.kind === 'cron' ? (
        <div className="row">
          <Field
            label="Cron expression"
            hint="Five fields (or six, seconds first), e.g. 0 8 * * 1-5; at most every minute."
          >
            {(id, hint) => (
              <input
                id={id}
                aria-describedby={hint}
                required
                maxLength={100}
                value={form.cron}
                onChange={(e) => set({ cron: e.target.value })}
              />
            )}
          </Field>
          <Field label="Time zone" hint="IANA, e.g. Europe/Paris">
            {(id, hint) => (
              <input
                id={id}
                aria-describedby={hint}
                maxLength={64}
                value={form.timezone}
                onChange={(e) => set({ timezone: e.target.value })}
              />
            )}
          </Field>
        </div>
      ) : (
        <Field label="Every (minutes)" hint="From the schedule's creation; at least 1.">
          {(id, hint) => (
            <input
              id={id}
              aria-describedby={hint}
              type="number"
              required
              min={1}
              max={525_600}
              step={1}
              value={form.minutes}
              onChange={(e) => set({ minutes: e.target.value })}
            />
          )}
        </Field>
      )}
      <fieldset>
        <legend>Notify</legend>
        <label>
          <input type="checkbox" checked={form.email} onChange={(e) => set({ email: e.target.checked })} /> E-mail the
          result to the organization's recipients
        </label>
        <label>
          <input
            type="checkbox"
            checked={form.attachCsv}
            disabled={!form.email}
            onChange={(e) => set({ attachCsv: e.target.checked })}
          />{' '}
          Attach the CSV
        </label>
        <div className="row">
          <Field label="When matching events number">
            {(id) => (
              <select id={id} value={form.op} onChange={(e) => set({ op: e.target.value as Form['op'] })}>
                <option value="">any (always)</option>
                {OPS.map(([op, label]) => (
                  <option key={op} value={op}>
                    {label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {form.op ? (
            <Field label="Events">
              {(id) => (
                <input
                  id={id}
                  type="number"
                  required
                  step="any"
                  value={form.value}
                  onChange={(e) => set({ value: e.target.value })}
                />
              )}
            </Field>
          ) : null}
        </div>
        <label>
          <input type="checkbox" checked={form.alert} onChange={(e) => set({ alert: e.target.checked })} /> Raise a
          detection when it holds
        </label>
        {form.alert ? (
          <div className="row">
            <Field label="Severity">
              {(id) => (
                <select id={id} value={form.severity} onChange={(e) => set({ severity: Number(e.target.value) })}>
                  {SEVERITIES.map(([n, label]) => (
                    <option key={n} value={n}>
                      {label}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="Detection title" hint="Empty: Scheduled search: <name>">
              {(id, hint) => (
                <input
                  id={id}
                  aria-describedby={hint}
                  maxLength={300}
                  value={form.title}
                  onChange={(e) => set({ title: e.target.value })}
                />
              )}
            </Field>
            <Field label="MITRE tactics" hint="Comma-separated, e.g. TA0006">
              {(id, hint) => (
                <input
                  id={id}
                  aria-describedby={hint}
                  value={form.tactics}
                  onChange={(e) => set({ tactics: e.target.value })}
                />
              )}
            </Field>
            <Field label="MITRE techniques" hint="Comma-separated, e.g. T1110">
              {(id, hint) => (
                <input
                  id={id}
                  aria-describedby={hint}
                  value={form.techniques}
                  onChange={(e) => set({ techniques: e.target.value })}
                />
              )}
            </Field>
          </div>
        ) : null}
      </fieldset>
      <ErrorNote error={create.error} />
      <button type="submit" disabled={create.isPending}>
        Create schedule
      </button>
    </form>
  );
}
