// The edition of the instance and the license behind it. A license is an Ed25519-signed
// JWS (keys.ts) whose claims say the edition, the organization ceiling, the expiry, the
// grace period and the add-on features. The active license is read from the database
// through the shared cache with a short life, and the cache entry is dropped when a
// license is activated or removed, so every process sees the change at once (or within
// CACHE_TTL_MS at the very worst). Expired but within grace: still Enterprise, flagged;
// past grace: Community.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { CachePort } from '../../platform/cache/port.js';
import { setAuditTarget } from '../audit/service.js';
import { verifiedPayload, type TrustedKey } from './keys.js';
import type { LicenseStore } from './store.js';

export type Edition = 'community' | 'enterprise';
export type LicenseStatus = 'community' | 'active' | 'expired_in_grace';

/** Organizations a Community instance may hold (the plan's ceiling; docs/decisions/0010). */
export const COMMUNITY_ORG_LIMIT = 10;
export const CACHE_KEY = 'license:active';
export const CACHE_TTL_MS = 5_000;
const DAY_MS = 86_400_000;
const MAX_GRACE_DAYS = 365;
const MAX_ORG_LIMIT = 1_000_000;

export interface LicenseClaims {
  edition: 'enterprise';
  org_limit: number;
  /** RFC 3339 UTC. */
  expires_at: string;
  grace_days: number;
  features: string[];
}

export interface EditionState {
  edition: Edition;
  status: LicenseStatus;
  /** Expiry of the stored license (also shown once it lapsed); null without one. */
  expiresAt: Date | null;
  expiredInGrace: boolean;
  graceDays: number;
  orgLimit: number;
  features: string[];
}

const invalid = (detail: string) => new AppError('license.invalid', { detail });

function parseExpiry(value: unknown): Date | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return new Date(value * 1000);
  if (typeof value !== 'string') return undefined;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

