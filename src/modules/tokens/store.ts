import { sql, type Kysely, type Selectable } from 'kysely';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { ApiTokensTable } from '../../platform/db/schema.js';

export type TokenRow = Selectable<ApiTokensTable>;

export interface Owner {
  kind: 'user' | 'service_account';
  id: number;
}

/** A token with what verification needs of its owner, in one query. */
export interface TokenWithOwner {
  token: TokenRow;
  ownerName: string;
  ownerRole: string;
  ownerOrganizationId: number | null;
  ownerActive: boolean;
  /** False when the owner belongs to a deactivated organization. */
  organizationActive: boolean;
}

const ownerColumn = (o: Owner) =>
  (o.kind === 'user' ? 'user_id' : 'service_account_id') as 'user_id' | 'service_account_id';

export function createTokenStore(db: Kysely<DB>) {
  return {
    async insert(values: {
      owner: Owner;
      name: string;
      token_prefix: string;
      token_hash: string;
      scopes: string[] | null;
      expires_at: Date | null;
      is_eternal: boolean;
    }): Promise<TokenRow | undefined> {
      const { owner, scopes, ...rest } = values;
      // A concurrent insert of the same name loses here (undefined) instead of aborting the
      // request's transaction with a unique violation.
      return executor(db)
        .insertInto('api_tokens')
        .values({ ...rest, [ownerColumn(owner)]: owner.id, scopes: scopes === null ? null : JSON.stringify(scopes) })
        .onConflict((oc) => oc.doNothing())
        .returningAll()
        .executeTakeFirst();
    },

    async nameTaken(owner: Owner, name: string): Promise<boolean> {
      const row = await executor(db)
        .selectFrom('api_tokens')
        .select('id')
        .where(ownerColumn(owner), '=', owner.id)
        .where('name', '=', name)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Active tokens of an owner, newest first (revoked ones are not listed). */
    async listActive(owner: Owner): Promise<TokenRow[]> {
      return executor(db)
        .selectFrom('api_tokens')
        .selectAll()
        .where(ownerColumn(owner), '=', owner.id)
        .where('revoked_at', 'is', null)
        .orderBy('id', 'desc')
        .execute();
    },

    async findActive(owner: Owner, id: number): Promise<TokenRow | undefined> {
      return executor(db)
        .selectFrom('api_tokens')
        .selectAll()
        .where(ownerColumn(owner), '=', owner.id)
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
    },

    async revoke(id: number, at: Date): Promise<string | undefined> {
      const row = await executor(db)
        .updateTable('api_tokens')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .returning('token_hash')
        .executeTakeFirst();
      return row?.token_hash;
    },

    async hashesOf(owner: Owner): Promise<string[]> {
      const rows = await executor(db)
        .selectFrom('api_tokens')
        .select('token_hash')
        .where(ownerColumn(owner), '=', owner.id)
        .where('revoked_at', 'is', null)
        .execute();
      return rows.map((r) => r.token_hash);
    },

    async byHash(hash: string): Promise<TokenWithOwner | undefined> {
      const token = await executor(db)
        .selectFrom('api_tokens')
        .selectAll()
        .where('token_hash', '=', hash)
        .executeTakeFirst();
      if (!token) return undefined;
      const orgActive = async (id: number | null) =>
        id === null ||
        ((await executor(db).selectFrom('organizations').select('is_active').where('id', '=', id).executeTakeFirst())
          ?.is_active ??
          false);
      if (token.user_id !== null) {
        const u = await executor(db)
          .selectFrom('users')
          .select(['username', 'role', 'organization_id', 'is_active'])
          .where('id', '=', token.user_id)
          .executeTakeFirst();
        return (
          u && {
            token,
            ownerName: u.username,
            ownerRole: u.role,
            ownerOrganizationId: u.organization_id,
            ownerActive: u.is_active,
            organizationActive: await orgActive(u.organization_id),
          }
        );
      }
      const sa = await executor(db)
        .selectFrom('service_accounts')
        .select(['name', 'role', 'organization_id', 'is_active'])
        .where('id', '=', token.service_account_id as number)
        .executeTakeFirst();
      return (
        sa && {
          token,
          ownerName: sa.name,
          ownerRole: sa.role,
          ownerOrganizationId: sa.organization_id,
          ownerActive: sa.is_active,
          organizationActive: await orgActive(sa.organization_id),
        }
      );
    },

    /** One statement for a whole batch of last-use times. */
    async touch(batch: Map<number, Date>): Promise<void> {
      if (batch.size === 0) return;
      const ids = [...batch.keys()];
      const times = ids.map((id) => (batch.get(id) as Date).toISOString());
      await sql`update api_tokens set last_used_at = v.t
        from unnest(${ids}::int[], ${times}::timestamptz[]) as v(id, t)
        where api_tokens.id = v.id and (api_tokens.last_used_at is null or api_tokens.last_used_at < v.t)`.execute(db);
    },
  };
}

export type TokenStore = ReturnType<typeof createTokenStore>;
