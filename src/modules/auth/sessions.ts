// Console sessions: a random cookie value, stored as its SHA-256. Idle sessions end after
// 12 hours, every session after 7 days; activity extends the idle window, written at
// most every 5 minutes rather than on every request.
import { createHash, randomBytes } from 'node:crypto';
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { actorFor } from '../tokens/service.js';
import type { SessionStore } from './store.js';

export const SESSION_COOKIE = 'weir_session';
const IDLE_MS = 12 * 3_600_000;
const ABSOLUTE_MS = 7 * 24 * 3_600_000;
/** The longest a session can live: the cookie's lifetime (idle expiry is enforced here). */
export const SESSION_MAX_AGE_MS = ABSOLUTE_MS;
const TOUCH_EVERY_MS = 5 * 60_000;

export const hashSession = (value: string) => createHash('sha256').update(value).digest('hex');

export function createSessionService(deps: { store: SessionStore; clock: Clock }) {
  const { store, clock } = deps;
  return {
    async open(
      userId: number,
      meta: { ip: string | null; userAgent: string | null },
    ): Promise<{ value: string; expiresAt: Date }> {
      const value = randomBytes(32).toString('base64url');
      const expiresAt = new Date(clock.now().getTime() + IDLE_MS);
      await store.insert({
        id_hash: hashSession(value),
        user_id: userId,
        expires_at: expiresAt,
        ip: meta.ip,
        user_agent: meta.userAgent?.slice(0, 256) ?? null,
      });
      return { value, expiresAt };
    },

    async verify(value: string): Promise<{ actor: Actor; sessionHash: string }> {
      const hash = hashSession(value);
      const row = await store.withUser(hash);
      const now = clock.now();
      if (!row || row.expires_at.getTime() <= now.getTime()) {
        throw new AppError('auth.session_expired', { detail: 'Session expired or signed out' });
      }
      if (!row.is_active) throw new AppError('auth.user_inactive', { detail: 'User is inactive' });
      if (!row.organization_active)
        throw new AppError('auth.organization_inactive', { detail: 'Organization is inactive' });
      if (now.getTime() - row.last_seen_at.getTime() > TOUCH_EVERY_MS) {
        const cap = row.created_at.getTime() + ABSOLUTE_MS;
        await store.touch(hash, now, new Date(Math.min(now.getTime() + IDLE_MS, cap)));
      }
      const actor = actorFor(
        {
          kind: 'user',
          id: row.user_id,
          name: row.username,
          role: row.role,
          organizationId: row.organization_id,
          active: row.is_active,
        },
        null,
        'session',
      );
      return { actor, sessionHash: hash };
    },

    close: (value: string) => store.remove(hashSession(value)),
    /** Ends the session whose hash authenticated a request. */
    end: (hash: string) => store.remove(hash),
    closeOthers: (userId: number, keepHash: string | null) => store.removeOthers(userId, keepHash),
    prune: () => store.pruneExpired(clock.now()),
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
