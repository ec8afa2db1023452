// Shared fixtures of the destinations module's medium tests: two fake destination types
// (one that needs a credential, one that takes none), request builders, and an app with
// both types registered, two organizations and their principals.
import type { LightMyRequestResponse } from 'fastify';
import { Type } from 'typebox';
import { expect } from 'vitest';
import type { SinkType } from '../../src/pipeline/sinks/types.js';
import { createTestApp, type TestApp } from './app.js';
import { createOrganization, createPrincipal, type Principal } from './identity.js';

type Json = Record<string, unknown>;
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export const DESTINATIONS = '/api/collectors/destinations';
export const SECRET = 'tok-SECRET-aaaa-1111';

export const SECURE_TYPE: SinkType = {
  type: 'fake_secure',
  title: 'Fake (credential)',
  description: 'Test type with a credential',
  configSchema: Type.Object(
    { url: Type.String({ minLength: 1 }), index: Type.String({ default: 'main' }) },
    { additionalProperties: false },
  ),
  credentialSchema: Type.Object({ token: Type.String({ minLength: 8 }) }, { additionalProperties: false }),
  credentialRequired: true,
  create: () => ({
    send: async () => ({}),
    test: async () => ({ ok: true, detail: 'fine', latency_ms: 1 }),
    close: async () => {},
  }),
};
export const OPEN_TYPE: SinkType = {
  ...SECURE_TYPE,
  type: 'fake_open',
  title: 'Fake (no credential)',
  configSchema: Type.Object({ path: Type.String() }, { additionalProperties: false }),
  credentialSchema: null,
  credentialRequired: false,
};

/** A create body of the credential-holding fake type. */
export const secure = (name: string, extra: Json = {}) => ({
  name,
  type: 'fake_secure',
  config: { url: 'http://127.0.0.1:1' },
  credential: { token: SECRET },
  ...extra,
});
/** A create body of the fake type without a credential. */
export const open = (name: string, extra: Json = {}) => ({ name, type: 'fake_open', config: { path: '/x' }, ...extra });

export interface DestinationsApp {
  t: TestApp;
  orgA: number;
  orgB: number;
  root: Principal;
  adminA: Principal;
  adminB: Principal;
  viewerA: Principal;
  call(who: Principal, method: Method, url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  /** Creates a destination and expects 201. */
  create(who: Principal, body: Json): Promise<Json>;
  /** Empties the tables a destination test writes. */
  clear(): Promise<void>;
}

export async function destinationsApp(): Promise<DestinationsApp> {
  const t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' }, captureLogs: true });
  t.container.destinations.types.register(SECURE_TYPE);
  t.container.destinations.types.register(OPEN_TYPE);
  const orgA = await createOrganization(t, 'Org A');
  const orgB = await createOrganization(t, 'Org B');
  const call = (who: Principal, method: Method, url: string, payload?: unknown) =>
    t.app.inject({ method, url, headers: who.headers, ...(payload !== undefined ? { payload: payload as Json } : {}) });
  return {
    t,
    orgA,
    orgB,
    root: await createPrincipal(t, { role: 'admin' }),
    adminA: await createPrincipal(t, { role: 'admin', organizationId: orgA }),
    adminB: await createPrincipal(t, { role: 'admin', organizationId: orgB }),
    viewerA: await createPrincipal(t, { role: 'viewer', organizationId: orgA }),
    call,
    async create(who, body) {
      const res = await call(who, 'POST', DESTINATIONS, body);
      expect(res.statusCode, res.body).toBe(201);
      return res.json<Json>();
    },
    async clear() {
      const db = t.container.database.db;
      await db.deleteFrom('routes').execute();
      await db.deleteFrom('delivery_batches').execute();
      await db.deleteFrom('ledger').execute();
      await db.deleteFrom('destinations').execute();
    },
  };
}
