// Personal and service-account API tokens: issued once, stored as an HMAC, verified with
// one indexed lookup (or a cache hit) and a constant-time comparison. Revocation and owner
// changes drop the cached entry, so they take effect on the next request in every process
// that shares the cache.
import type { Actor } from '../../core/actor.js';
import type { Permission } from '../../core/access.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { isRole, permissionsOf } from '../../core/roles.js';
import type { CachePort } from '../../platform/cache/port.js';
import { afterCommit } from '../../platform/db/ambient.js';
import { generateToken, isWellFormed, safeEqual, tokenHash, tokenPrefix } from '../../platform/crypto/tokens.js';
import type { Owner, TokenRow, TokenStore } from './store.js';

export const API_TOKEN_PREFIX = 'svcsk_';
const CACHE_TTL_MS = 60_000;
/** Longer than any request transaction that revokes a token or changes its owner. */
const SETTLING_MS = 30_000;

export interface CreateTokenInput {
  name: string;
  expires_at?: Date;
  is_eternal?: boolean;
  scopes?: Permission[];
}

interface Snapshot {
  id: number;
  hash: string;
  revoked: boolean;
  expiresAt: string | null;
  scopes: string[] | null;
  owner: {
    kind: Owner['kind'];
    id: number;
    name: string;
    role: string;
    organizationId: number | null;
    active: boolean;
    organizationActive?: boolean;
  };
}

export interface TokenServiceDeps {
  store: TokenStore;
  cache: CachePort;
  clock: Clock;
  hmacKey: Buffer;
}

/** Permissions and organizations an owner's credential carries. */
export function actorFor(
  owner: Snapshot['owner'],
  scopes: string[] | null,
  via: Actor['via'],
  tokenId?: number,
): Actor {
  const rolePerms = permissionsOf(owner.role);
  const permissions = new Set([...rolePerms].filter((p) => scopes === null || scopes.includes(p)));
  // Platform principals (no organization): a user is global; a service account only when
  // its role is administrative, otherwise it resolves to no organization at all.
  const global = owner.organizationId === null && (owner.kind === 'user' || owner.role === 'admin');
  return {
    kind: owner.kind,
    id: owner.id,
    name: owner.name,
    global,
    organizationIds: owner.organizationId === null ? [] : [owner.organizationId],
    permissions,
    via,
    ...(tokenId !== undefined ? { tokenId } : {}),
  };
}

