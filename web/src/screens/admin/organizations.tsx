// Organizations: paged with page and size (the total comes in X-Total-Count); platform
// administrators create them; organization administrators rename and (de)activate theirs.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, call, callWithHeaders } from '../../api/client';
import { useSession } from '../../session';
import { Badge, DataTable, ErrorNote, Field, PageHeader, Pager, Time } from '../../ui/kit';

const SIZE = 25;

export default function Organizations() {
  const { can, profile } = useSession();
  const client = useQueryClient();
  const [offset, setOffset] = useState(0);
  const [name, setName] = useState('');
  const list = useQuery({
    queryKey: ['organizations', offset],
    queryFn: () =>
      callWithHeaders(api.GET('/api/organizations/', { params: { query: { page: offset / SIZE + 1, size: SIZE } } })),
  });
  const create = useMutation({
    mutationFn: () => call(api.POST('/api/organizations/', { body: { name } })),
    onSuccess: () => {
      setName('');
      void client.invalidateQueries({ queryKey: ['organizations'] });
    },
  });
  const toggle = useMutation({
    mutationFn: (o: { id: number; is_active: boolean }) =>
      call(
        api.PUT('/api/organizations/{org_id}', {
          params: { path: { org_id: o.id } },
          body: { is_active: !o.is_active },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['organizations'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  const total = Number(list.data?.headers.get('x-total-count') ?? list.data?.data.length ?? 0);
  const manage = can('user.manage');
  return (
    <>
      <PageHeader title="Organizations" />
      {manage && profile.global ? (
        <form className="row panel" onSubmit={submit} aria-label="Create an organization">
          <Field label="New organization">
            {(id) => <input id={id} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />}
          </Field>
          <button type="submit" className="primary" disabled={create.isPending}>
            Create organization
          </button>
        </form>
      ) : null}
      <ErrorNote error={list.error ?? create.error ?? toggle.error} />
      <DataTable
        caption="Organizations"
        rows={list.data?.data ?? []}
        rowKey={(o) => o.id}
        columns={[
          { header: 'Id', className: 'num', cell: (o) => o.id },
          { header: 'Name', cell: (o) => o.name },
          { header: 'Active', cell: (o) => <Badge value={o.is_active ? 'active' : 'inactive'} /> },
          { header: 'Retention', cell: (o) => `${o.retention_days} days` },
          { header: 'Created', cell: (o) => <Time value={o.created_at} /> },
          ...(manage
            ? [
                {
                  header: 'Actions',
                  cell: (o: { id: number; is_active: boolean; name: string }) => (
                    <button type="button" onClick={() => toggle.mutate(o)}>
                      {o.is_active ? 'Deactivate' : 'Activate'} {o.name}
                    </button>
                  ),
                },
              ]
            : []),
        ]}
      />
      <Pager label="Organizations" total={total} limit={SIZE} offset={offset} onOffset={setOffset} />
    </>
  );
}
