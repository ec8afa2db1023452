// Quarantine triage: the events normalization could not map, filtered and paged on the
// server; inspect one, reprocess or discard the selected ones or every match (in steps of
// 500 with a progress bar).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { inBatches } from '../../ui/batches';
import {
  Badge,
  DataTable,
  Dialog,
  ErrorNote,
  Field,
  Json,
  Notice,
  PageHeader,
  Pager,
  Progress,
  Time,
} from '../../ui/kit';

const LIMIT = 25;
const BULK = 500;

export default function Quarantine() {
  const org = useOrgFilter();
  const { can } = useSession();
  const client = useQueryClient();
  const [offset, setOffset] = useState(0);
  const [stream, setStream] = useState('');
  const [status, setStatus] = useState<'quarantined' | 'reprocessed'>('quarantined');
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [inspect, setInspect] = useState<string>();
  const [progress, setProgress] = useState<{ done: number; total: number; label: string }>();
  const [result, setResult] = useState<string>();
  const filters = { ...org, status, ...(stream ? { stream } : {}) };
  const list = useQuery({
    queryKey: ['quarantine', filters, offset],
    queryFn: () => call(api.GET('/api/quarantine', { params: { query: { ...filters, limit: LIMIT, offset } } })),
  });
  const event = useQuery({
    queryKey: ['quarantine-event', inspect],
    queryFn: () => call(api.GET('/api/quarantine/{event_id}', { params: { path: { event_id: inspect ?? '' } } })),
    enabled: inspect !== undefined,
  });

  const bulk = useMutation({
    mutationFn: async ({ action, all }: { action: 'reprocess' | 'discard'; all: boolean }) => {
      const ids = all
        ? (await call(api.GET('/api/quarantine/bulk/ids', { params: { query: filters } }))).ids
        : [...selected];
      const label = action === 'reprocess' ? 'Reprocessing' : 'Discarding';
      const answers = await inBatches(
        ids,
        BULK,
        (chunk) =>
          action === 'reprocess'
            ? call(api.POST('/api/quarantine/bulk/reprocess', { body: { ids: chunk } })).then((r) => ({
                ok: r.reprocessed,
                failed: r.failed + r.errors.length,
              }))
            : call(api.POST('/api/quarantine/bulk/discard', { body: { ids: chunk } })).then((r) => ({
                ok: r.discarded,
                failed: r.errors.length,
              })),
        (done, total) => setProgress({ done, total, label }),
      );
      const ok = answers.reduce((n, a) => n + a.ok, 0);
      const failed = answers.reduce((n, a) => n + a.failed, 0);
      return `${action === 'reprocess' ? 'Reprocessed' : 'Discarded'} ${ok} of ${ids.length}${failed ? `; ${failed} failed again or were not found` : ''}.`;
    },
    onSuccess: (text) => {
      setResult(text);
      setSelected(new Set());
      void client.invalidateQueries({ queryKey: ['quarantine'] });
      void client.invalidateQueries({ queryKey: ['dashboard'] });
    },
    onSettled: () => setProgress(undefined),
  });

  const items = list.data?.items ?? [];
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  };
  const run = (action: 'reprocess' | 'discard', all: boolean) => {
    if (
      action === 'discard' &&
      !window.confirm(
        `Discard ${all ? `all ${list.data?.total ?? 0} matching` : selected.size} events? They are removed for good.`,
      )
    )
      return;
    setResult(undefined);
    bulk.mutate({ action, all });
  };

  return (
    <>
      <PageHeader title="Quarantine">
        {can('quarantine.discard') && status === 'quarantined' ? (
          <>
            <button
              type="button"
              disabled={selected.size === 0 || bulk.isPending}
              onClick={() => run('reprocess', false)}
            >
              Reprocess selected ({selected.size})
            </button>
            <button
              type="button"
              className="danger"
              disabled={selected.size === 0 || bulk.isPending}
              onClick={() => run('discard', false)}
            >
              Discard selected
            </button>
            <button
              type="button"
              className="primary"
              disabled={!list.data?.total || bulk.isPending}
              onClick={() => run('reprocess', true)}
            >
              Reprocess all matching
            </button>
          </>
        ) : null}
      </PageHeader>
      <div className="row">
        <Field label="Stream">
          {(id) => <input id={id} value={stream} onChange={(e) => (setStream(e.target.value), setOffset(0))} />}
        </Field>
        <Field label="Status">
          {(id) => (
            <select id={id} value={status} onChange={(e) => (setStatus(e.target.value as typeof status), setOffset(0))}>
              <option value="quarantined">Quarantined</option>
              <option value="reprocessed">Reprocessed</option>
            </select>
          )}
        </Field>
      </div>
      {progress ? (
        <Progress
          value={progress.done}
          max={progress.total}
          label={`${progress.label} ${progress.done} of ${progress.total}`}
        />
      ) : null}
      {result ? <Notice>{result}</Notice> : null}
      <ErrorNote error={list.error ?? bulk.error} />
      <DataTable
        caption="Quarantined events"
        rows={items}
        rowKey={(q) => q.id}
        empty="Nothing in quarantine."
        columns={[
          ...(can('quarantine.discard')
            ? [
                {
                  header: 'Select',
                  cell: (q: (typeof items)[number]) => (
                    <input
                      type="checkbox"
                      aria-label={`Select event ${q.id}`}
                      checked={selected.has(q.id)}
                      onChange={(e) => toggle(q.id, e.target.checked)}
                    />
                  ),
                },
              ]
            : []),
          { header: 'Received', cell: (q) => <Time value={q.received_at} /> },
          { header: 'Integration', cell: (q) => q.integration_id },
          { header: 'Stream', cell: (q) => q.stream },
          {
            header: 'Error',
            cell: (q) => (
              <>
                <Badge value={q.error_kind} /> {q.error_detail}
              </>
            ),
          },
          { header: 'Attempts', className: 'num', cell: (q) => q.attempts },
          {
            header: 'Event',
            cell: (q) => (
              <button type="button" onClick={() => setInspect(q.id)}>
                Inspect
              </button>
            ),
          },
        ]}
      />
      {list.data ? (
        <Pager label="Quarantine" total={list.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />
      ) : null}
      <Dialog title="Quarantined event" open={inspect !== undefined} onClose={() => setInspect(undefined)}>
        <ErrorNote error={event.error} />
        {event.data ? (
          <>
            <p>
              <Badge value={event.data.error_kind} /> {event.data.error_detail}
            </p>
            <Json label="Raw event" value={event.data.raw} />
          </>
        ) : null}
      </Dialog>
    </>
  );
}
