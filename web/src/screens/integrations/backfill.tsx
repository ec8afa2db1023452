// Backfill: start a re-collection of a past window and follow its jobs with a progress bar
// (the share of the window collected, per the streams' chunk positions).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, call, type Ok } from '../../api/client';
import { useSession } from '../../session';
import { formatNumber } from '../../ui/format';
import { Badge, DataTable, ErrorNote, Field, Progress, Time } from '../../ui/kit';

type Job = Ok<'backfill.get'>;

export function jobProgress(job: Job): number {
  const from = Date.parse(job.from_ts);
  const span = Date.parse(job.to_ts) - from;
  if (job.status === 'completed') return 1;
  const streams = Object.values(job.progress);
  if (streams.length === 0 || span <= 0) return 0;
  const shares = streams.map((p) => (p.done ? 1 : Math.min(1, Math.max(0, (Date.parse(p.chunk_from) - from) / span))));
  return shares.reduce((a, b) => a + b, 0) / job.streams.length;
}

const isoLocal = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

export function Backfill({ integrationId, streams }: { integrationId: number; streams: string[] }) {
  const { can } = useSession();
  const client = useQueryClient();
  const [chosen, setChosen] = useState<string[]>([]);
  const [from, setFrom] = useState(isoLocal(new Date(Date.now() - 86_400_000)));
  const [to, setTo] = useState(isoLocal(new Date()));
  const jobs = useQuery({
    queryKey: ['backfill', integrationId],
    queryFn: () =>
      call(
        api.GET('/api/integrations/{integration_id}/backfill-jobs', {
          params: { path: { integration_id: integrationId }, query: { limit: 10 } },
        }),
      ),
    refetchInterval: (q) =>
      q.state.data?.items.some((j) => j.status === 'queued' || j.status === 'running') ? 2_000 : false,
  });
  const start = useMutation({
    // The inputs are in the user's time zone; the API takes UTC instants.
    mutationFn: () =>
      call(
        api.POST('/api/integrations/{integration_id}/backfill', {
          params: { path: { integration_id: integrationId } },
          body: {
            streams: chosen.length ? chosen : streams,
            from_ts: new Date(from).toISOString(),
            to_ts: new Date(to).toISOString(),
          },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['backfill', integrationId] }),
  });
  const cancel = useMutation({
    mutationFn: (id: string) =>
      call(api.POST('/api/backfill-jobs/{job_id}/cancel', { params: { path: { job_id: id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['backfill', integrationId] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    start.mutate();
  };
  return (
    <section className="panel" aria-labelledby="backfill">
      <h2 id="backfill">Backfill</h2>
      {can('integration.write') && streams.length > 0 ? (
        <form className="row" onSubmit={submit} aria-label="Start a backfill">
          <fieldset>
            <legend>Streams</legend>
            {streams.map((s) => (
              <label key={s}>
                <input
                  type="checkbox"
                  checked={chosen.includes(s)}
                  onChange={(e) => setChosen(e.target.checked ? [...chosen, s] : chosen.filter((x) => x !== s))}
                />{' '}
                {s}
              </label>
            ))}
            <small className="hint">None checked: every stream.</small>
          </fieldset>
          <Field label="From">
            {(id) => (
              <input id={id} type="datetime-local" required value={from} onChange={(e) => setFrom(e.target.value)} />
            )}
          </Field>
          <Field label="To">
            {(id) => (
              <input id={id} type="datetime-local" required value={to} onChange={(e) => setTo(e.target.value)} />
            )}
          </Field>
          <button type="submit" className="primary" disabled={start.isPending}>
            Start backfill
          </button>
        </form>
      ) : null}
      <ErrorNote error={start.error ?? cancel.error ?? jobs.error} />
      <DataTable
        caption="Backfill jobs"
        rows={jobs.data?.items ?? []}
        rowKey={(j) => j.id}
        empty="No backfill yet."
        columns={[
          {
            header: 'Window',
            cell: (j) => (
              <>
                <Time value={j.from_ts} /> – <Time value={j.to_ts} />
              </>
            ),
          },
          { header: 'Streams', cell: (j) => j.streams.join(', ') },
          { header: 'Status', cell: (j) => <Badge value={j.status} /> },
          {
            header: 'Progress',
            cell: (j) => (
              <Progress value={Math.round(jobProgress(j) * 100)} max={100} label={`Backfill ${j.id.slice(0, 8)}`} />
            ),
          },
          { header: 'Events', className: 'num', cell: (j) => formatNumber(j.events) },
          {
            header: 'Actions',
            cell: (j) =>
              can('integration.write') && (j.status === 'queued' || j.status === 'running') && !j.cancel_requested ? (
                <button type="button" onClick={() => cancel.mutate(j.id)}>
                  Cancel
                </button>
              ) : (
                (j.error ?? '')
              ),
          },
        ]}
      />
    </section>
  );
}
