// The accounting ledger as users read it: the `ledger` of GET /api/collectors/destinations/health
// (modules/delivery-status/balance.ts, the one calculation), read by a platform administrator's
// session (sessions are not rate limited like tokens, so tests may poll it), its rows filtered
// as a test asks.
import type { LedgerRow } from '../../src/modules/delivery-status/balance.js';
import type { TestApp } from './app.js';
import { createPrincipal } from './identity.js';

export type { LedgerRow };
export interface LedgerFilter {
  organization_id?: number;
  integration_id?: number;
  stream?: string;
}

const PASSWORD = 'ledger reader password';
const sessions = new WeakMap<TestApp, Promise<string>>();

async function session(t: TestApp): Promise<string> {
  const admin = await createPrincipal(t, { role: 'admin', password: PASSWORD });
  const { username } = await t.container.database.db
    .selectFrom('users')
    .select('username')
    .where('id', '=', admin.id)
    .executeTakeFirstOrThrow();
  const res = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password: PASSWORD } });
  const cookie = res.headers['set-cookie'];
  const first = (Array.isArray(cookie) ? cookie[0] : cookie)?.split(';')[0];
  if (res.statusCode !== 200 || !first) throw new Error(`ledger reader login: ${res.statusCode} ${res.body}`);
  return first;
}

/** The ledger rows (per organization, integration and stream) matching the filter, as the health API answers them. */
export async function ledgerRows(t: TestApp, filter: LedgerFilter = {}): Promise<LedgerRow[]> {
  let cookie = sessions.get(t);
  if (!cookie) sessions.set(t, (cookie = session(t)));
  const res = await t.app.inject({
    method: 'GET',
    url: '/api/collectors/destinations/health',
    headers: { cookie: await cookie },
  });
  if (res.statusCode !== 200) throw new Error(`destinations health: ${res.statusCode} ${res.body}`);
  const rows = res.json<{ ledger: { rows: LedgerRow[] } }>().ledger.rows;
  return rows.filter(
    (r) =>
      (filter.organization_id === undefined || r.organization_id === filter.organization_id) &&
      (filter.integration_id === undefined || r.integration_id === filter.integration_id) &&
      (filter.stream === undefined || r.stream === filter.stream),
  );
}
