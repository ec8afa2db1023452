// Mapping definitions: one per platform and stream (built-in or an organization's own),
// paged and filtered on the server. A stream without a mapping has an empty definition.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call } from '../../api/client';
import { useOrgFilter } from '../../session';
import { Badge, DataTable, ErrorNote, Field, PageHeader, Pager, Time } from '../../ui/kit';

const LIMIT = 25;

export default function Mappings() {
  const org = useOrgFilter();
  const [offset, setOffset] = useState(0);
  const [stream, setStream] = useState('');
  const [builtin, setBuiltin] = useState<'' | 'true' | 'false'>('');
  const list = useQuery({
    queryKey: ['mappings', org, stream, builtin, offset],
    queryFn: () =>
      call(
        api.GET('/api/mappings', {
          params: {
            query: {
              ...org,
              limit: LIMIT,
              offset,
              ...(stream ? { stream } : {}),
              ...(builtin ? { builtin: builtin === 'true' } : {}),
            },
          },
        }),
      ),
  });
  return (
    <>
      <PageHeader title="Mappings" />
      <div className="row">
        <Field label="Stream">
          {(id) => <input id={id} value={stream} onChange={(e) => (setStream(e.target.value), setOffset(0))} />}
        </Field>
        <Field label="Kind">
          {(id) => (
            <select
              id={id}
              value={builtin}
              onChange={(e) => (setBuiltin(e.target.value as typeof builtin), setOffset(0))}
            >
              <option value="">All</option>
              <option value="false">Organizations' own</option>
              <option value="true">Built-in</option>
            </select>
          )}
        </Field>
      </div>
      <ErrorNote error={list.error} />
      <DataTable
        caption="Mapping definitions"
        rows={list.data?.items ?? []}
        rowKey={(m) => m.id}
        columns={[
          { header: 'Name', cell: (m) => <Link href={`/mappings/${m.id}`}>{m.name}</Link> },
          { header: 'Platform / stream', cell: (m) => `${m.platform} / ${m.stream}` },
          { header: 'Owner', cell: (m) => (m.builtin ? 'built-in' : `organization ${m.organization_id}`) },
          {
            header: 'Live version',
            cell: (m) => (m.live_version === null ? <Badge value="no live version" /> : `v${m.live_version.version}`),
          },
          { header: 'Versions', className: 'num', cell: (m) => m.versions_count },
          { header: 'Updated', cell: (m) => <Time value={m.updated_at} /> },
        ]}
      />
      {list.data ? (
        <Pager label="Mappings" total={list.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />
      ) : null}
    </>
  );
}
