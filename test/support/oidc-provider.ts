// A real OpenID Connect provider for tests: oidc-provider on a loopback port, with clients
// and accounts the test chooses. Sign-in interactions are answered by a small handler of
// ours (no HTML forms): the browser driver names the account in the interaction URL
// (?as=<account>). The test may rewrite the claims of the next ID token the token endpoint
// returns (re-signed with the provider's own key) to present, for instance, an ID token
// issued for another client.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, importJWK, SignJWT, type JWK } from 'jose';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

export interface TestAccount {
  preferred_username: string;
  email?: string;
  groups?: string[];
  [claim: string]: unknown;
}

export interface TestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface OidcTestProvider {
  issuer: string;
  accounts: Map<string, TestAccount>;
  /** Rewrites the claims of the next ID token only (then resets itself). */
  rewriteNextIdToken: ((claims: Record<string, unknown>) => Record<string, unknown>) | null;
  /** Signs the next ID token with a key of no one's (same kid): a forged signature. */
  forgeNextIdToken: boolean;
  /**
   * Drives a browser through the provider from an authorization URL as `account`; answers
   * the URL the provider finally redirects to (the client's redirect URI with code or error).
   */
  signIn(authorizationUrl: string, account: string): Promise<URL>;
  close(): Promise<void>;
}

export async function startOidcProvider(options: {
  clients: TestClient[];
  accounts: Record<string, TestAccount>;
  idTokenTtlSeconds?: number;
}): Promise<OidcTestProvider> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...(privateKey.export({ format: 'jwk' }) as JWK), kid: randomUUID(), alg: 'RS256', use: 'sig' };
  const signingKey = await importJWK(jwk, 'RS256');
  const accounts = new Map(Object.entries(options.accounts));

  const server: Server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const configuration: Configuration = {
    clients: options.clients.map((c) => ({
      ...c,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    jwks: { keys: [jwk as never] },
    cookies: { keys: ['weir-test-cookie-key'] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['preferred_username', 'name'],
      groups: ['groups'],
    },
    scopes: ['openid', 'email', 'profile', 'groups'],
    // The claims asked through scopes go in the ID token too (Weir reads the ID token).
    conformIdTokenClaims: false,
    ttl: {
      IdToken: options.idTokenTtlSeconds ?? 60,
      AccessToken: 600,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 600,
      Grant: 600,
    },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, id) => {
      const account = accounts.get(id);
      if (!account) return undefined;
      return { accountId: id, claims: () => ({ sub: id, ...account }) };
    },
    // Every client is first-party here: the grant covers what was asked, no consent screen.
    loadExistingGrant: async (ctx) => {
      const oidc = ctx.oidc;
      if (!oidc.client || !oidc.session?.accountId) return undefined;
      const grant = new oidc.provider.Grant({ clientId: oidc.client.clientId, accountId: oidc.session.accountId });
      grant.addOIDCScope('openid email profile groups');
      await grant.save();
      return grant;
    },
  };
  const provider = new Provider(issuer, configuration);

  const state: OidcTestProvider = {
    issuer,
    accounts,
    rewriteNextIdToken: null,
    forgeNextIdToken: false,
    signIn: (url, account) =>
      drive(
        issuer,
        url,
        account,
        options.clients.flatMap((c) => c.redirect_uris),
      ),
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };

  provider.use(async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    const m = /^\/interaction\/([^/]+)$/.exec(ctx.path);
    if (m) {
      const details = await provider.interactionDetails(ctx.req, ctx.res);
      const as = String(ctx.query.as ?? '');
      const result =
        details.prompt.name === 'login'
          ? { login: { accountId: as } }
          : {
              consent: {
                grantId: await (async () => {
                  const grant = new provider.Grant({
                    clientId: String(details.params.client_id),
                    accountId: String(details.session?.accountId ?? as),
                  });
                  grant.addOIDCScope('openid email profile groups');
                  return grant.save();
                })(),
              },
            };
      const to = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
      ctx.status = 303;
      ctx.redirect(to);
      return;
    }
    await next();
    const rewrite = state.rewriteNextIdToken ?? (state.forgeNextIdToken ? (c: Record<string, unknown>) => c : null);
    if (ctx.path === '/token' && ctx.status === 200 && rewrite && ctx.body && typeof ctx.body === 'object') {
      const key = state.forgeNextIdToken ? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey : signingKey;
      state.rewriteNextIdToken = null;
      state.forgeNextIdToken = false;
      const body = ctx.body as Record<string, unknown>;
      const claims = rewrite(decodeJwt(String(body.id_token)) as Record<string, unknown>);
      body.id_token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'JWT' })
        .sign(key);
    }
  });
  server.on('request', provider.callback());
  return state;
}

/** A browser with a cookie jar following the provider's redirects until it leaves for a redirect URI. */
async function drive(issuer: string, start: string, account: string, redirectUris: string[]): Promise<URL> {
  const jar = new Map<string, string>();
  let url = new URL(start);
  for (let hop = 0; hop < 10; hop++) {
    if (redirectUris.some((r) => url.href.startsWith(r))) return url;
    if (url.origin !== issuer) throw new Error(`the sign-in left the provider for ${url.origin}`);
    if (url.pathname.startsWith('/interaction/')) url.searchParams.set('as', account);
    const res = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      jar.set(pair!.slice(0, i).trim(), pair!.slice(i + 1).trim());
    }
    const location = res.headers.get('location');
    if (!location)
      throw new Error(`the provider answered ${res.status} without a redirect: ${(await res.text()).slice(0, 300)}`);
    url = new URL(location, url);
  }
  throw new Error('too many redirects');
}