export function createTokenService(deps: TokenServiceDeps) {
  const { store, cache, clock, hmacKey } = deps;
  const lastUsed = new Map<number, Date>();

  async function snapshotOf(hash: string): Promise<Snapshot | undefined> {
    const cached = await cache.get<Snapshot>(`tok:${hash}`);
    if (cached) return cached;
    const found = await store.byHash(hash);
    if (!found) return undefined;
    const t = found.token;
    const snap: Snapshot = {
      id: t.id,
      hash: t.token_hash,
      revoked: t.revoked_at !== null,
      expiresAt: t.expires_at ? t.expires_at.toISOString() : null,
      scopes: t.scopes ?? null,
      owner: {
        kind: t.user_id !== null ? 'user' : 'service_account',
        id: (t.user_id ?? t.service_account_id) as number,
        name: found.ownerName,
        role: found.ownerRole,
        organizationId: found.ownerOrganizationId,
        active: found.ownerActive,
        organizationActive: found.organizationActive,
      },
    };
    // A revocation or owner change in flight (see forget) may commit after this read:
    // such a snapshot is used for this request but not kept.
    if (await cache.get(`tok-settling:${hash}`)) return snap;
    await cache.set(`tok:${hash}`, snap, CACHE_TTL_MS);
    if (await cache.get(`tok-settling:${hash}`)) await cache.del(`tok:${hash}`);
    return snap;
  }

  /**
   * Drops a cached verification. The change that calls this commits later (it runs in the
   * request's transaction), so a concurrent request could read the old row and cache it
   * after the delete; a settling marker keeps that token out of the cache meanwhile.
   */
  async function forget(hash: string): Promise<void> {
    await cache.set(`tok-settling:${hash}`, 1, SETTLING_MS);
    await cache.del(`tok:${hash}`);
    // And once more when the change is visible to every reader.
    await afterCommit(() => cache.del(`tok:${hash}`));
  }

  return {
    /**
     * Issues a token; the value is returned here and never again. `ceiling` is what the
     * issuing credential may do when it is narrower than the owner's role (a scoped token
     * minting a token for its own owner): the new token never gets more than that, and
     * without explicit scopes it inherits the ceiling instead of the whole role.
     */
    async create(
      owner: Owner & { role: string },
      input: CreateTokenInput,
      options: { ceiling?: ReadonlySet<Permission> } = {},
    ): Promise<{ token: string; row: TokenRow }> {
      if (input.is_eternal && input.expires_at) throw errors.invalid('is_eternal cannot be combined with expires_at');
      if (input.expires_at && input.expires_at.getTime() <= clock.now().getTime())
        throw errors.invalid('expires_at must be in the future');
      if (!isRole(owner.role)) throw errors.invalid('The owner has no valid role');
      const rolePerms = permissionsOf(owner.role);
      const ceiling = options.ceiling;
      const held = ceiling ? new Set([...rolePerms].filter((p) => ceiling.has(p))) : rolePerms;
      const missing = (input.scopes ?? []).filter((s) => !held.has(s));
      if (missing.length) {
        throw errors.invalid(`Scopes must be a subset of the owner's permissions; not held: ${missing.join(', ')}`, {
          not_held: missing,
        });
      }
      const scopes = input.scopes ? [...new Set(input.scopes)] : held.size < rolePerms.size ? [...held] : null;
      const taken = () =>
        new AppError('api_token.name_taken', {
          detail: `A token named "${input.name}" already exists (revoked names stay reserved)`,
        });
      if (await store.nameTaken(owner, input.name)) throw taken();
      const token = generateToken(API_TOKEN_PREFIX);
      const row = await store.insert({
        owner,
        name: input.name,
        token_prefix: tokenPrefix(token),
        token_hash: tokenHash(hmacKey, token),
        scopes,
        expires_at: input.expires_at ?? null,
        is_eternal: input.is_eternal === true,
      });
      if (!row) throw taken();
      return { token, row };
    },

    list: (owner: Owner) => store.listActive(owner),

    /** Revokes at once (no grace); false when the owner has no such active token. */
    async revoke(owner: Owner, id: number): Promise<boolean> {
      const existing = await store.findActive(owner, id);
      if (!existing) return false;
      const hash = await store.revoke(id, clock.now());
      if (hash) await forget(hash);
      return true;
    },

    /** Drops cached verifications of an owner's tokens after its state or role changed. */
    async invalidateOwner(owner: Owner): Promise<void> {
      for (const hash of await store.hashesOf(owner)) await forget(hash);
    },

    /** The stored fingerprint of a presented token (its HMAC): a stable per-token key. */
    fingerprint: (presented: string) => tokenHash(hmacKey, presented),

    /** The actor behind a presented token; throws 401 with the spec's details. */
    async verify(presented: string): Promise<Actor> {
      const invalid = () => new AppError('auth.invalid_token', { detail: 'Invalid or expired API token' });
      if (!isWellFormed(presented, API_TOKEN_PREFIX)) throw invalid();
      const hash = tokenHash(hmacKey, presented);
      const snap = await snapshotOf(hash);
      if (!snap || !safeEqual(snap.hash, hash) || snap.revoked) throw invalid();
      if (snap.expiresAt && Date.parse(snap.expiresAt) <= clock.now().getTime()) throw invalid();
      if (!snap.owner.active) {
        // A deactivated service account is indistinguishable from a wrong token (spec).
        if (snap.owner.kind === 'user') throw new AppError('auth.user_inactive', { detail: 'User is inactive' });
        throw invalid();
      }
      // Credentials of a deactivated organization stop working with it.
      if (snap.owner.organizationActive === false) {
        if (snap.owner.kind === 'user')
          throw new AppError('auth.organization_inactive', { detail: 'Organization is inactive' });
        throw invalid();
      }
      lastUsed.set(snap.id, clock.now());
      return actorFor(snap.owner, snap.scopes, 'token', snap.id);
    },

    /** Writes the batched last-use times (called periodically and at shutdown). */
    async flushLastUsed(): Promise<void> {
      if (lastUsed.size === 0) return;
      const batch = new Map(lastUsed);
      lastUsed.clear();
      await store.touch(batch);
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
