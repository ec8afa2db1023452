// Single sign-on: the authorization-code flow with PKCE (S256), state and nonce. The pending
// login lives in the database (sso_login_states), so any api process may finish it; it
// expires after ten minutes and is taken once (DELETE ... RETURNING). The callback lets
// openid-client check the ID token (issuer, audience, signature, expiry, nonce), maps the
// claims through the rule table, creates or updates the user, and opens the same session
// as a password login. Every failure is a 4xx whose detail says what went wrong, never a
// token or a secret.
import { createHash } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { createRedactor, redactPatterns, type Redactor } from '../../core/redaction.js';
import { basicPair } from '../../pipeline/sinks/secrets.js';
import { rateLimited } from '../../platform/ratelimit/headers.js';
import type { RateLimiterPort } from '../../platform/ratelimit/port.js';
import { setAuditTarget } from '../audit/service.js';
import { SESSION_MAX_AGE_MS, type SessionService } from '../auth/sessions.js';
import { toUser } from '../auth/service.js';
import { actorFor } from '../tokens/service.js';
import type { IdentityConfigService, ResolvedConfig } from './config.js';
import { client, type Oidc } from './oidc.js';
import { reason } from './outbound.js';
import { firstMatch, type Claims } from './rules.js';
import type { IdentityStore } from './store.js';

const STATE_TTL_MS = 10 * 60_000;
/** Sign-ins started per client address and minute: each one stores a pending login. */
const STARTS_PER_MINUTE = 60;
const USERNAME = /^[A-Za-z0-9._@+-]{1,150}$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

const hash = (s: string) => createHash('sha256').update(s).digest('hex');
const failed = (detail: string) => new AppError('sso.login_failed', { detail });
const isControl = (c: string) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f;
const clip = (s: string, n = 300) =>
  [...(s.length > n ? `${s.slice(0, n)}…` : s)].map((c) => (isControl(c) ? ' ' : c)).join('');

/**
 * The redaction destinations use, for what the identity provider says (its error texts reach
 * the 401 and the log): the client secret in every form an echo can carry, the Basic
 * `client_id:client_secret` of client_secret_basic among them, and the pattern layer.
 */
function providerRedactor(config: ResolvedConfig | null): Redactor {
  const secret = config?.clientSecret;
  if (!secret) return redactPatterns;
  return createRedactor([secret, ...basicPair(config.clientId, secret)]);
}

