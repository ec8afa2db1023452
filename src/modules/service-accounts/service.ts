// Service accounts: non-person owners of API tokens, each with a role and an organization
// (none: a platform account). They are scoped like everything else: an organization admin
// sees and manages only the accounts of its organizations, and only a global caller makes
// platform accounts. Any change to what an account may do (role, activation, removal)
// drops the cached verifications of its tokens at once. Tokens belong to the account, not
// to the person who created it, so they survive changes to that person.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { errors } from '../../core/errors.js';
import type { RoleName } from '../../core/roles.js';
import { scopeOf } from '../../core/scope.js';
import { setAuditTarget } from '../audit/service.js';
import { createdView, tokenInput, type TokenBody } from '../tokens/personal.js';
import type { TokenService } from '../tokens/service.js';
import type { ServiceAccountStore, ServiceAccountWithCount } from './store.js';

export interface CreateAccountInput {
  name: string;
  role: RoleName;
  organization_id?: number;
}

export interface UpdateAccountInput {
  name?: string;
  role?: RoleName;
  is_active?: boolean;
}

export interface ServiceAccountDeps {
  store: ServiceAccountStore;
  tokens: TokenService;
  clock: Clock;
}

const ownerOf = (id: number) => ({ kind: 'service_account' as const, id });

export function createServiceAccountService(deps: ServiceAccountDeps) {
  const { store, tokens, clock } = deps;

  async function find(actor: Actor, id: number): Promise<ServiceAccountWithCount> {
    const account = await store.inScope(scopeOf(actor), id);
    if (!account) throw errors.notFound('Service account');
    setAuditTarget({ organizationId: account.organization_id });
    return account;
  }

  return {
    list: (actor: Actor) => store.list(scopeOf(actor)),

    get: (actor: Actor, id: number) => find(actor, id),

    async create(actor: Actor, input: CreateAccountInput): Promise<ServiceAccountWithCount> {
      const organizationId = input.organization_id ?? null;
      if (organizationId === null) {
        if (!actor.global)
          throw errors.forbidden(
            'Only a platform (global) caller can create a service account without organization_id',
          );
      } else if (!(await store.organizationInScope(scopeOf(actor), organizationId))) {
        throw errors.notFound('Organization');
      }
      const { id } = await store.insert({
        name: input.name,
        role: input.role,
        organization_id: organizationId,
        created_by: actor.kind === 'user' ? actor.id : null,
      });
      return find(actor, id);
    },

    async update(actor: Actor, id: number, input: UpdateAccountInput): Promise<ServiceAccountWithCount> {
      const before = await find(actor, id);
      const changes = Object.fromEntries(
        Object.entries(input).filter(([, v]) => v !== undefined),
      ) as UpdateAccountInput;
      if (Object.keys(changes).length === 0) return before;
      await store.update(id, changes, clock.now());
      const powersChanged =
        (changes.role !== undefined && changes.role !== before.role) ||
        (changes.is_active !== undefined && changes.is_active !== before.is_active);
      if (powersChanged) await tokens.invalidateOwner(ownerOf(id));
      return find(actor, id);
    },

    async remove(actor: Actor, id: number): Promise<void> {
      await find(actor, id);
      // Before the delete: the cascade takes the token rows whose cache entries must go.
      await tokens.invalidateOwner(ownerOf(id));
      await store.remove(id);
    },

    async listTokens(actor: Actor, id: number) {
      await find(actor, id);
      return tokens.list(ownerOf(id));
    },

    /** Scopes are bounded by the account's role, not by the caller's. */
    async createToken(actor: Actor, id: number, body: TokenBody) {
      const account = await find(actor, id);
      const { token, row } = await tokens.create({ ...ownerOf(id), role: account.role }, tokenInput(body));
      setAuditTarget({ details: { token_id: row.id, token_name: row.name } });
      return createdView(token, row);
    },

    async revokeToken(actor: Actor, id: number, tokenId: number): Promise<void> {
      await find(actor, id);
      setAuditTarget({ details: { token_id: tokenId } });
      if (!(await tokens.revoke(ownerOf(id), tokenId))) throw errors.notFound('API token');
    },
  };
}

export type ServiceAccountService = ReturnType<typeof createServiceAccountService>;
