// Who the console is signed in as, learnt from the API (the session cookie is HttpOnly):
// the profile names the caller's permissions, scope and organization. `can()` decides what
// the console offers: an action the caller's role cannot take is not shown.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, ApiError, call, onUnauthorized, type Ok } from './api/client';

type Profile = Ok<'auth.profile'>;
const ORG_KEY = 'weir.organization';
export type AuthStatus = Ok<'auth.status'>;

async function loadProfile(): Promise<Profile> {
  return call(api.GET('/api/auth/me/profile'));
}

export interface Session {
  profile: Profile;
  can(permission: string): boolean;
  /** The organization the screens show: null means every organization in scope (global callers). */
  organizationId: number | null;
  setOrganizationId(id: number | null): void;
  signOut(): Promise<void>;
}

const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** `organization_id` for list calls: the selected organization, or nothing (every one in scope). */
export function useOrgFilter(): { organization_id?: number } {
  const { organizationId } = useSession();
  return organizationId === null ? {} : { organization_id: organizationId };
}

export function SessionProvider({
  children,
  signedOut,
}: {
  children: ReactNode;
  signedOut: (status: AuthStatus | undefined) => ReactNode;
}) {
  const client = useQueryClient();
  const profile = useQuery({ queryKey: ['profile'], queryFn: loadProfile, retry: false, staleTime: 60_000 });
  const status = useQuery({
    queryKey: ['auth-status'],
    queryFn: () => call(api.GET('/api/auth/status')),
    enabled: profile.isError,
    staleTime: 0,
  });
  // A platform caller's choice survives reloads and new tabs (kept per browser, not per user).
  const [organizationId, setOrganizationIdState] = useState<number | null>(() => {
    const stored = Number(localStorage.getItem(ORG_KEY));
    return Number.isInteger(stored) && stored > 0 ? stored : null;
  });
  const setOrganizationId = useCallback((id: number | null) => {
    if (id === null) localStorage.removeItem(ORG_KEY);
    else localStorage.setItem(ORG_KEY, String(id));
    setOrganizationIdState(id);
  }, []);

  useEffect(
    () =>
      onUnauthorized(() => {
        client.setQueryData(['profile'], undefined);
        void client.invalidateQueries({ queryKey: ['profile'] });
      }),
    [client],
  );

  const data = profile.data;
  useEffect(() => {
    // An organization user sees that organization; a global caller starts with all of them.
    if (data && !data.global) setOrganizationIdState(data.organization_id);
  }, [data]);

  const session = useMemo<Session | undefined>(() => {
    if (!data) return undefined;
    const held = new Set(data.permissions);
    return {
      profile: data,
      can: (permission) => held.has(permission),
      organizationId,
      setOrganizationId,
      async signOut() {
        await call(api.POST('/api/auth/logout')).catch(() => undefined);
        client.clear();
        localStorage.removeItem(ORG_KEY);
        window.location.assign('/');
      },
    };
  }, [data, organizationId, setOrganizationId, client]);

  if (profile.isPending)
    return (
      <p className="boot" role="status">
        Loading…
      </p>
    );
  if (!session) {
    const unauthenticated = profile.error instanceof ApiError && profile.error.status === 401;
    if (!unauthenticated && profile.error) return <p role="alert">{profile.error.message}</p>;
    return <>{signedOut(status.data)}</>;
  }
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}
