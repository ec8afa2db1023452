// Service accounts: machine identities that carry tokens (never sign in); their tokens.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, call } from '../../api/client';
import { Badge, DataTable, Dialog, ErrorNote, Field, PageHeader, Time } from '../../ui/kit';
import { OrgSelect } from '../../ui/org-select';
import { TokenOnce } from './token-created';

const ROLES = ['viewer', 'operator', 'admin'] as const;

export default function ServiceAccounts() {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [role, setRole] = useState<(typeof ROLES)[number]>('viewer');
  const [organizationId, setOrganizationId] = useState<number | null>(null);
  const [open, setOpen] = useState<{ id: number; name: string }>();
  const accounts = useQuery({
    queryKey: ['service-accounts'],
    queryFn: () => call(api.GET('/api/v1/service-accounts')),
  });
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/service-accounts', {
          body: { name, role, ...(organizationId !== null ? { organization_id: organizationId } : {}) },
        }),
      ),
    onSuccess: () => {
      setName('');
      void client.invalidateQueries({ queryKey: ['service-accounts'] });
    },
  });
  const toggle = useMutation({
    mutationFn: (a: { id: number; is_active: boolean }) =>
      call(
        api.PATCH('/api/v1/service-accounts/{service_account_id}', {
          params: { path: { service_account_id: a.id } },
          body: { is_active: !a.is_active },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['service-accounts'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <>
      <PageHeader title="Service accounts" />
      <form className="row panel" onSubmit={submit} aria-label="New service account">
        <Field label="Name">
          {(id) => <input id={id} required value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Role">
          {(id) => (
            <select id={id} value={role} onChange={(e) => setRole(e.target.value as (typeof ROLES)[number])}>
              {ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          )}
        </Field>
        <OrgSelect value={organizationId} onChange={setOrganizationId} allowGlobal />
        <button type="submit" className="primary" disabled={create.isPending}>
          Create service account
        </button>
      </form>
      <ErrorNote error={accounts.error ?? create.error ?? toggle.error} />
      <DataTable
        caption="Service accounts"
        rows={accounts.data ?? []}
        rowKey={(a) => a.id}
        columns={[
          { header: 'Name', cell: (a) => a.name },
          { header: 'Role', cell: (a) => a.role },
          { header: 'Organization', cell: (a) => a.organization_id ?? 'platform' },
          { header: 'Active', cell: (a) => <Badge value={a.is_active ? 'active' : 'inactive'} /> },
          { header: 'Tokens', className: 'num', cell: (a) => a.token_count },
          {
            header: 'Actions',
            cell: (a) => (
              <span className="row">
                <button type="button" onClick={() => setOpen(a)}>
                  Tokens of {a.name}
                </button>
                <button type="button" onClick={() => toggle.mutate(a)}>
                  {a.is_active ? 'Deactivate' : 'Activate'}
                </button>
              </span>
            ),
          },
        ]}
      />
      <Dialog title={`Tokens of ${open?.name ?? ''}`} open={open !== undefined} onClose={() => setOpen(undefined)}>
        {open ? <AccountTokens accountId={open.id} /> : null}
      </Dialog>
    </>
  );
}

function AccountTokens({ accountId }: { accountId: number }) {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [created, setCreated] = useState<string>();
  const path = { params: { path: { service_account_id: accountId } } };
  const tokens = useQuery({
    queryKey: ['sa-tokens', accountId],
    queryFn: () => call(api.GET('/api/v1/service-accounts/{service_account_id}/tokens', path)),
  });
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/v1/service-accounts/{service_account_id}/tokens', { ...path, body: { name, is_eternal: true } }),
      ),
    onSuccess: (t) => {
      setCreated(t.token);
      void client.invalidateQueries({ queryKey: ['sa-tokens', accountId] });
      void client.invalidateQueries({ queryKey: ['service-accounts'] });
    },
  });
  const revoke = useMutation({
    mutationFn: (tokenId: number) =>
      call(
        api.DELETE('/api/v1/service-accounts/{service_account_id}/tokens/{token_id}', {
          params: { path: { service_account_id: accountId, token_id: tokenId } },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['sa-tokens', accountId] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <>
      <form className="row" onSubmit={submit} aria-label="New service account token">
        <Field label="Token name">
          {(id) => <input id={id} required value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <button type="submit" className="primary">
          Create token
        </button>
      </form>
      {created ? <TokenOnce token={created} /> : null}
      <ErrorNote error={tokens.error ?? create.error ?? revoke.error} />
      <DataTable
        caption="Service account tokens"
        rows={tokens.data ?? []}
        rowKey={(t) => t.id}
        columns={[
          { header: 'Name', cell: (t) => t.name },
          { header: 'Prefix', cell: (t) => <code>{t.token_prefix}</code> },
          { header: 'Last used', cell: (t) => <Time value={t.last_used_at} /> },
          {
            header: 'Actions',
            cell: (t) => (
              <button type="button" className="danger" onClick={() => revoke.mutate(t.id)}>
                Revoke {t.name}
              </button>
            ),
          },
        ]}
      />
    </>
  );
}