/** A path on this service: absolute path, not protocol-relative, no scheme, no backslash tricks. */
export function safeReturnPath(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return '/';
  if (!raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\') || [...raw].some(isControl)) return null;
  try {
    const u = new URL(raw, 'http://weir.invalid');
    return u.origin === 'http://weir.invalid' ? `${u.pathname}${u.search}${u.hash}` : null;
  } catch {
    return null;
  }
}

export interface SsoDeps {
  store: IdentityStore;
  config: IdentityConfigService;
  oidc: Oidc;
  sessions: SessionService;
  clock: Clock;
  rateLimiter: RateLimiterPort;
  transaction: <T>(fn: () => Promise<T>) => Promise<T>;
  /** A changed role or deactivation takes effect on the user's API tokens at once. */
  invalidateOwner: (owner: { kind: 'user'; id: number }) => Promise<void>;
}

export function createSso(deps: SsoDeps) {
  const { store, oidc, clock } = deps;

  async function enabledConfig(): Promise<ResolvedConfig> {
    const config = await deps.config.resolved();
    if (!config?.enabled)
      throw new AppError('sso.not_configured', {
        detail: 'Single sign-on is not configured: sign in with a username and password',
      });
    return config;
  }

  async function exchange(
    config: ResolvedConfig,
    query: Record<string, string>,
    pending: { nonce: string; code_verifier: string },
    state: string,
  ) {
    const current = new URL(config.redirectUri);
    for (const [k, v] of Object.entries(query)) current.searchParams.set(k, v);
    let cfg: client.Configuration;
    try {
      cfg = await oidc.configuration(config);
    } catch (err) {
      throw failed(providerRedactor(config)(`The identity provider could not be reached: ${reason(err)}`));
    }
    try {
      const tokens = await client.authorizationCodeGrant(cfg, current, {
        pkceCodeVerifier: pending.code_verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      oidc.keepJwks(config, cfg);
      const claims = tokens.claims();
      if (!claims) throw failed('The identity provider returned no ID token');
      return claims as unknown as Claims & { sub: string; iss: string };
    } catch (err) {
      if (err instanceof AppError) throw err;
      const e = err as { error?: unknown; error_description?: unknown };
      const provider =
        typeof e.error === 'string'
          ? ` (${e.error}${typeof e.error_description === 'string' ? `: ${clip(e.error_description, 200)}` : ''})`
          : '';
      throw failed(providerRedactor(config)(`The sign-in was refused: ${clip(reason(err))}${provider}`));
    }
  }

  return {
    async status() {
      const config = await deps.config.resolved().catch(() => null);
      return { enabled: Boolean(config?.enabled) };
    },

    /** Whether a password login may go on for this user (the bootstrap administrator always may). */
    async passwordLoginAllowed(user: { id: number; sso_subject: string | null }): Promise<boolean> {
      if (user.sso_subject === null) return true;
      const config = await deps.config.resolved().catch(() => null);
      if (!config || config.passwordLoginForSsoUsers) return true;
      return (await store.firstUserId()) === user.id;
    },

    /** The provider's authorization URL for a new pending login. */
    async login(returnTo: string | undefined, ip: string | null): Promise<string> {
      const path = safeReturnPath(returnTo);
      if (path === null)
        throw new AppError('request.invalid', {
          detail: 'return_to must be a path on this service, such as /dashboards',
        });
      const config = await enabledConfig();
      const gate = await deps.rateLimiter.hit(`sso:start:${ip ?? 'unknown'}`, STARTS_PER_MINUTE, 60_000);
      if (!gate.allowed)
        throw rateLimited(
          gate,
          (seconds) => `Too many sign-ins started from this address; try again in ${seconds} seconds`,
        );
      let cfg: client.Configuration;
      try {
        cfg = await oidc.configuration(config);
      } catch (err) {
        // A 4xx like every other failure of the sign-in: the detail says what to fix.
        throw failed(providerRedactor(config)(`The identity provider could not be reached: ${reason(err)}`));
      }
      const state = client.randomState();
      const nonce = client.randomNonce();
      const verifier = client.randomPKCECodeVerifier();
      const now = clock.now();
      await store.pruneStates(now);
      await store.insertState({
        state_hash: hash(state),
        nonce,
        code_verifier: verifier,
        return_to: path,
        expires_at: new Date(now.getTime() + STATE_TTL_MS),
      });
      return client
        .buildAuthorizationUrl(cfg, {
          redirect_uri: config.redirectUri,
          scope: config.scopes.join(' '),
          response_type: 'code',
          code_challenge: await client.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
          nonce,
        })
        .toString();
    },

    /** Finishes a login: the user, its session cookie and where to send the browser. */
    async callback(query: Record<string, string>, meta: { ip: string | null; userAgent: string | null }) {
      setAuditTarget({ type: 'user', details: { sso: true } });
      const state = query.state;
      if (!state) throw failed('The callback carries no state: start the sign-in again');
      const pending = await store.takeState(hash(state));
      if (!pending) throw failed('Unknown or already used sign-in state: start the sign-in again');
      if (pending.expires_at.getTime() <= clock.now().getTime())
        throw failed('The sign-in took too long (its state expired): start it again');
      if (query.error) {
        const description = query.error_description ? `: ${clip(query.error_description, 200)}` : '';
        const redact = providerRedactor(await deps.config.resolved().catch(() => null));
        throw failed(redact(`The identity provider refused the sign-in (${clip(query.error, 100)}${description})`));
      }
      if (!query.code) throw failed('The callback carries no authorization code');
      const config = await enabledConfig();
      const claims = await exchange(config, query, pending, state);

      const match = firstMatch(config.rules, claims);
      const rawName = claims[config.usernameClaim];
      const username = typeof rawName === 'string' ? rawName : undefined;
      setAuditTarget({ details: { sso: true, subject: claims.sub, ...(username ? { username } : {}) } });
      if (!match) {
        throw new AppError('sso.not_admitted', {
          detail:
            "The identity provider's claims match no rule of the identity configuration: ask an administrator to admit you",
        });
      }
      if (!username || !USERNAME.test(username)) {
        throw failed(
          `The ID token has no usable "${config.usernameClaim}" claim for the username (letters, digits and . _ @ + -, at most 150)`,
        );
      }
      const email =
        typeof claims.email === 'string' && EMAIL.test(claims.email) && claims.email.length <= 254 ? claims.email : '';
      const { rule } = match;
      const now = clock.now();

      const outcome = await deps.transaction(async () => {
        if (rule.organization_id !== null) {
          const [org] = await store.organizations([rule.organization_id]);
          if (!org)
            throw new AppError('sso.not_admitted', {
              detail: `The rule that matched names organization ${rule.organization_id}, which no longer exists`,
            });
          if (!org.is_active) throw new AppError('auth.organization_inactive', { detail: 'Organization is inactive' });
        }
        const existing = await store.userBySso(config.issuer, claims.sub);
        if (!existing) {
          const row = await store.insertUser({
            username,
            email,
            role: rule.role,
            organization_id: rule.organization_id,
            sso_issuer: config.issuer,
            sso_subject: claims.sub,
            claims,
            now,
          });
          if (!row) {
            throw new AppError('auth.username_taken', {
              detail: `The username "${username}" belongs to another account of this service; an administrator must rename one of them`,
            });
          }
          return { row, created: true, changed: ['created'] };
        }
        if (!existing.is_active) throw new AppError('auth.user_inactive', { detail: 'User is inactive' });
        const changed = [
          ...(existing.role !== rule.role ? ['role'] : []),
          ...(existing.organization_id !== rule.organization_id ? ['organization_id'] : []),
          ...(email && existing.email !== email ? ['email'] : []),
        ];
        const row = await store.updateUser(existing.id, {
          role: rule.role,
          organization_id: rule.organization_id,
          ...(email ? { email } : {}),
          claims,
          last_login_at: now,
        });
        if (changed.includes('role') || changed.includes('organization_id'))
          await deps.invalidateOwner({ kind: 'user', id: row.id });
        return { row, created: false, changed };
      });
      const { row } = outcome;
      const session = await deps.sessions.open(row.id, meta);
      setAuditTarget({
        type: 'user',
        id: row.id,
        organizationId: row.organization_id,
        details: {
          sso: true,
          username: row.username,
          created: outcome.created,
          changed: outcome.changed,
          rule: match.index,
          role: row.role,
        },
      });
      const actor = actorFor(
        {
          kind: 'user',
          id: row.id,
          name: row.username,
          role: row.role,
          organizationId: row.organization_id,
          active: true,
        },
        null,
        'session',
      );
      return {
        user: toUser(row),
        actor,
        returnTo: pending.return_to,
        cookie: {
          value: session.value,
          maxAgeMs: SESSION_MAX_AGE_MS,
          expiresAt: new Date(now.getTime() + SESSION_MAX_AGE_MS),
        },
      };
    },
  };
}

export type Sso = ReturnType<typeof createSso>;
