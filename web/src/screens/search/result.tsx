// A search's result: its state while it runs (polled), then what matched, what the result
// keeps (the cap) and how long it took, the rows paged on the server, the aggregations as
// tables and bar lists, and the CSV while it is kept.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call, type Ok } from '../../api/client';
import { formatDate, formatNumber } from '../../ui/format';
import { useSession } from '../../session';
import { Badge, DataTable, Dialog, ErrorNote, Json, Pager, Progress, Stat, Time } from '../../ui/kit';

import { Replay } from './replay';

export type SearchResult = Ok<'search.result'>;
type Row = SearchResult['rows'][number];
export const PAGE = 25;

type Aggregation =
  | { type: 'count'; value: number }
  | { type: 'count_by'; fields: string[]; buckets: { key: unknown; count: number }[] }
  | { type: 'top'; field: string; values: { value: unknown; count: number }[] }
  | { type: 'histogram'; interval: string; buckets: { start: string; count: number }[] };

const text = (v: unknown) => (v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

/** A count_by bucket's key: one value per field ({"user.name": "bob"} reads "bob"). */
function bucketKey(key: unknown): string {
  return key !== null && typeof key === 'object' && !Array.isArray(key)
    ? Object.values(key).map(text).join(', ')
    : text(key);
}

/** Counts as a list of labelled bars (native <meter>, so each reads as "label: n of max"). */
function Bars({ label, items }: { label: string; items: { key: string; count: number; title?: string }[] }) {
  if (items.length === 0) return <p className="empty">No events.</p>;
  const max = Math.max(...items.map((i) => i.count), 1);
  return (
    <table className="bars">
      <caption className="visually-hidden">{label}</caption>
      <thead>
        <tr>
          <th scope="col">Value</th>
          <th scope="col" className="num">
            Events
          </th>
          <th scope="col">Share</th>
        </tr>
      </thead>
      <tbody>
        {items.map((i, n) => (
          <tr key={`${n}-${i.key}`}>
            <td title={i.title}>
              <code>{i.key}</code>
            </td>
            <td className="num">{formatNumber(i.count)}</td>
            <td>
              <meter min={0} max={max} value={i.count} aria-label={`${i.key}: ${i.count}`} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Aggregations({ items }: { items: Aggregation[] }) {
  const shown = items.filter((a) => a.type !== 'count');
  if (shown.length === 0) return null;
  return (
    <div className="grid">
      {shown.map((a, i) => {
        const title =
          a.type === 'count_by'
            ? `Count by ${a.fields.join(', ')}`
            : a.type === 'top'
              ? `Top values of ${a.field}`
              : `Histogram per ${a.interval}`;
        const bars =
          a.type === 'count_by'
            ? a.buckets.map((b) => ({ key: bucketKey(b.key), count: b.count }))
            : a.type === 'top'
              ? a.values.map((v) => ({ key: text(v.value), count: v.count }))
              : a.buckets.map((b) => ({ key: formatDate(b.start), title: b.start, count: b.count }));
        return (
          <section key={i} className="panel" aria-label={title}>
            <h3>{title}</h3>
            <Bars label={title} items={bars} />
          </section>
        );
      })}
    </div>
  );
}

function summary(row: Row): string {
  const e = row.event ?? {};
  const parts = [
    e.class_name ?? e.class_uid,
    e.activity_name,
    (e.actor as { user?: { name?: unknown } } | undefined)?.user?.name ??
      (e.user as { name?: unknown } | undefined)?.name,
    e.message,
  ];
  return parts
    .filter((p) => p !== undefined && p !== null && p !== '')
    .map(text)
    .join(' · ');
}

export function ResultView({ searchId }: { searchId: string }) {
  const client = useQueryClient();
  const { can } = useSession();
  const [offset, setOffset] = useState(0);
  const [inspect, setInspect] = useState<Row>();
  const result = useQuery({
    queryKey: ['search-result', searchId, offset],
    queryFn: () =>
      call(
        api.GET('/api/search/history/result/{search_id}', {
          params: { path: { search_id: searchId }, query: { limit: PAGE, offset } },
        }),
      ),
    refetchInterval: (q) =>
      q.state.data && (q.state.data.state === 'queued' || q.state.data.state === 'running') ? 1000 : false,
  });
  const cancel = useMutation({
    mutationFn: () => call(api.POST('/api/search/{search_id}/cancel', { params: { path: { search_id: searchId } } })),
    onSettled: () => client.invalidateQueries({ queryKey: ['search-result', searchId] }),
  });
  const r = result.data;
  if (!r) return <ErrorNote error={result.error} />;
  const running = r.state === 'queued' || r.state === 'running';
  const fields = r.rows.find((x) => x.fields)?.fields;
  const columns = fields
    ? Object.keys(fields)
        // The first column already shows the event's time, in the browser's zone.
        .filter((f) => f !== 'time')
        .map((f) => ({ header: f, cell: (row: Row) => <code>{text(row.fields?.[f])}</code> }))
    : [
        { header: 'Stream', cell: (row: Row) => row.stream },
        { header: 'Event', cell: (row: Row) => summary(row) },
      ];
  const count = (r.aggregations as Aggregation[]).find((a) => a.type === 'count');
  return (
    <section className="panel" aria-labelledby="search-result" data-testid="search-result">
      <h2 id="search-result">Result</h2>
      <ErrorNote error={result.error ?? cancel.error} />
      <dl className="stats">
        <Stat label="State" value={<Badge value={r.state} />} />
        <Stat label="Matched" value={formatNumber(r.matched ?? count?.value)} />
        <Stat
          label="Rows kept"
          value={`${formatNumber(r.returned)} of at most ${formatNumber(r.cap)}`}
          tone={r.capped ? 'warn' : undefined}
        />
        <Stat label="Took" value={r.took_ms === null ? '—' : `${formatNumber(r.took_ms)} ms`} />
      </dl>
      {r.capped ? (
        <p className="hint">More events matched than the result keeps: raise the cap or narrow the query.</p>
      ) : null}
      {running ? (
        <div className="row">
          <Progress value={r.progress} max={1} label="Searching" />
          <button type="button" onClick={() => cancel.mutate()} disabled={cancel.isPending}>
            Cancel search
          </button>
        </div>
      ) : null}
      {r.error ? <p className="error">{r.error}</p> : null}
      {r.state === 'completed' ? (
        <>
          <div className="row">
            <span className="hint">
              Run <Time value={r.created_at} />; result kept until <Time value={r.result_expires_at} />.
            </span>
            {r.csv_available ? (
              <a className="button" href={`/api/search/history/result/${r.id}/csv`} download={`search-${r.id}.csv`}>
                Download CSV
              </a>
            ) : (
              <span className="hint">The CSV has expired.</span>
            )}
          </div>
          <Aggregations items={r.aggregations as Aggregation[]} />
          <DataTable
            caption="Matching events"
            rows={r.rows}
            rowKey={(row) => row.event_id}
            empty="No event matched."
            columns={[
              { header: 'Time', cell: (row) => <Time value={row.time} /> },
              ...columns,
              {
                header: 'Details',
                cell: (row) => (
                  <button type="button" onClick={() => setInspect(row)}>
                    View event
                  </button>
                ),
              },
            ]}
          />
          <Pager label="Result rows" total={r.total} limit={PAGE} offset={offset} onOffset={setOffset} />
          {can('user.manage') ? <Replay run={r} /> : null}
        </>
      ) : null}
      <Dialog title="Event" open={inspect !== undefined} onClose={() => setInspect(undefined)}>
        {inspect ? (
          <>
            <p className="hint">
              Event <code>{inspect.event_id}</code> · integration {inspect.integration_id} · stream {inspect.stream}
            </p>
            <Json label="The event" value={inspect.event ?? inspect.fields ?? {}} />
          </>
        ) : null}
      </Dialog>
    </section>
  );
}
