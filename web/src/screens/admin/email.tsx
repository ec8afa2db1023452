// E-mail: the SMTP relay (password write-only), recipients, and a test message.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { api, call, type In } from '../../api/client';
import { useOrgFilter } from '../../session';
import { DataTable, ErrorNote, Field, Notice, PageHeader, Time } from '../../ui/kit';
import { OrgSelect } from '../../ui/org-select';

type Relay = In<'emails.put_config'>;

export default function Email() {
  const org = useOrgFilter();
  const client = useQueryClient();
  const config = useQuery({ queryKey: ['email-config'], queryFn: () => call(api.GET('/api/emails/config')) });
  const recipients = useQuery({
    queryKey: ['emails', org],
    queryFn: () => call(api.GET('/api/emails/', { params: { query: { ...org, page: 1, size: 100 } } })),
  });
  const [relay, setRelay] = useState<Relay>();
  const [password, setPassword] = useState('');
  const [address, setAddress] = useState('');
  const [organizationId, setOrganizationId] = useState<number | null>(null);
  useEffect(() => {
    const c = config.data;
    if (c && !relay)
      setRelay({
        host: c.host ?? '',
        port: c.port ?? 587,
        security: (c.security ?? 'starttls') as Relay['security'],
        from_address: c.from_address ?? '',
        username: c.username ?? null,
      });
  }, [config.data, relay]);
  const save = useMutation({
    mutationFn: () =>
      call(api.PUT('/api/emails/config', { body: { ...(relay as Relay), ...(password ? { password } : {}) } })),
    onSuccess: () => (setPassword(''), client.invalidateQueries({ queryKey: ['email-config'] })),
  });
  const test = useMutation({ mutationFn: () => call(api.POST('/api/emails/test', { body: {} })) });
  const add = useMutation({
    mutationFn: () => call(api.POST('/api/emails/', { body: { address, organization_id: organizationId ?? 0 } })),
    onSuccess: () => (setAddress(''), client.invalidateQueries({ queryKey: ['emails'] })),
  });
  const remove = useMutation({
    mutationFn: (id: number) => call(api.DELETE('/api/emails/{email_id}', { params: { path: { email_id: id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['emails'] }),
  });
  const set = (patch: Partial<Relay>) => setRelay({ ...(relay as Relay), ...patch });
  const submitRelay = (e: FormEvent) => (e.preventDefault(), save.mutate());
  const submitRecipient = (e: FormEvent) => (e.preventDefault(), add.mutate());
  return (
    <>
      <PageHeader title="E-mail">
        <button type="button" onClick={() => test.mutate()} disabled={!config.data?.configured || test.isPending}>
          Send a test message
        </button>
      </PageHeader>
      <ErrorNote error={config.error ?? save.error ?? test.error ?? recipients.error ?? add.error ?? remove.error} />
      {test.data ? (
        test.data.sent ? (
          <Notice>Sent to {test.data.to}.</Notice>
        ) : (
          <p className="error" role="alert">
            Not sent: {test.data.error}
          </p>
        )
      ) : null}
      {relay ? (
        <form className="panel" onSubmit={submitRelay} aria-label="SMTP relay">
          <h2>Relay</h2>
          <div className="row">
            <Field label="Host">
              {(id) => <input id={id} required value={relay.host} onChange={(e) => set({ host: e.target.value })} />}
            </Field>
            <Field label="Port">
              {(id) => (
                <input
                  id={id}
                  type="number"
                  required
                  value={relay.port}
                  onChange={(e) => set({ port: Number(e.target.value) })}
                />
              )}
            </Field>
            <Field label="Security">
              {(id) => (
                <select
                  id={id}
                  value={relay.security}
                  onChange={(e) => set({ security: e.target.value as Relay['security'] })}
                >
                  <option value="starttls">STARTTLS</option>
                  <option value="tls">TLS</option>
                  <option value="none">None</option>
                </select>
              )}
            </Field>
          </div>
          <div className="row">
            <Field label="Username">
              {(id) => (
                <input
                  id={id}
                  value={relay.username ?? ''}
                  onChange={(e) => set({ username: e.target.value || null })}
                />
              )}
            </Field>
            <Field
              label="Password"
              hint={config.data?.password_set ? 'Write-only: stored; leave empty to keep it.' : 'Write-only.'}
            >
              {(id, hint) => (
                <input
                  id={id}
                  aria-describedby={hint}
                  type="password"
                  autoComplete="new-password"
                  value={password}
                  onChange={(e) => setPassword(e.target.value)}
                />
              )}
            </Field>
            <Field label="From address">
              {(id) => (
                <input
                  id={id}
                  type="email"
                  required
                  value={relay.from_address}
                  onChange={(e) => set({ from_address: e.target.value })}
                />
              )}
            </Field>
          </div>
          <button type="submit" className="primary" disabled={save.isPending}>
            Save relay
          </button>
          {save.isSuccess ? <Notice>Saved.</Notice> : null}
        </form>
      ) : null}
      <section className="panel" aria-labelledby="recipients">
        <h2 id="recipients">Recipients</h2>
        <form className="row" onSubmit={submitRecipient} aria-label="New recipient">
          <Field label="Address">
            {(id) => (
              <input id={id} type="email" required value={address} onChange={(e) => setAddress(e.target.value)} />
            )}
          </Field>
          <OrgSelect value={organizationId} onChange={setOrganizationId} />
          <button type="submit">Add recipient</button>
        </form>
        <DataTable
          caption="Recipients"
          rows={recipients.data ?? []}
          rowKey={(r) => r.id}
          empty="No recipient."
          columns={[
            { header: 'Address', cell: (r) => r.address },
            { header: 'Organization', cell: (r) => r.organization_id ?? 'platform' },
            { header: 'Added', cell: (r) => <Time value={r.created_at} /> },
            {
              header: 'Actions',
              cell: (r) => (
                <button type="button" className="danger" onClick={() => remove.mutate(r.id)}>
                  Remove {r.address}
                </button>
              ),
            },
          ]}
        />
      </section>
    </>
  );
}
