// The signed-in frame: a skip link, the navigation (only the screens the caller's role may
// open), the organization picker for global callers, the theme switch, and the screen.
import { useQuery } from '@tanstack/react-query';
import { Suspense, useState } from 'react';
import { Link, Route, Switch, useLocation } from 'wouter';
import { api, call } from './api/client';
import { SCREENS, type Screen } from './screens';
import { useSession } from './session';
import { currentTheme, setTheme, type Theme } from './theme';
import { timeZone } from './ui/format';

const GROUPS: Screen['group'][] = ['Pipeline', 'Investigation', 'Normalization', 'Delivery', 'Administration'];

export function Shell() {
  const session = useSession();
  const [location] = useLocation();
  const visible = SCREENS.filter((s) => !s.requires || session.can(s.requires));
  // The menu entry of the page shown: the longest path that contains it (/detections/rules is
  // Detection rules, not Detections; /integrations/3 is Integrations).
  const contains = (p: string) => (p === '/' ? location === '/' : location === p || location.startsWith(`${p}/`));
  const here = visible
    .filter((s) => s.nav !== false && contains(s.path))
    .map((s) => s.path)
    .sort((a, b) => b.length - a.length)[0];
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link href="/" className="brand">
          Weir
        </Link>
        <OrganizationPicker />
        <div className="who">
          <span>
            {session.profile.name} ({session.profile.role}
            {session.profile.global ? ', platform' : ''})
          </span>
          <ThemeSwitch />
          <button type="button" onClick={() => void session.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <nav className="side" aria-label="Console">
        {GROUPS.map((group) => {
          const items = visible.filter((s) => s.group === group && s.nav !== false);
          if (items.length === 0) return null;
          return (
            <section key={group}>
              <h2>{group}</h2>
              <ul>
                {items.map((s) => {
                  const current = s.path === here;
                  return (
                    <li key={s.path}>
                      <Link href={s.path} aria-current={current ? 'page' : undefined}>
                        {s.title}
                      </Link>
                    </li>
                  );
                })}
              </ul>
            </section>
          );
        })}
        <p className="tz">Times in {timeZone}</p>
      </nav>
      <main id="main" tabIndex={-1}>
        <Suspense fallback={<p role="status">Loading…</p>}>
          <Switch>
            {visible.map((s) => (
              <Route key={s.path} path={s.path} component={s.component} />
            ))}
            <Route>
              <h1>Not found</h1>
              <p>This page does not exist, or your role cannot open it.</p>
            </Route>
          </Switch>
        </Suspense>
      </main>
    </div>
  );
}

function OrganizationPicker() {
  const session = useSession();
  const orgs = useQuery({
    queryKey: ['organizations', 'picker'],
    queryFn: () => call(api.GET('/api/organizations/', { params: { query: { page: 1, size: 200 } } })),
    enabled: session.profile.global,
  });
  if (!session.profile.global) {
    return <span className="org">{session.profile.organization?.name ?? 'No organization'}</span>;
  }
  return (
    <label className="org">
      <span>Organization</span>
      <select
        value={session.organizationId ?? ''}
        onChange={(e) => session.setOrganizationId(e.target.value === '' ? null : Number(e.target.value))}
      >
        <option value="">All organizations</option>
        {(orgs.data ?? []).map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </select>
    </label>
  );
}

function ThemeSwitch() {
  const [theme, set] = useState<Theme>(currentTheme());
  const next: Theme = theme === 'dark' ? 'light' : 'dark';
  return (
    <button
      type="button"
      aria-pressed={theme === 'dark'}
      onClick={() => {
        setTheme(next);
        set(next);
      }}
    >
      Dark theme
    </button>
  );
}
