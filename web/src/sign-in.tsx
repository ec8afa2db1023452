// Signed out: the first-run form (bootstrap) while no user exists, then the sign-in form
// and, when single sign-on is configured, its button.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, call } from './api/client';
import type { AuthStatus } from './session';
import { ErrorNote, Field } from './ui/kit';

export function SignIn({ status }: { status: AuthStatus | undefined }) {
  const client = useQueryClient();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [email, setEmail] = useState('');
  const firstRun = status !== undefined && !status.bootstrapped;

  const submit = useMutation({
    mutationFn: async () => {
      if (firstRun) await call(api.POST('/api/auth/bootstrap', { body: { username, password, email } }));
      await call(api.POST('/api/auth/login', { body: { username, password } }));
    },
    onSuccess: () => client.invalidateQueries(),
  });

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    submit.mutate();
  };
  const passwordLogin = !status || status.login_methods.includes('password');
  const returnTo = encodeURIComponent(window.location.pathname + window.location.search);

  return (
    <main className="sign-in">
      <h1>Weir</h1>
      <p>{firstRun ? 'Create the first platform administrator.' : 'Sign in to the console.'}</p>
      {passwordLogin || firstRun ? (
        <form onSubmit={onSubmit} aria-label={firstRun ? 'Create the administrator' : 'Sign in'}>
          <Field label="Username">
            {(id) => (
              <input
                id={id}
                autoComplete="username"
                required
                value={username}
                onChange={(e) => setUsername(e.target.value)}
              />
            )}
          </Field>
          {firstRun ? (
            <Field label="E-mail">
              {(id) => (
                <input
                  id={id}
                  type="email"
                  autoComplete="email"
                  required
                  value={email}
                  onChange={(e) => setEmail(e.target.value)}
                />
              )}
            </Field>
          ) : null}
          <Field label="Password" hint={firstRun ? 'At least 8 characters.' : undefined}>
            {(id, hint) => (
              <input
                id={id}
                type="password"
                aria-describedby={hint}
                autoComplete={firstRun ? 'new-password' : 'current-password'}
                required
                value={password}
                onChange={(e) => setPassword(e.target.value)}
              />
            )}
          </Field>
          <ErrorNote error={submit.error} />
          <button type="submit" className="primary" disabled={submit.isPending}>
            {firstRun ? 'Create and sign in' : 'Sign in'}
          </button>
        </form>
      ) : null}
      {status?.sso_enabled ? (
        <a className="button" href={`/api/auth/sso/login?return_to=${returnTo}`}>
          Sign in with single sign-on
        </a>
      ) : null}
    </main>
  );
}
