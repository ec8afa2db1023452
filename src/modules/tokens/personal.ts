// The caller's own tokens (/api/v1/tokens). A user issues tokens for itself; a service
// account's tokens are issued by an administrator through the service-account endpoints,
// so a service account calling POST here is told where to go. Listing and revoking work
// for either kind of owner: they only ever touch the caller's own tokens.
import type { Actor } from '../../core/actor.js';
import { PERMISSIONS, type Permission } from '../../core/access.js';
import { parseDate } from '../../core/dates.js';
import { AppError, errors } from '../../core/errors.js';
import type { TokenRow } from './store.js';
import type { CreateTokenInput, TokenService } from './service.js';

export interface TokenBody {
  name: string;
  expires_at?: string;
  is_eternal?: boolean;
  scopes?: Permission[];
  service_account_id?: number;
}

/** The body as the token service takes it (the schema has validated the date's shape). */
export function tokenInput(body: TokenBody): CreateTokenInput {
  const expires = body.expires_at === undefined ? undefined : parseDate(body.expires_at);
  if (expires === null) throw errors.validation('body/expires_at is not a valid date');
  return {
    name: body.name,
    ...(expires ? { expires_at: expires } : {}),
    ...(body.is_eternal !== undefined ? { is_eternal: body.is_eternal } : {}),
    ...(body.scopes ? { scopes: body.scopes } : {}),
  };
}

/** What a creation answer shows of the new token (the value travels beside it once). */
export function createdView(token: string, row: TokenRow) {
  return {
    token,
    api_token: {
      id: row.id,
      name: row.name,
      token_prefix: row.token_prefix,
      expires_at: row.expires_at,
      is_eternal: row.is_eternal,
      scopes: row.scopes,
      created_at: row.created_at,
    },
  };
}

export interface PersonalTokenDeps {
  tokens: TokenService;
  /** The owner's current role is read, never trusted from the credential. */
  roleOfUser(id: number): Promise<string | undefined>;
}

export function createPersonalTokens(deps: PersonalTokenDeps) {
  const { tokens } = deps;
  const ownerOf = (actor: Actor) => ({ kind: actor.kind, id: actor.id });

  return {
    list: (actor: Actor) => tokens.list(ownerOf(actor)),

    async create(actor: Actor, body: TokenBody) {
      if (actor.kind === 'service_account') {
        throw new AppError('api_token.wrong_endpoint', {
          detail:
            'A service account cannot create tokens here; use POST /api/v1/service-accounts/{service_account_id}/tokens',
          details: { endpoint: `/api/v1/service-accounts/${actor.id}/tokens` },
        });
      }
      if (body.service_account_id !== undefined) {
        throw new AppError('api_token.service_account_id_not_allowed', {
          detail:
            'service_account_id is not accepted here; use POST /api/v1/service-accounts/{service_account_id}/tokens',
        });
      }
      const role = await deps.roleOfUser(actor.id);
      if (role === undefined) throw errors.notFound('User');
      // A scoped credential never mints a broader token for its owner.
      const { token, row } = await tokens.create({ kind: 'user', id: actor.id, role }, tokenInput(body), {
        ceiling: actor.permissions,
      });
      return createdView(token, row);
    },

    scopes: (actor: Actor) => ({
      scopes: [...PERMISSIONS],
      held: PERMISSIONS.filter((p) => actor.permissions.has(p)),
    }),

    async revoke(actor: Actor, tokenId: number): Promise<void> {
      if (!(await tokens.revoke(ownerOf(actor), tokenId))) throw errors.notFound('API token');
    },
  };
}

export type PersonalTokens = ReturnType<typeof createPersonalTokens>;
