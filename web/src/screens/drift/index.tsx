// Drift triage: vendor fields a mapping does not read; mark them mapped or ignored.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { formatNumber } from '../../ui/format';
import { Badge, DataTable, ErrorNote, Field, PageHeader, Pager, Time } from '../../ui/kit';

const LIMIT = 50;

export default function Drift() {
  const org = useOrgFilter();
  const { can } = useSession();
  const client = useQueryClient();
  const [offset, setOffset] = useState(0);
  const [status, setStatus] = useState<'new' | 'ignored' | 'mapped'>('new');
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const list = useQuery({
    queryKey: ['drift', org, status, offset],
    queryFn: () => call(api.GET('/api/drift', { params: { query: { ...org, status, limit: LIMIT, offset } } })),
  });
  const mark = useMutation({
    mutationFn: (action: 'ignore' | 'mark_mapped') =>
      call(
        api.POST(action === 'ignore' ? '/api/drift/bulk/ignore' : '/api/drift/bulk/mark_mapped', {
          body: { ids: [...selected] },
        }),
      ),
    onSuccess: () => {
      setSelected(new Set());
      void client.invalidateQueries({ queryKey: ['drift'] });
    },
  });
  const items = list.data?.items ?? [];
  return (
    <>
      <PageHeader title="Drift">
        {status === 'new' && can('drift.mark_mapped') ? (
          <button type="button" disabled={selected.size === 0} onClick={() => mark.mutate('mark_mapped')}>
            Mark mapped ({selected.size})
          </button>
        ) : null}
        {status === 'new' && can('drift.ignore') ? (
          <button type="button" disabled={selected.size === 0} onClick={() => mark.mutate('ignore')}>
            Ignore ({selected.size})
          </button>
        ) : null}
      </PageHeader>
      <Field label="Status">
        {(id) => (
          <select
            id={id}
            value={status}
            onChange={(e) => (setStatus(e.target.value as typeof status), setOffset(0), setSelected(new Set()))}
          >
            <option value="new">New</option>
            <option value="ignored">Ignored</option>
            <option value="mapped">Mapped</option>
          </select>
        )}
      </Field>
      <ErrorNote error={list.error ?? mark.error} />
      <DataTable
        caption="Drift fields"
        rows={items}
        rowKey={(d) => d.id}
        empty="No drift: every field the sources send is mapped, ignored or known."
        columns={[
          ...(status === 'new' && (can('drift.ignore') || can('drift.mark_mapped'))
            ? [
                {
                  header: 'Select',
                  cell: (d: (typeof items)[number]) => (
                    <input
                      type="checkbox"
                      aria-label={`Select ${d.path}`}
                      checked={selected.has(d.id)}
                      onChange={(e) => {
                        const next = new Set(selected);
                        if (e.target.checked) next.add(d.id);
                        else next.delete(d.id);
                        setSelected(next);
                      }}
                    />
                  ),
                },
              ]
            : []),
          { header: 'Field', cell: (d) => <code>{d.path}</code> },
          { header: 'Type', cell: (d) => d.value_type },
          { header: 'Stream', cell: (d) => `${d.integration_id} / ${d.stream}` },
          { header: 'Events with it', className: 'num', cell: (d) => formatNumber(d.count) },
          { header: 'Example', cell: (d) => <code>{d.example ?? ''}</code> },
          { header: 'Status', cell: (d) => <Badge value={d.status} /> },
          { header: 'Last seen', cell: (d) => <Time value={d.last_seen_at} /> },
        ]}
      />
      {list.data ? (
        <Pager label="Drift" total={list.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />
      ) : null}
    </>
  );
}
