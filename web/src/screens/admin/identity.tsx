// Identity: single sign-on with OpenID Connect (the client secret write-only), its test and
// the directory sync. Platform scope only: the API says so otherwise.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { api, call, type In } from '../../api/client';
import { Badge, ErrorNote, Field, Json, Notice, PageHeader, Time } from '../../ui/kit';

type Body = In<'identity.update_config'>;

export default function Identity() {
  const client = useQueryClient();
  const config = useQuery({ queryKey: ['identity'], queryFn: () => call(api.GET('/api/identity/config')) });
  const syncStatus = useQuery({
    queryKey: ['identity-sync'],
    queryFn: () => call(api.GET('/api/identity/config/sync-status')),
    refetchInterval: (q) => (q.state.data?.running ? 2_000 : false),
  });
  const [form, setForm] = useState<Body>();
  const [secret, setSecret] = useState('');
  useEffect(() => {
    const c = config.data;
    if (c && !form) {
      setForm({
        enabled: c.enabled,
        issuer: c.issuer ?? '',
        client_id: c.client_id ?? '',
        redirect_uri: c.redirect_uri ?? `${window.location.origin}/api/auth/sso/callback`,
        rules: (c.rules ?? []) as Body['rules'],
        ...(c.scopes ? { scopes: c.scopes } : {}),
        ...(c.username_claim ? { username_claim: c.username_claim } : {}),
      });
    }
  }, [config.data, form]);
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PUT('/api/identity/config', { body: { ...(form as Body), ...(secret ? { client_secret: secret } : {}) } }),
      ),
    onSuccess: () => (setSecret(''), client.invalidateQueries({ queryKey: ['identity'] })),
  });
  const test = useMutation({ mutationFn: () => call(api.POST('/api/identity/config/test')) });
  const sync = useMutation({
    mutationFn: () => call(api.POST('/api/identity/config/sync')),
    onSuccess: () => client.invalidateQueries({ queryKey: ['identity-sync'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const set = (patch: Partial<Body>) => setForm({ ...(form as Body), ...patch });
  return (
    <>
      <PageHeader title="Identity (single sign-on)">
        <button type="button" onClick={() => test.mutate()} disabled={!config.data?.configured}>
          Test
        </button>
        <button
          type="button"
          onClick={() => sync.mutate()}
          disabled={!config.data?.configured || syncStatus.data?.running}
        >
          Sync users
        </button>
      </PageHeader>
      <ErrorNote error={config.error ?? save.error ?? test.error ?? sync.error} />
      {save.isSuccess ? <Notice>Saved.</Notice> : null}
      {test.data ? (
        <ul aria-label="Test steps">
          {test.data.steps.map((s) => (
            <li key={s.step}>
              <Badge value={s.ok ? 'ok' : 'failed'} /> {s.step}: {s.detail} {s.error ?? ''}
            </li>
          ))}
        </ul>
      ) : null}
      {syncStatus.data?.running ? <progress aria-label="Directory sync running" /> : null}
      {syncStatus.data?.last ? (
        <p>
          Last sync: <Time value={(syncStatus.data.last as { finished_at?: string }).finished_at ?? null} />
        </p>
      ) : null}
      {form ? (
        <form className="panel" onSubmit={submit} aria-label="Identity provider">
          <label>
            <input type="checkbox" checked={form.enabled} onChange={(e) => set({ enabled: e.target.checked })} /> Single
            sign-on enabled
          </label>
          <Field label="Issuer URL">
            {(id) => (
              <input
                id={id}
                type="url"
                required
                value={form.issuer}
                onChange={(e) => set({ issuer: e.target.value })}
              />
            )}
          </Field>
          <Field label="Client id">
            {(id) => (
              <input id={id} required value={form.client_id} onChange={(e) => set({ client_id: e.target.value })} />
            )}
          </Field>
          <Field
            label="Client secret"
            hint={
              config.data?.client_secret_set
                ? 'Write-only: a secret is stored; leave empty to keep it.'
                : 'Write-only: never shown again.'
            }
          >
            {(id, hint) => (
              <input
                id={id}
                aria-describedby={hint}
                type="password"
                autoComplete="new-password"
                value={secret}
                onChange={(e) => setSecret(e.target.value)}
              />
            )}
          </Field>
          <Field label="Redirect URI">
            {(id) => (
              <input
                id={id}
                type="url"
                required
                value={form.redirect_uri}
                onChange={(e) => set({ redirect_uri: e.target.value })}
              />
            )}
          </Field>
          <Field label="Role and organization rules (JSON)" hint="docs/sso.md">
            {(id, hint) => (
              <textarea
                id={id}
                aria-describedby={hint}
                rows={6}
                defaultValue={JSON.stringify(form.rules, null, 2)}
                onBlur={(e) => {
                  try {
                    set({ rules: JSON.parse(e.target.value) as Body['rules'] });
                  } catch {
                    // left as typed; the API names the problem on save
                  }
                }}
              />
            )}
          </Field>
          <button type="submit" className="primary" disabled={save.isPending}>
            Save
          </button>
        </form>
      ) : null}
      {config.data ? <Json label="Stored configuration (secrets as set or not)" value={config.data} /> : null}
    </>
  );
}
