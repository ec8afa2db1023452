// Google service-account auth with domain-wide delegation (RFC 7523, Google's "Using OAuth 2.0
// for Server to Server Applications"): an RS256 JWT signed with the service account's private
// key {iss: client_email, sub: the delegated admin, scope, aud: token_uri, iat, exp <= iat + 1 h}
// is exchanged at token_uri for an access token, cached until it expires.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { configString, VendorError, type ConnectorContext } from '../sdk.js';
import { configUrl } from '../vendor-url.js';

export const REPORTS_SCOPE = 'https://www.googleapis.com/auth/admin.reports.audit.readonly';
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

function privateKey(pem: string): KeyObject {
  // A key copied out of the JSON key file often keeps its escaped newlines.
  const text = pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem;
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch {
    throw new VendorError(
      'config',
      "config.private_key is not a PEM private key (use the private_key of the service account's JSON key)",
    );
  }
  if (key.asymmetricKeyType !== 'rsa')
    throw new VendorError('config', 'config.private_key must be an RSA key (Google service account keys are RSA)');
  return key;
}

function tokenKey(ctx: ConnectorContext): string {
  return `google:${String(ctx.config.token_uri ?? GOOGLE_TOKEN_URI)}:${String(ctx.config.client_email)}:${String(ctx.config.subject)}`;
}

/** The cached access token of the service account acting as config.subject, or a new one. */
export async function accessToken(ctx: ConnectorContext): Promise<string> {
  const clientEmail = configString(ctx.config, 'client_email');
  const subject = configString(ctx.config, 'subject');
  const pem = configString(ctx.config, 'private_key');
  const audience = String(ctx.config.token_uri ?? GOOGLE_TOKEN_URI);
  const tokenUri = configUrl(ctx.config, 'token_uri', GOOGLE_TOKEN_URI);
  return ctx.tokens.get(tokenKey(ctx), async () => {
    const iat = Math.floor(ctx.now().getTime() / 1000);
    const assertion = await new SignJWT({ scope: REPORTS_SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuer(clientEmail)
      .setSubject(subject)
      .setAudience(audience)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 3600)
      .sign(privateKey(pem));
    const res = await ctx.http.request({
      method: 'POST',
      url: tokenUri,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }).toString(),
      accept: [400, 401, 403],
    });
    if (res.status !== 200) {
      let reason = '';
      try {
        const body = JSON.parse(res.text) as { error?: unknown; error_description?: unknown };
        reason = [body.error, body.error_description]
          .filter((v) => typeof v === 'string')
          .join(': ')
          .slice(0, 200);
      } catch {
        // Not the documented {error, error_description}: the status says enough.
      }
      throw new VendorError(
        'auth',
        `${tokenUri.host}: the token endpoint refused the service account (HTTP ${res.status}${reason ? `: ${reason}` : ''}); check the key, domain-wide delegation of ${REPORTS_SCOPE} and the subject`,
        {
          status: res.status,
        },
      );
    }
    const body = res.json<{ access_token?: unknown; expires_in?: unknown }>();
    if (
      typeof body.access_token !== 'string' ||
      body.access_token === '' ||
      typeof body.expires_in !== 'number' ||
      !(body.expires_in > 0)
    ) {
      throw new VendorError(
        'invalid_response',
        `${tokenUri.host}: the token answer has no access_token and expires_in`,
      );
    }
    return { token: body.access_token, expiresInMs: body.expires_in * 1000 };
  });
}

/** Forgets a token the API refused (401), so the next call asks for a new one. */
export function invalidateToken(ctx: ConnectorContext): void {
  ctx.tokens.invalidate(tokenKey(ctx));
}
