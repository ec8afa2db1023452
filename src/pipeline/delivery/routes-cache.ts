// An organization's enabled routes as the one pass uses them: read
// from the database when their fingerprint changed (checked at most every `pollMs`, so a
// route edit applies within a poll), compiled once per change in this thread.
import type { CompiledRoutes, RouteSpec } from '../route/types.js';
import type { EngineStore } from './engine-port.js';

export interface OrgRoutes {
  /** Changes whenever one of the organization's routes changes (cache key of the compiled form elsewhere). */
  fingerprint: string;
  specs: RouteSpec[];
  /** Compiled on first use. */
  compiled(): CompiledRoutes;
}

interface Cached extends OrgRoutes {
  checkedAt: number;
}

export function createRoutesCache(deps: {
  store: Pick<EngineStore, 'routesFingerprint' | 'enabledRoutes'>;
  compile: (routes: RouteSpec[]) => CompiledRoutes;
  pollMs: number;
}) {
  const cache = new Map<number, Promise<Cached>>();

  function entry(fingerprint: string, specs: RouteSpec[], checkedAt: number): Cached {
    let compiled: CompiledRoutes | undefined;
    return { fingerprint, specs, checkedAt, compiled: () => (compiled ??= deps.compile(specs)) };
  }

  return {
    async get(organizationId: number): Promise<OrgRoutes> {
      const now = Date.now();
      const cached = cache.get(organizationId);
      const current = cached ? await cached.catch(() => undefined) : undefined;
      if (current && now - current.checkedAt < deps.pollMs) return current;
      const loading = (async () => {
        const fingerprint = await deps.store.routesFingerprint(organizationId);
        if (current && current.fingerprint === fingerprint) {
          current.checkedAt = now;
          return current;
        }
        return entry(fingerprint, await deps.store.enabledRoutes(organizationId), now);
      })();
      cache.set(organizationId, loading);
      try {
        return await loading;
      } catch (err) {
        cache.delete(organizationId);
        throw err;
      }
    },
  };
}

export type RoutesCache = ReturnType<typeof createRoutesCache>;
