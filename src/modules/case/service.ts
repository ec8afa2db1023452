// Case management: one system, DFIR-IRIS, configured from the environment (WEIR_CASE_URL and
// its API key). The health probe calls it (ping, then versions) and keeps the answer 30 s in
// the shared cache, so every api process answers from one probe (contract: "The probe result
// is cached for 30 s"). The customer sync resolves an organization's IRIS customer: by the id
// it already holds, else by its name, else by creating it. Not configured is a valid state.
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { CachePort } from '../../platform/cache/port.js';
import { CaseSystemError, type IrisClient, type IrisCustomer } from './client.js';

export const CASE_NOT_CONFIGURED = 'case management is not configured';
export const HEALTH_CACHE_KEY = 'case:health';
export const HEALTH_TTL_MS = 30_000;
const NAME_MAX = 200;

export interface CaseHealth {
  configured: boolean;
  reachable: boolean;
  system: 'dfir-iris' | null;
  version: string | null;
  api_version: string | null;
  latency_ms: number | null;
  checked_at: Date;
  cached: boolean;
  detail: string | null;
}

interface StoredHealth extends Omit<CaseHealth, 'checked_at' | 'cached'> {
  checked_at: string;
}

export type SyncAction = 'verified' | 'found_by_name' | 'created';

export interface CustomerResolution {
  action: SyncAction;
  customer: IrisCustomer;
  /** Why the stored id was not kept (it named no IRIS customer), when it was not. */
  replaced?: string;
}

export interface CaseDeps {
  /** undefined: not configured. */
  client: IrisClient | undefined;
  cache: CachePort;
  clock: Clock;
  /** Monotonic milliseconds, for latency. */
  elapsed?: () => number;
}

/** A failed call as the API answers it: 502 with the system's words, never a 5xx of ours. */
function unavailable(err: unknown): never {
  if (err instanceof CaseSystemError) {
    throw new AppError('case.unavailable', {
      detail: `Case management (DFIR-IRIS) is unavailable: ${err.message}`,
      details: { system: 'dfir-iris' },
    });
  }
  throw err;
}

export function createCaseService(deps: CaseDeps) {
  const { client, cache, clock } = deps;
  const elapsed = deps.elapsed ?? (() => performance.now());

  async function probe(c: IrisClient): Promise<StoredHealth> {
    const started = elapsed();
    const at = clock.now().toISOString();
    try {
      await c.ping();
      const latency = Math.max(0, Math.round(elapsed() - started));
      const versions = await c.versions().catch(() => ({ iris: null, api: null }));
      return {
        configured: true,
        reachable: true,
        system: c.system,
        version: versions.iris,
        api_version: versions.api,
        latency_ms: latency,
        checked_at: at,
        detail: null,
      };
    } catch (err) {
      if (!(err instanceof CaseSystemError)) throw err;
      return {
        configured: true,
        reachable: false,
        system: c.system,
        version: null,
        api_version: null,
        latency_ms: null,
        checked_at: at,
        detail: err.message,
      };
    }
  }

  return {
    configured: client !== undefined,

    async health(): Promise<CaseHealth> {
      if (!client) {
        return {
          configured: false,
          reachable: false,
          system: null,
          version: null,
          api_version: null,
          latency_ms: null,
          checked_at: clock.now(),
          cached: false,
          detail: CASE_NOT_CONFIGURED,
        };
      }
      const stored = await cache.get<StoredHealth>(HEALTH_CACHE_KEY).catch(() => undefined);
      // Freshness by the service's clock (the cache's own expiry only bounds how long the entry stays).
      if (stored && clock.now().getTime() - Date.parse(stored.checked_at) < HEALTH_TTL_MS) {
        return { ...stored, checked_at: new Date(stored.checked_at), cached: true };
      }
      const fresh = await probe(client);
      await cache.set(HEALTH_CACHE_KEY, fresh, HEALTH_TTL_MS).catch(() => undefined);
      return { ...fresh, checked_at: new Date(fresh.checked_at), cached: false };
    },

    /**
     * The organization's IRIS customer: the one its stored id names, else the one with its
     * name (IRIS names are unique, case-insensitive), else a new one. undefined when not configured.
     */
    async resolveCustomer(org: {
      id: number;
      name: string;
      case_customer_id: string | null;
    }): Promise<CustomerResolution | undefined> {
      if (!client) return undefined;
      try {
        let replaced: string | undefined;
        if (org.case_customer_id) {
          const known = await client.customer(org.case_customer_id);
          if (known) return { action: 'verified', customer: known };
          replaced = `the stored customer id ${org.case_customer_id} names no DFIR-IRIS customer`;
        }
        const name = org.name.slice(0, NAME_MAX);
        const byName = (await client.customers()).find((c) => c.name.toLowerCase() === name.toLowerCase());
        if (byName) return { action: 'found_by_name', customer: byName, ...(replaced ? { replaced } : {}) };
        const created = await client.addCustomer(name, `Weir organization ${org.id}`);
        return { action: 'created', customer: created, ...(replaced ? { replaced } : {}) };
      } catch (err) {
        return unavailable(err);
      }
    },

    /**
     * Opens a case for the organization's customer (resolved as resolveCustomer does); the case id
     * and the customer. undefined when case management is not configured.
     */
    async openCase(
      org: { id: number; name: string; case_customer_id: string | null },
      input: { name: string; description: string; socId: string },
    ): Promise<{ case_id: string; customer: IrisCustomer } | undefined> {
      if (!client) return undefined;
      const resolved = await this.resolveCustomer(org);
      if (!resolved) return undefined;
      try {
        const made = await client.addCase({ customerId: resolved.customer.id, ...input });
        return { case_id: made.id, customer: resolved.customer };
      } catch (err) {
        return unavailable(err);
      }
    },
  };
}

export type CaseService = ReturnType<typeof createCaseService>;
