// The identity configuration (one per platform): the OpenID Connect provider, the rule
// table, the password-login flag and the optional SCIM endpoint. The client secret and the
// SCIM token are sealed with the credential cipher and write-only: answers say whether one
// is set, never what it is; audit entries name the fields that changed, never values.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Actor } from '../../core/actor.js';
import { AppError } from '../../core/errors.js';
import { credentialString } from '../../core/credentials.js';
import type { CredentialCipher } from '../../platform/crypto/credentials.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import { setAuditTarget } from '../audit/service.js';
import type { RoleRule } from './rules.js';
import type { ConfigRow, IdentityStore } from './store.js';

export const DEFAULT_SCOPES = ['openid', 'email', 'profile'];
export const DEFAULT_USERNAME_CLAIM = 'preferred_username';

export interface ConfigInput {
  enabled: boolean;
  issuer: string;
  client_id: string;
  client_secret?: string | null;
  scopes?: string[];
  redirect_uri: string;
  username_claim?: string;
  rules: RoleRule[];
  password_login_for_sso_users?: boolean;
  scim_base_url?: string | null;
  scim_token?: string | null;
}

/** The configuration as the services use it: secrets opened. */
export interface ResolvedConfig {
  enabled: boolean;
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  scopes: string[];
  redirectUri: string;
  usernameClaim: string;
  rules: RoleRule[];
  passwordLoginForSsoUsers: boolean;
  scimBaseUrl: string | null;
  scimToken: string | null;
  updatedAt: Date;
}

interface Problem {
  location: string;
  message: string;
}

function refuse(problems: Problem[]): never {
  const first = problems[0]!;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
  throw new AppError('identity.invalid_config', {
    detail: `${first.location}: ${first.message}${more}`,
    details: { errors: problems },
  });
}

const isLoopbackHost = (host: string) =>
  host === 'localhost' || (isIP(host) !== 0 && ipaddr.process(host).range() === 'loopback');

