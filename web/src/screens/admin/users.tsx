// Users: create, change role, (de)activate, delete; scoped to the organizations the caller administers.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, call } from '../../api/client';
import { useOrgFilter } from '../../session';
import { Badge, DataTable, Dialog, ErrorNote, Field, PageHeader, Time } from '../../ui/kit';
import { OrgSelect } from '../../ui/org-select';

const ROLES = ['viewer', 'operator', 'admin'] as const;

export default function Users() {
  const org = useOrgFilter();
  const client = useQueryClient();
  const [creating, setCreating] = useState(false);
  const users = useQuery({
    queryKey: ['users', org],
    queryFn: () => call(api.GET('/api/auth/users', { params: { query: org } })),
  });
  const update = useMutation({
    mutationFn: ({ id, body }: { id: number; body: { role?: (typeof ROLES)[number]; is_active?: boolean } }) =>
      call(api.PUT('/api/auth/users/{user_id}', { params: { path: { user_id: id } }, body })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['users'] }),
  });
  const remove = useMutation({
    mutationFn: (id: number) => call(api.DELETE('/api/auth/users/{user_id}', { params: { path: { user_id: id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['users'] }),
  });
  return (
    <>
      <PageHeader title="Users">
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          New user
        </button>
      </PageHeader>
      <ErrorNote error={users.error ?? update.error ?? remove.error} />
      <DataTable
        caption="Users"
        rows={users.data ?? []}
        rowKey={(u) => u.id}
        columns={[
          { header: 'Username', cell: (u) => u.username },
          { header: 'E-mail', cell: (u) => u.email },
          {
            header: 'Role',
            cell: (u) => (
              <select
                aria-label={`Role of ${u.username}`}
                value={u.role}
                onChange={(e) => update.mutate({ id: u.id, body: { role: e.target.value as (typeof ROLES)[number] } })}
              >
                {ROLES.map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
            ),
          },
          { header: 'Organization', cell: (u) => u.organization_id ?? 'platform' },
          { header: 'Active', cell: (u) => <Badge value={u.is_active ? 'active' : 'inactive'} /> },
          { header: 'Last sign-in', cell: (u) => <Time value={u.last_login_at} /> },
          {
            header: 'Actions',
            cell: (u) => (
              <span className="row">
                <button type="button" onClick={() => update.mutate({ id: u.id, body: { is_active: !u.is_active } })}>
                  {u.is_active ? 'Deactivate' : 'Activate'}
                </button>
                <button
                  type="button"
                  className="danger"
                  onClick={() => window.confirm(`Delete ${u.username}?`) && remove.mutate(u.id)}
                >
                  Delete
                </button>
              </span>
            ),
          },
        ]}
      />
      <Dialog title="New user" open={creating} onClose={() => setCreating(false)}>
        <CreateUser onDone={() => setCreating(false)} />
      </Dialog>
    </>
  );
}

function CreateUser({ onDone }: { onDone: () => void }) {
  const client = useQueryClient();
  const [username, setUsername] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<(typeof ROLES)[number]>('viewer');
  const [organizationId, setOrganizationId] = useState<number | null>(null);
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST('/api/auth/users', {
          body: {
            username,
            email,
            password,
            role,
            ...(organizationId !== null ? { organization_id: organizationId } : {}),
          },
        }),
      ),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['users'] });
      onDone();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <form onSubmit={submit} aria-label="New user">
      <Field label="Username">
        {(id) => <input id={id} required value={username} onChange={(e) => setUsername(e.target.value)} />}
      </Field>
      <Field label="E-mail">
        {(id) => <input id={id} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />}
      </Field>
      <Field label="Password" hint="At least 8 characters.">
        {(id, hint) => (
          <input
            id={id}
            aria-describedby={hint}
            type="password"
            autoComplete="new-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        )}
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
      <ErrorNote error={create.error} />
      <button type="submit" className="primary" disabled={create.isPending}>
        Create user
      </button>
    </form>
  );
}
