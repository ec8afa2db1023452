// License: the edition and its status; platform administrators activate or remove one.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, call } from '../../api/client';
import { useSession } from '../../session';
import { Badge, ErrorNote, Field, PageHeader, Stat, Time } from '../../ui/kit';

export default function License() {
  const { can, profile } = useSession();
  const client = useQueryClient();
  const [token, setToken] = useState('');
  const status = useQuery({ queryKey: ['license'], queryFn: () => call(api.GET('/api/licenses/status')) });
  const activate = useMutation({
    mutationFn: () => call(api.POST('/api/licenses/activate', { body: { license_token: token } })),
    onSuccess: () => (setToken(''), client.invalidateQueries({ queryKey: ['license'] })),
  });
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/api/licenses')),
    onSuccess: () => client.invalidateQueries({ queryKey: ['license'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    activate.mutate();
  };
  const s = status.data;
  const manage = can('user.manage') && profile.global;
  return (
    <>
      <PageHeader title="License" />
      <ErrorNote error={status.error ?? activate.error ?? remove.error} />
      {s ? (
        <dl className="stats">
          <Stat label="Edition" value={s.edition} />
          <Stat label="Status" value={<Badge value={s.status} />} />
          <Stat label="Expires" value={<Time value={s.expires_at} />} />
          <Stat label="Organizations allowed" value={s.org_limit} />
          <Stat label="Features" value={s.features.join(', ') || '—'} />
        </dl>
      ) : null}
      {manage ? (
        <form className="panel" onSubmit={submit} aria-label="Activate a license">
          <Field label="License token">
            {(id) => <textarea id={id} rows={4} required value={token} onChange={(e) => setToken(e.target.value)} />}
          </Field>
          <div className="row">
            <button type="submit" className="primary" disabled={activate.isPending}>
              Activate
            </button>
            {s?.edition === 'enterprise' ? (
              <button
                type="button"
                className="danger"
                onClick={() =>
                  window.confirm('Remove the license? The instance returns to Community at once.') && remove.mutate()
                }
              >
                Remove license
              </button>
            ) : null}
          </div>
        </form>
      ) : null}
    </>
  );
}
