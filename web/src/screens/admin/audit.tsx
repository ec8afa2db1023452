// The audit trail: filtered and paged on the server, exported as CSV with the same filters.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { useOrgFilter } from '../../session';
import { Badge, DataTable, ErrorNote, Field, PageHeader, Pager, Time } from '../../ui/kit';

const LIMIT = 50;

export default function Audit() {
  const org = useOrgFilter();
  const [offset, setOffset] = useState(0);
  const [operation, setOperation] = useState('');
  const [outcome, setOutcome] = useState<'' | 'success' | 'failed' | 'denied' | 'error'>('');
  const [from, setFrom] = useState('');
  const filters = {
    ...org,
    ...(operation ? { operation_id: operation } : {}),
    ...(outcome ? { outcome } : {}),
    ...(from ? { from: new Date(from).toISOString() } : {}),
  };
  const list = useQuery({
    queryKey: ['audit', filters, offset],
    queryFn: () => call(api.GET('/api/history/audit', { params: { query: { ...filters, limit: LIMIT, offset } } })),
  });
  const csv = `/api/history/audit/csv?${new URLSearchParams(Object.entries(filters).map(([k, v]) => [k, String(v)])).toString()}`;
  return (
    <>
      <PageHeader title="Audit trail">
        <a className="button" href={csv} download="audit.csv">
          Download CSV
        </a>
      </PageHeader>
      <div className="row">
        <Field label="Operation">
          {(id) => (
            <input
              id={id}
              placeholder="e.g. routes.create"
              value={operation}
              onChange={(e) => (setOperation(e.target.value), setOffset(0))}
            />
          )}
        </Field>
        <Field label="Outcome">
          {(id) => (
            <select
              id={id}
              value={outcome}
              onChange={(e) => (setOutcome(e.target.value as typeof outcome), setOffset(0))}
            >
              <option value="">Any</option>
              {['success', 'failed', 'denied', 'error'].map((o) => (
                <option key={o}>{o}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Since">
          {(id) => (
            <input
              id={id}
              type="datetime-local"
              value={from}
              onChange={(e) => (setFrom(e.target.value), setOffset(0))}
            />
          )}
        </Field>
      </div>
      <ErrorNote error={list.error} />
      <DataTable
        caption="Audit entries"
        rows={list.data?.items ?? []}
        rowKey={(e) => e.seq}
        columns={[
          { header: 'When', cell: (e) => <Time value={e.at} /> },
          { header: 'Who', cell: (e) => e.actor_name ?? e.actor_kind },
          { header: 'Operation', cell: (e) => <code>{e.operation_id}</code> },
          { header: 'Target', cell: (e) => (e.target_type ? `${e.target_type} ${e.target_id ?? ''}` : '') },
          { header: 'Outcome', cell: (e) => <Badge value={e.outcome === 'success' ? 'ok' : e.outcome} /> },
          { header: 'Organization', cell: (e) => e.organization_id ?? 'platform' },
        ]}
      />
      {list.data ? (
        <Pager label="Audit" total={list.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />
      ) : null}
    </>
  );
}
