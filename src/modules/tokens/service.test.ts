// Small tier: the token service over a fake store, for what HTTP tests cannot time:
// a verification that reads the row just before a revocation commits.
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import { MemoryCache } from '../../platform/cache/memory.js';
import { createTokenService } from './service.js';
import type { TokenRow, TokenStore, TokenWithOwner } from './store.js';

const KEY = Buffer.alloc(32, 7);

function fakeStore() {
  let row: TokenRow | undefined;
  let revoked = false;
  let gate: Promise<void> | undefined;
  const store = {
    insert: async (v: Parameters<TokenStore['insert']>[0]) => {
      row = {
        id: 1,
        user_id: v.owner.id,
        service_account_id: null,
        name: v.name,
        token_prefix: v.token_prefix,
        token_hash: v.token_hash,
        scopes: v.scopes,
        expires_at: v.expires_at,
        is_eternal: v.is_eternal,
        created_at: new Date(),
        last_used_at: null,
        revoked_at: null,
      } as TokenRow;
      return row;
    },
    nameTaken: async () => false,
    findActive: async () => (row && !revoked ? row : undefined),
    revoke: async () => {
      revoked = true;
      return row?.token_hash;
    },
    hashesOf: async () => (row && !revoked ? [row.token_hash] : []),
    // Reads the row as committed when called, then waits for the gate before answering.
    byHash: async (hash: string): Promise<TokenWithOwner | undefined> => {
      const snapshot = row && row.token_hash === hash ? { ...row, revoked_at: revoked ? new Date() : null } : undefined;
      if (gate) await gate;
      return (
        snapshot && {
          token: snapshot,
          ownerName: 'u',
          ownerRole: 'admin',
          ownerOrganizationId: 1,
          ownerActive: true,
          organizationActive: true,
        }
      );
    },
    touch: async () => undefined,
    listActive: async () => [],
  };
  return {
    store: store as unknown as TokenStore,
    hold() {
      let open!: () => void;
      gate = new Promise<void>((r) => (open = r));
      return () => {
        gate = undefined;
        open();
      };
    },
  };
}

describe('token verification cache', () => {
  it('does not keep a snapshot read while a revocation was in flight', async () => {
    const fake = fakeStore();
    const tokens = createTokenService({
      store: fake.store,
      cache: new MemoryCache(),
      clock: systemClock,
      hmacKey: KEY,
    });
    const { token } = await tokens.create({ kind: 'user', id: 1, role: 'admin' }, { name: 't' });

    const release = fake.hold();
    const racing = tokens.verify(token); // reads the row before the revocation
    await new Promise((r) => setTimeout(r, 5));
    expect(await tokens.revoke({ kind: 'user', id: 1 }, 1)).toBe(true);
    release();
    await expect(racing).resolves.toMatchObject({ id: 1 }); // it read the old row: allowed once

    await expect(tokens.verify(token)).rejects.toMatchObject({ code: 'auth.invalid_token' });
  });
});
