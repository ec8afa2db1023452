// Ingestion tokens (`svcik_`): one per integration, issued once, stored as
// HMAC-SHA-256(server key, token). A push is verified by the checksum first (a forged or
// mistyped token costs nothing), then by a cached lookup of its HMAC. Rotation and
// deletion drop the cached entry in every process sharing the cache, so the old token
// stops working on the next request; last-use times are written in batches.
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { CachePort } from '../../platform/cache/port.js';
import { afterCommit } from '../../platform/db/ambient.js';
import { generateToken, isWellFormed, safeEqual, tokenHash, tokenPrefix } from '../../platform/crypto/tokens.js';
import { API_TOKEN_PREFIX } from '../tokens/service.js';
import type { IngestStore, IngestTokenRow, TokenTarget } from './store.js';

export const INGEST_TOKEN_PREFIX = 'svcik_';
export const WWW_AUTHENTICATE = 'Bearer realm="service"';
/**
 * Bounds how long a deactivated (or removed) integration or organization may still push: one
 * lookup per token every 5 s is nothing next to the pushes it serves. Token rotation and
 * deletion do not wait for it (forget()).
 */
const CACHE_TTL_MS = 5_000;
/** Longer than any request transaction that rotates or deletes a token. */
const SETTLING_MS = 30_000;

const cacheKey = (hash: string) => `ingtok:${hash}`;
const settlingKey = (hash: string) => `ingtok-settling:${hash}`;

/** The integration a verified token pushes to. */
export interface PushTarget {
  integrationId: number;
  organizationId: number;
  platform: string;
  /** The integration config's `text_streams` as stored. */
  textStreams?: unknown;
}

export interface IngestTokenDeps {
  store: IngestStore;
  cache: CachePort;
  clock: Clock;
  hmacKey: Buffer;
}

export function invalidToken(detail = 'Invalid or missing ingestion token'): AppError {
  return new AppError('ingest.invalid_token', { detail, headers: { 'www-authenticate': WWW_AUTHENTICATE } });
}

/** Where an ingestion token comes from, for answers that send the caller to get one. */
export const TOKEN_OPERATION = 'POST /api/ingest/integrations/{integration_id}/token';

/** What the caller presented besides (or instead of) a token, judged from its shape only. */
export interface PresentedCredential {
  token: string | undefined;
  /** A console session cookie came with the push. */
  session?: boolean;
}

/**
 * The 401 for a credential that is not an ingestion token. Judged from the shape alone (an
 * API token's prefix, a session cookie), never from a lookup: the answer says nothing about
 * whether any token exists.
 */
function wrongCredential(presented: PresentedCredential): AppError | undefined {
  const get = `create one with ${TOKEN_OPERATION} (an administrator's API token or session), then send Authorization: Bearer <svcik_...> or X-Ingest-Token`;
  if (presented.token?.startsWith(API_TOKEN_PREFIX)) {
    return invalidToken(
      `This endpoint takes an integration's ingestion token (svcik_...), not an API token (${API_TOKEN_PREFIX}...): ${get}`,
    );
  }
  if (presented.token === undefined && presented.session) {
    return invalidToken(`This endpoint takes an integration's ingestion token, not a console session: ${get}`);
  }
  if (presented.token === undefined)
    return invalidToken(`Missing ingestion token: send Authorization: Bearer <token> or X-Ingest-Token; ${get}`);
  return undefined;
}

export function createIngestTokens(deps: IngestTokenDeps) {
  const { store, cache, clock, hmacKey } = deps;
  const lastUsed = new Map<string, Date>();

  async function targetOf(hash: string): Promise<TokenTarget | undefined> {
    const cached = await cache.get<TokenTarget>(cacheKey(hash));
    if (cached) return cached;
    const found = await store.byHash(hash);
    if (!found) return undefined;
    // A rotation in flight may commit after this read: use the row for this request only.
    if (await cache.get(settlingKey(hash))) return found;
    await cache.set(cacheKey(hash), found, CACHE_TTL_MS);
    if (await cache.get(settlingKey(hash))) await cache.del(cacheKey(hash));
    return found;
  }

  /**
   * Drops a cached verification. The change runs in the request's transaction and commits
   * later, so a concurrent push could read the old row and cache it after this delete; the
   * settling marker keeps the hash out of the cache until the change is visible.
   */
  async function forget(hash: string): Promise<void> {
    await cache.set(settlingKey(hash), 1, SETTLING_MS);
    await cache.del(cacheKey(hash));
    await afterCommit(() => cache.del(cacheKey(hash)));
  }

  return {
    /** Issues (or rotates) the integration's token; the value is returned here only. */
    async issue(
      integration: { id: number; organization_id: number },
      createdBy: number | null,
    ): Promise<{ token: string; row: IngestTokenRow; replaced: boolean }> {
      await store.lockIntegration(integration.id);
      const previous = await store.tokenOf(integration.id);
      const token = generateToken(INGEST_TOKEN_PREFIX);
      const row = await store.replace(
        {
          integration_id: integration.id,
          organization_id: integration.organization_id,
          token_prefix: tokenPrefix(token),
          token_hash: tokenHash(hmacKey, token),
          created_by: createdBy,
        },
        clock.now(),
      );
      if (previous) await forget(previous.token_hash);
      return { token, row, replaced: previous !== undefined };
    },

    /** Deletes the integration's token; false when it had none. */
    async revoke(integrationId: number): Promise<boolean> {
      const hash = await store.remove(integrationId);
      if (!hash) return false;
      await forget(hash);
      return true;
    },

    /**
     * Drops the cached verification of an integration's token. For the integrations and
     * organizations modules to call when an integration or organization is deactivated or
     * removed, so pushes stop at once rather than within the cache lifetime.
     */
    async forgetIntegration(integrationId: number): Promise<void> {
      const row = await store.tokenOf(integrationId);
      if (row) await forget(row.token_hash);
    },

    /** The integration behind a presented token: 401 when unknown or not an ingestion token, 403 when inactive. */
    async verify(credential: PresentedCredential): Promise<PushTarget> {
      const wrong = wrongCredential(credential);
      if (wrong) throw wrong;
      const presented = credential.token as string;
      if (!isWellFormed(presented, INGEST_TOKEN_PREFIX)) throw invalidToken();
      const hash = tokenHash(hmacKey, presented);
      const target = await targetOf(hash);
      if (!target || !safeEqual(target.token_hash, hash)) throw invalidToken();
      if (!target.integration_active) {
        throw new AppError('ingest.integration_inactive', {
          detail: 'The integration of this ingestion token is not active',
        });
      }
      if (!target.organization_active) {
        throw new AppError('ingest.integration_inactive', {
          detail: 'The organization of this ingestion token is not active',
        });
      }
      lastUsed.set(hash, clock.now());
      return {
        integrationId: target.integration_id,
        organizationId: target.organization_id,
        platform: target.platform,
        textStreams: target.text_streams,
      };
    },

    /** A use of the token by this process not yet written to the database. */
    unwrittenUse: (hash: string): Date | undefined => lastUsed.get(hash),

    /** Writes the batched last-use times (called periodically and at shutdown). */
    async flushLastUsed(): Promise<void> {
      if (lastUsed.size === 0) return;
      const batch = new Map(lastUsed);
      lastUsed.clear();
      await store.touch(batch);
    },
  };
}

export type IngestTokens = ReturnType<typeof createIngestTokens>;