export function createIdentityConfig(deps: { store: IdentityStore; cipher: CredentialCipher; net: NetPolicy }) {
  const { store, cipher, net } = deps;
  const seal = (field: 'client_secret' | 'scim_token', value: string) => cipher.seal(field, { value });
  function open(field: 'client_secret' | 'scim_token', ciphertext: string | null, keyId: string | null): string | null {
    if (ciphertext === null) return null;
    try {
      return credentialString(cipher.open(field, { ciphertext, keyId }), 'value') ?? null;
    } catch (err) {
      // The message names the key, never the secret.
      throw new AppError('identity.not_configured', {
        detail: `The stored ${field === 'client_secret' ? 'client secret' : 'SCIM token'} cannot be decrypted (${(err as Error).message}): save the identity configuration again with it`,
      });
    }
  }

  /**
   * An absolute URL; https unless the host is a loopback address, and then only when `fetched`
   * URLs may reach it under the outbound policy (WEIR_OUTBOUND_ALLOW_CIDRS), as in tests.
   */
  async function urlProblems(raw: string, location: string, fetched: boolean): Promise<Problem[]> {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      return [{ location, message: 'is not an absolute URL' }];
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return [{ location, message: 'must be an https:// URL' }];
    if (u.username || u.password) return [{ location, message: 'must not carry a user name or password' }];
    if (u.hash) return [{ location, message: 'must not have a fragment' }];
    if (u.protocol === 'http:') {
      const host = u.hostname.replace(/^\[|\]$/g, '');
      const allowed = isLoopbackHost(host) && (!fetched || (await net.refusal(host)) === null);
      if (!allowed)
        return [
          {
            location,
            message: 'must be an https:// URL (plain http only for a loopback address the outbound policy allows)',
          },
        ];
    }
    return [];
  }

  function view(row: ConfigRow | undefined) {
    if (!row) {
      return {
        configured: false,
        enabled: false,
        issuer: null,
        client_id: null,
        client_secret_set: false,
        scopes: DEFAULT_SCOPES,
        redirect_uri: null,
        username_claim: DEFAULT_USERNAME_CLAIM,
        rules: [],
        password_login_for_sso_users: true,
        scim_base_url: null,
        scim_token_set: false,
        updated_at: null,
      };
    }
    return {
      configured: true,
      enabled: row.enabled,
      issuer: row.issuer,
      client_id: row.client_id,
      client_secret_set: row.client_secret !== null,
      scopes: row.scopes as string[],
      redirect_uri: row.redirect_uri,
      username_claim: row.username_claim,
      rules: row.rules as RoleRule[],
      password_login_for_sso_users: row.password_login_for_sso_users,
      scim_base_url: row.scim_base_url,
      scim_token_set: row.scim_token !== null,
      updated_at: row.updated_at,
    };
  }

  return {
    async get() {
      return view(await store.config());
    },

    async put(actor: Actor, input: ConfigInput) {
      const problems: Problem[] = [
        ...(await urlProblems(input.issuer, 'body/issuer', true)),
        ...(await urlProblems(input.redirect_uri, 'body/redirect_uri', false)),
        ...(input.scim_base_url ? await urlProblems(input.scim_base_url, 'body/scim_base_url', true) : []),
      ];
      const scopes = input.scopes ?? DEFAULT_SCOPES;
      if (!scopes.includes('openid')) problems.push({ location: 'body/scopes', message: 'must include openid' });
      const orgIds = [...new Set(input.rules.map((r) => r.organization_id).filter((id): id is number => id !== null))];
      const known = new Map((await store.organizations(orgIds)).map((o) => [o.id, o]));
      input.rules.forEach((rule, i) => {
        if (rule.organization_id !== null && !known.has(rule.organization_id)) {
          problems.push({
            location: `body/rules/${i}/organization_id`,
            message: `organization ${rule.organization_id} does not exist`,
          });
        }
      });
      const previous = await store.config();
      if (input.scim_base_url && input.scim_token === undefined && !previous?.scim_token) {
        problems.push({ location: 'body/scim_token', message: 'is required with scim_base_url' });
      }
      if (problems.length > 0) refuse(problems);

      const secret =
        input.client_secret === undefined
          ? {
              client_secret: previous?.client_secret ?? null,
              client_secret_key_id: previous?.client_secret_key_id ?? null,
            }
          : input.client_secret === null
            ? { client_secret: null, client_secret_key_id: null }
            : (({ ciphertext, keyId }) => ({ client_secret: ciphertext, client_secret_key_id: keyId }))(
                seal('client_secret', input.client_secret),
              );
      const scimToken = !input.scim_base_url
        ? { scim_token: null, scim_token_key_id: null }
        : input.scim_token === undefined || input.scim_token === null
          ? { scim_token: previous?.scim_token ?? null, scim_token_key_id: previous?.scim_token_key_id ?? null }
          : (({ ciphertext, keyId }) => ({ scim_token: ciphertext, scim_token_key_id: keyId }))(
              seal('scim_token', input.scim_token),
            );
      const row = await store.saveConfig({
        enabled: input.enabled,
        issuer: input.issuer,
        client_id: input.client_id,
        ...secret,
        scopes,
        redirect_uri: input.redirect_uri,
        username_claim: input.username_claim ?? DEFAULT_USERNAME_CLAIM,
        rules: input.rules,
        password_login_for_sso_users: input.password_login_for_sso_users ?? true,
        scim_base_url: input.scim_base_url ?? null,
        ...scimToken,
        updated_by: actor.kind === 'user' ? actor.id : null,
      });
      const before = view(previous);
      const after = view(row);
      const changed = (Object.keys(after) as (keyof typeof after)[]).filter(
        (k) => k !== 'updated_at' && JSON.stringify(before[k]) !== JSON.stringify(after[k]),
      );
      if (input.client_secret !== undefined && !changed.includes('client_secret_set'))
        changed.push('client_secret_set');
      if (input.scim_token !== undefined && input.scim_token !== null && !changed.includes('scim_token_set'))
        changed.push('scim_token_set');
      // Names of what changed and the non-secret facts; "client_secret_set" says a secret was written, never its value.
      setAuditTarget({
        type: 'identity_config',
        id: 1,
        organizationId: null,
        details: { changed, enabled: row.enabled, issuer: row.issuer, rules: (row.rules as unknown[]).length },
      });
      return after;
    },

    /** The stored configuration with its secrets opened, or null when none is saved. */
    async resolved(): Promise<ResolvedConfig | null> {
      const row = await store.config();
      if (!row) return null;
      return {
        enabled: row.enabled,
        issuer: row.issuer,
        clientId: row.client_id,
        clientSecret: open('client_secret', row.client_secret, row.client_secret_key_id),
        scopes: row.scopes as string[],
        redirectUri: row.redirect_uri,
        usernameClaim: row.username_claim,
        rules: row.rules as RoleRule[],
        passwordLoginForSsoUsers: row.password_login_for_sso_users,
        scimBaseUrl: row.scim_base_url,
        scimToken: open('scim_token', row.scim_token, row.scim_token_key_id),
        updatedAt: row.updated_at,
      };
    },
  };
}

export type IdentityConfigService = ReturnType<typeof createIdentityConfig>;
