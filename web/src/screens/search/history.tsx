// The search history (your runs, newest first, paged on the server) and the saved queries
// of the organization: reopen a past result, load a past or saved query into the form,
// run a saved query.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { useOrgFilter } from '../../session';
import { formatNumber } from '../../ui/format';
import { Badge, DataTable, ErrorNote, Pager, Time } from '../../ui/kit';

const PAGE = 10;

/** What a stored query says, in one line. */
export function queryText(q: unknown): string {
  const d = (q ?? {}) as { query?: string; where?: unknown; time?: { last?: string; from?: string; to?: string } };
  const condition = d.query ?? (d.where !== undefined ? JSON.stringify(d.where) : 'every event');
  return condition || 'every event';
}

export function SearchHistory({ onOpen, onEdit }: { onOpen: (id: string) => void; onEdit: (query: unknown) => void }) {
  const [offset, setOffset] = useState(0);
  const history = useQuery({
    queryKey: ['search-history', offset],
    queryFn: () => call(api.GET('/api/search/history', { params: { query: { limit: PAGE, offset } } })),
    refetchInterval: (q) =>
      q.state.data?.items.some((r) => r.state === 'queued' || r.state === 'running') ? 2000 : false,
  });
  return (
    <section className="panel" aria-labelledby="search-history">
      <h2 id="search-history">History</h2>
      <ErrorNote error={history.error} />
      <DataTable
        caption="Your searches"
        rows={history.data?.items ?? []}
        rowKey={(r) => r.id}
        empty="No search yet."
        columns={[
          { header: 'When', cell: (r) => <Time value={r.created_at} /> },
          { header: 'Query', cell: (r) => <code>{queryText(r.query)}</code> },
          { header: 'State', cell: (r) => <Badge value={r.state} /> },
          { header: 'Matched', className: 'num', cell: (r) => formatNumber(r.matched) },
          {
            header: 'Actions',
            cell: (r) => (
              <span className="row">
                {r.result_available ? (
                  <button
                    type="button"
                    onClick={() => onOpen(r.id)}
                    aria-label={`Open result of the search of ${new Date(r.created_at).toISOString()}`}
                  >
                    Open result
                  </button>
                ) : (
                  <span className="hint">result expired</span>
                )}
                <button type="button" onClick={() => onEdit(r.query)}>
                  Load query
                </button>
              </span>
            ),
          },
        ]}
      />
      {history.data ? (
        <Pager label="History" total={history.data.total} limit={PAGE} offset={offset} onOffset={setOffset} />
      ) : null}
    </section>
  );
}

export function SavedQueries({
  onRun,
  onEdit,
}: {
  onRun: (queryId: string) => void;
  onEdit: (query: unknown) => void;
}) {
  const org = useOrgFilter();
  const [offset, setOffset] = useState(0);
  const saved = useQuery({
    queryKey: ['saved-queries', org, offset],
    queryFn: () => call(api.GET('/api/queries/', { params: { query: { ...org, limit: PAGE, offset } } })),
  });
  return (
    <section className="panel" aria-labelledby="saved-queries">
      <h2 id="saved-queries">Saved queries</h2>
      <ErrorNote error={saved.error} />
      <DataTable
        caption="Saved queries"
        rows={saved.data?.items ?? []}
        rowKey={(q) => q.id}
        empty="No saved query yet."
        columns={[
          { header: 'Name', cell: (q) => <strong>{q.name}</strong> },
          { header: 'Query', cell: (q) => <code>{queryText(q.query)}</code> },
          { header: 'Updated', cell: (q) => <Time value={q.updated_at} /> },
          {
            header: 'Actions',
            cell: (q) => (
              <span className="row">
                <button type="button" onClick={() => onRun(q.id)} aria-label={`Run ${q.name}`}>
                  Run
                </button>
                <button type="button" onClick={() => onEdit(q.query)} aria-label={`Load ${q.name}`}>
                  Load
                </button>
              </span>
            ),
          },
        ]}
      />
      {saved.data ? (
        <Pager label="Saved queries" total={saved.data.total} limit={PAGE} offset={offset} onOffset={setOffset} />
      ) : null}
    </section>
  );
}