const isCount = (v: unknown, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max;

/** The claims of a verified payload, or the reason they do not hold. */
export function parseClaims(payload: unknown): LicenseClaims | string {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    return 'the payload is not a JSON object';
  const p = payload as Record<string, unknown>;
  if (p.edition !== 'enterprise') return 'claim "edition" must be "enterprise"';
  if (!isCount(p.org_limit, MAX_ORG_LIMIT) || p.org_limit < 1)
    return `claim "org_limit" must be an integer from 1 to ${MAX_ORG_LIMIT}`;
  const expires = parseExpiry(p.expires_at);
  if (!expires) return 'claim "expires_at" must be an RFC 3339 date-time (or seconds since the epoch)';
  const grace = p.grace_days ?? 0;
  if (!isCount(grace, MAX_GRACE_DAYS)) return `claim "grace_days" must be an integer from 0 to ${MAX_GRACE_DAYS}`;
  const features = p.features ?? [];
  if (!Array.isArray(features) || !features.every((f) => typeof f === 'string' && f.length > 0 && f.length <= 100)) {
    return 'claim "features" must be an array of names';
  }
  return {
    edition: 'enterprise',
    org_limit: p.org_limit,
    expires_at: expires.toISOString(),
    grace_days: grace,
    features: [...new Set(features as string[])],
  };
}

/** Verifies the signature and the claims of a license token; throws license.invalid. */
export async function verifyLicense(token: string, keys: TrustedKey[]): Promise<LicenseClaims> {
  const payload = await verifiedPayload(token.trim(), keys);
  if (payload === null) throw invalid('The license token is not a JWS signed by a trusted license key (EdDSA)');
  const claims = parseClaims(payload);
  if (typeof claims === 'string') throw invalid(`The license token is not valid: ${claims}`);
  return claims;
}

const COMMUNITY: EditionState = Object.freeze({
  edition: 'community',
  status: 'community',
  expiresAt: null,
  expiredInGrace: false,
  graceDays: 0,
  orgLimit: COMMUNITY_ORG_LIMIT,
  features: [],
}) as EditionState;

/** What a license (or none) grants at a moment. */
export function evaluate(claims: LicenseClaims | null, now: Date): EditionState {
  if (!claims) return { ...COMMUNITY, features: [] };
  const expiresAt = new Date(claims.expires_at);
  const graceEnd = expiresAt.getTime() + claims.grace_days * DAY_MS;
  const t = now.getTime();
  if (t >= graceEnd) return { ...COMMUNITY, features: [], expiresAt, graceDays: claims.grace_days };
  const inGrace = t >= expiresAt.getTime();
  return {
    edition: 'enterprise',
    status: inGrace ? 'expired_in_grace' : 'active',
    expiresAt,
    expiredInGrace: inGrace,
    graceDays: claims.grace_days,
    orgLimit: claims.org_limit,
    features: [...claims.features],
  };
}

export interface EditionsDeps {
  store: LicenseStore;
  cache: CachePort;
  clock: Clock;
  keys: () => Promise<TrustedKey[]>;
}

/** The one helper every Enterprise-only feature asks. */
export function createEditions(deps: EditionsDeps) {
  const { store, cache, clock } = deps;

  async function fromDatabase(): Promise<LicenseClaims | null> {
    const row = await store.active();
    if (!row) return null;
    // Re-verified on every load: a row written around the API (or signed by a key this
    // build no longer trusts) grants nothing.
    try {
      return await verifyLicense(row.token, await deps.keys());
    } catch {
      return null;
    }
  }

  async function activeClaims(): Promise<LicenseClaims | null> {
    let cached: { claims: LicenseClaims | null } | undefined;
    try {
      cached = await cache.get<{ claims: LicenseClaims | null }>(CACHE_KEY);
    } catch {
      return fromDatabase(); // the cache is an optimisation; the database decides
    }
    if (cached) return cached.claims;
    const claims = await fromDatabase();
    await cache.set(CACHE_KEY, { claims }, CACHE_TTL_MS).catch(() => undefined);
    return claims;
  }

  /** The effective edition and what it grants now. */
  async function current(): Promise<EditionState> {
    return evaluate(await activeClaims(), clock.now());
  }

  return {
    current,

    async isEnterprise(): Promise<boolean> {
      return (await current()).edition === 'enterprise';
    },

    /** Throws edition.enterprise_required (403) unless the instance runs Enterprise. */
    async requireEnterprise(feature?: string): Promise<EditionState> {
      const state = await current();
      if (state.edition !== 'enterprise') {
        throw new AppError('edition.enterprise_required', {
          detail: feature ? `${feature} needs the Enterprise edition` : 'This feature needs the Enterprise edition',
          details: { edition: state.edition, ...(feature ? { feature } : {}) },
        });
      }
      return state;
    },

    /** Drops the cached license in every process sharing the cache. */
    async invalidate(): Promise<void> {
      await cache.del(CACHE_KEY);
    },
  };
}

export type Editions = ReturnType<typeof createEditions>;

export function createLicenseService(deps: EditionsDeps & { editions: Editions }) {
  const { store, clock, editions } = deps;
  return {
    status: () => editions.current(),

    /** Verifies, then stores as the active license; nothing is stored when it fails. */
    async activate(actor: Actor, token: string): Promise<EditionState> {
      const claims = await verifyLicense(token, await deps.keys());
      const now = clock.now();
      const state = evaluate(claims, now);
      if (state.edition !== 'enterprise') {
        throw invalid(
          `The license expired on ${claims.expires_at} and its grace period of ${claims.grace_days} days has ended`,
        );
      }
      const id = await store.activate({
        token: token.trim(),
        edition: claims.edition,
        claims,
        activated_by: actor.kind === 'user' ? actor.id : null,
        now,
      });
      setAuditTarget({
        type: 'license',
        id,
        details: { edition: claims.edition, org_limit: claims.org_limit, expires_at: claims.expires_at },
      });
      await editions.invalidate();
      return state;
    },

    /** Back to Community; idempotent. */
    async remove(): Promise<void> {
      const removed = await store.removeActive(clock.now());
      setAuditTarget({ type: 'license', details: { removed } });
      await editions.invalidate();
    },
  };
}

export type LicenseService = ReturnType<typeof createLicenseService>;
