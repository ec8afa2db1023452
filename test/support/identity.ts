// Principals for tests: organizations, users and service accounts with a token, made
// through the same stores and services the API uses.
import { sql, type Insertable } from 'kysely';
import type { Permission } from '../../src/core/access.js';
import type { RoleName } from '../../src/core/roles.js';
import { hashPassword } from '../../src/modules/auth/passwords.js';
import { newId } from '../../src/core/ids.js';
import type { DB } from '../../src/platform/db/schema.js';
import type { TestApp } from './app.js';

export const TEST_SECRET_KEY = '5e'.repeat(32);

export async function createOrganization(t: TestApp, name: string): Promise<number> {
  const row = await t.container.database.db
    .insertInto('organizations')
    .values({ name, partner_tenant_ids: sql`'[]'::jsonb` as never })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export interface Principal {
  kind: 'user' | 'service_account';
  id: number;
  token: string;
  headers: { authorization: string };
}

let seq = 0;

export async function createPrincipal(
  t: TestApp,
  options: {
    role: RoleName;
    organizationId?: number | null;
    kind?: 'user' | 'service_account';
    scopes?: Permission[];
    password?: string;
  },
): Promise<Principal> {
  const kind = options.kind ?? 'user';
  const db = t.container.database.db;
  const organizationId = options.organizationId ?? null;
  const name = `${kind}-${options.role}-${++seq}-${Date.now().toString(36)}`;
  let id: number;
  if (kind === 'user') {
    const password_hash = await hashPassword(options.password ?? 'correct horse battery');
    id = (
      await db
        .insertInto('users')
        .values({
          username: name,
          email: `${name}@example.test`,
          password_hash,
          role: options.role,
          organization_id: organizationId,
        })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  } else {
    id = (
      await db
        .insertInto('service_accounts')
        .values({ name, role: options.role, organization_id: organizationId })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  }
  const { token } = await t.container.identity.tokens.create(
    { kind, id, role: options.role },
    { name: 'test', ...(options.scopes ? { scopes: options.scopes } : {}) },
  );
  return { kind, id, token, headers: { authorization: `Bearer ${token}` } };
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A request made as `who` through app.inject, with a JSON body when one is given. */
export function injectAs(t: TestApp, who: Principal, method: Method, url: string, payload?: unknown) {
  return t.app.inject({
    method,
    url,
    headers: who.headers,
    ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}),
  });
}

/** An integration row of the organization (no token, no stream), for tests that only need one to exist. */
export async function insertIntegration(
  t: TestApp,
  organizationId: number,
  name: string,
  platform = 'custom',
): Promise<number> {
  const row = await t.container.database.db
    .insertInto('integrations')
    .values({ organization_id: organizationId, name, platform, config: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A destination row (type http, empty config) for tests that only need one to exist; `values` sets other columns. */
export async function insertDestination(
  t: TestApp,
  organizationId: number | null,
  name: string,
  values: Partial<Insertable<DB['destinations']>> = {},
): Promise<string> {
  const id = newId();
  await t.container.database.db
    .insertInto('destinations')
    .values({ id, organization_id: organizationId, name, type: 'http', config: '{}', delivery: '{}', ...values })
    .execute();
  return id;
}
