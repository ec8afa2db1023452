// The caller's own API tokens: create (the value shown once), list by prefix, revoke.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, call } from '../../api/client';
import { DataTable, ErrorNote, Field, PageHeader, Time } from '../../ui/kit';
import { TokenOnce } from './token-created';

export default function Tokens() {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<string>();
  const tokens = useQuery({ queryKey: ['tokens'], queryFn: () => call(api.GET('/api/v1/tokens')) });
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/tokens', {
          body: { name, ...(expires ? { expires_at: new Date(expires).toISOString() } : { is_eternal: true }) },
        }),
      ),
    onSuccess: (t) => {
      setCreated(t.token);
      setName('');
      void client.invalidateQueries({ queryKey: ['tokens'] });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: number) => call(api.DELETE('/api/v1/tokens/{token_id}', { params: { path: { token_id: id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['tokens'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <>
      <PageHeader title="API tokens" />
      <form className="row panel" onSubmit={submit} aria-label="New API token">
        <Field label="Token name">
          {(id) => <input id={id} required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Expires (empty: never)">
          {(id) => <input id={id} type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />}
        </Field>
        <button type="submit" className="primary" disabled={create.isPending}>
          Create token
        </button>
      </form>
      {created ? <TokenOnce token={created} /> : null}
      <ErrorNote error={tokens.error ?? create.error ?? revoke.error} />
      <DataTable
        caption="Your API tokens"
        rows={tokens.data ?? []}
        rowKey={(t) => t.id}
        columns={[
          { header: 'Name', cell: (t) => t.name },
          { header: 'Prefix', cell: (t) => <code>{t.token_prefix}</code> },
          { header: 'Expires', cell: (t) => (t.is_eternal ? 'never' : <Time value={t.expires_at} />) },
          { header: 'Last used', cell: (t) => <Time value={t.last_used_at} /> },
          {
            header: 'Actions',
            cell: (t) => (
              <button
                type="button"
                className="danger"
                onClick={() => window.confirm(`Revoke ${t.name}? It stops working at once.`) && revoke.mutate(t.id)}
              >
                Revoke {t.name}
              </button>
            ),
          },
        ]}
      />
    </>
  );
}
