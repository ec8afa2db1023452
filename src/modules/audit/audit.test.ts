import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { executor, inTransaction } from '../../platform/db/ambient.js';
import { entryHash, type AuditRow } from './store.js';
import { MAX_LIMIT } from '../../platform/http/schemas.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let root: Principal;
let adminA: Principal;
let adminB: Principal;
let viewerA: Principal;
let operatorA: Principal;

type Json = Record<string, unknown>;
type Page = { total: number; items: Json[]; limit: number; offset: number };

const SECRET = 'audit-test-secret-key-91c2';

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '100000' } });
  t.container.integrations.platforms.register({
    name: 'secretive',
    display_name: 'Secretive',
    kind: 'pull',
    description: 'test',
    config_schema: {
      type: 'object',
      properties: { api_key: { type: 'string', writeOnly: true } },
      additionalProperties: false,
    },
  });
  orgA = await createOrganization(t, 'Audit A');
  orgB = await createOrganization(t, 'Audit B');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
});
afterAll(async () => t?.close());

function call(
  who: Principal,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
) {
  return t.app.inject({
    method,
    url,
    headers: { ...who.headers, ...headers },
    ...(payload !== undefined ? { payload: payload as Json } : {}),
  });
}

async function entriesOf(correlationId: string): Promise<Json[]> {
  const res = await call(root, 'GET', '/api/history/audit?limit=500');
  return res.json<Page>().items.filter((e) => e.correlation_id === correlationId);
}

describe('the audit mechanism', () => {
  it('writes one entry for a successful mutating call: actor, operation, target, outcome, status, correlation id', async () => {
    const res = await call(
      adminA,
      'POST',
      '/api/integrations/',
      { name: 'Audited', platform: 'custom', organization_id: orgA },
      { 'x-correlation-id': 'corr-create-1' },
    );
    expect(res.statusCode).toBe(201);
    const entries = await entriesOf('corr-create-1');
    expect(entries).toHaveLength(1);
    const e = entries[0] as Json;
    expect(e).toMatchObject({
      actor_kind: 'user',
      actor_id: adminA.id,
      organization_id: orgA,
      operation_id: 'integrations.create',
      method: 'POST',
      path: '/api/integrations/',
      target_type: 'integrations',
      target_id: String(res.json().id),
      outcome: 'success',
      status: 201,
      error_code: null,
      correlation_id: 'corr-create-1',
    });
    expect(typeof e.actor_name).toBe('string');
    expect(e.at).toMatch(/Z$/);
    expect(e.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(e.prev_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(e).sort()).toEqual(
      [
        'seq',
        'at',
        'actor_kind',
        'actor_id',
        'actor_name',
        'organization_id',
        'operation_id',
        'method',
        'path',
        'target_type',
        'target_id',
        'outcome',
        'status',
        'error_code',
        'correlation_id',
        'details',
        'hash',
        'prev_hash',
      ].sort(),
    );
  });

  it('writes a failed entry with the error code for a refused call, whose change is rolled back', async () => {
    const res = await call(
      adminA,
      'POST',
      '/api/integrations/',
      { name: 'AUDITED', platform: 'custom', organization_id: orgA },
      { 'x-correlation-id': 'corr-dup-1' },
    );
    expect(res.statusCode).toBe(409);
    const [e] = await entriesOf('corr-dup-1');
    expect(e).toMatchObject({
      outcome: 'failed',
      status: 409,
      error_code: 'integration.name_taken',
      operation_id: 'integrations.create',
      actor_id: adminA.id,
    });
    const list = await call(adminA, 'GET', '/api/integrations/?limit=500');
    expect(list.json<Page>().items.filter((i) => String(i.name).toLowerCase() === 'audited')).toHaveLength(1);
  });

  it('rolls back the writes a failing operation made before it failed', async () => {
    const parent = await call(adminA, 'POST', '/api/integrations/', {
      name: 'Parent',
      platform: 'custom',
      organization_id: orgA,
    });
    await call(adminA, 'POST', '/api/integrations/', {
      name: 'Child',
      platform: 'custom',
      organization_id: orgA,
      parent_id: parent.json().id,
    });
    // The delete is refused (409) after the row lock and reads: nothing of it stays.
    const res = await call(adminA, 'DELETE', `/api/integrations/${String(parent.json().id)}`, undefined, {
      'x-correlation-id': 'corr-del-409',
    });
    expect(res.statusCode).toBe(409);
    const [e] = await entriesOf('corr-del-409');
    expect(e).toMatchObject({
      outcome: 'failed',
      status: 409,
      error_code: 'integration.has_active_children',
      target_id: String(parent.json().id),
      organization_id: orgA,
    });
    expect((await call(adminA, 'GET', `/api/integrations/${String(parent.json().id)}`)).statusCode).toBe(200);
  });

  it('writes a denied entry for a 403 on a mutating route', async () => {
    const res = await call(
      viewerA,
      'POST',
      '/api/integrations/bulk/deactivate',
      { ids: [1] },
      { 'x-correlation-id': 'corr-denied-1' },
    );
    expect(res.statusCode).toBe(403);
    const [e] = await entriesOf('corr-denied-1');
    expect(e).toMatchObject({
      outcome: 'denied',
      status: 403,
      error_code: 'auth.forbidden',
      actor_id: viewerA.id,
      operation_id: 'integrations.bulk_deactivate',
    });
  });

  it('writes a denied entry when a viewer calls a user.manage route', async (ctx) => {
    if (!t.app.hasRoute({ method: 'POST', url: '/api/auth/users' })) return ctx.skip();
    const body = { username: 'nope', password: 'Viewer-tried-this-1', email: 'n@example.test', role: 'admin' };
    const res = await call(viewerA, 'POST', '/api/auth/users', body, { 'x-correlation-id': 'corr-denied-2' });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toContain('user.manage');
    const entries = await entriesOf('corr-denied-2');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      outcome: 'denied',
      status: 403,
      error_code: 'auth.forbidden',
      actor_id: viewerA.id,
      organization_id: orgA,
      method: 'POST',
      path: '/api/auth/users',
    });
    expect(JSON.stringify(entries)).not.toContain('Viewer-tried-this-1');
  });

  it('never stores a secret: config secrets, token values, passwords, license tokens', async (ctx) => {
    const created = await call(adminA, 'POST', '/api/integrations/', {
      name: 'Secret holder',
      platform: 'secretive',
      organization_id: orgA,
      config: { api_key: SECRET },
    });
    expect(created.statusCode).toBe(201);
    await call(adminA, 'PUT', `/api/integrations/${String(created.json().id)}`, { config: { api_key: `${SECRET}-2` } });
    const secrets = [SECRET];
    // Routes of the identity families (built in parallel): exercised when they are there,
    // successful and refused calls alike, then the whole trail is searched for the values.
    const has = (method: 'POST' | 'PUT', url: string) => t.app.hasRoute({ method, url });
    if (has('POST', '/api/v1/tokens')) {
      const token = await call(viewerA, 'POST', '/api/v1/tokens', { name: 'audited token' });
      expect(token.statusCode).toBe(201);
      secrets.push(String(token.json().token));
    }
    const password = 'Sup3r-secret-passw0rd!';
    if (has('POST', '/api/auth/users')) {
      await call(root, 'POST', '/api/auth/users', {
        username: 'audited-user',
        password,
        email: 'a@example.test',
        role: 'viewer',
        organization_id: orgA,
      });
      secrets.push(password);
    }
    if (has('POST', '/api/auth/login')) {
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: 'audited-user', password: 'Wr0ng-login-secret' },
      });
      secrets.push('Wr0ng-login-secret');
    }
    if (has('POST', '/api/auth/bootstrap')) {
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/bootstrap',
        payload: { username: 'late', password: 'B00tstrap-secret', email: 'b@example.test' },
      });
      secrets.push('B00tstrap-secret');
    }
    if (has('POST', '/api/licenses/activate')) {
      await call(root, 'POST', '/api/licenses/activate', {
        license_token: 'eyJhbGciOiJFZERTQSJ9.license-secret-claims.c2ln',
      });
      secrets.push('license-secret-claims');
    }
    const rows = await t.container.database.db.selectFrom('audit_log').selectAll().execute();
    const everything = JSON.stringify(rows);
    const csv = await call(root, 'GET', '/api/history/audit/csv');
    for (const s of secrets) {
      expect(everything).not.toContain(s);
      expect(csv.body).not.toContain(s);
    }
    if (secrets.length === 1) ctx.annotate('identity routes not present: checked config secrets only');
  });

  it('keeps the chain verifiable', async () => {
    expect(await t.container.audit.verify()).toMatchObject({ ok: true });
  });
});

describe('GET /api/history/', () => {
  it('shows a caller without user.manage only its own entries', async () => {
    await call(operatorA, 'POST', '/api/integrations/', { name: 'op try', platform: 'custom', organization_id: orgA }); // denied
    const res = await call(operatorA, 'GET', '/api/history/');
    expect(res.statusCode).toBe(200);
    const body = res.json<Page>();
    expect(body.total).toBeGreaterThan(0);
    expect(body.items.every((e) => e.actor_id === operatorA.id && e.actor_kind === 'user')).toBe(true);
    const viewer = await call(viewerA, 'GET', '/api/history/?limit=500');
    expect(viewer.json<Page>().items.every((e) => e.actor_id === viewerA.id)).toBe(true);
  });

  it('shows a caller with user.manage every entry of its scope, and only that', async () => {
    await call(
      adminB,
      'POST',
      '/api/integrations/',
      { name: 'B one', platform: 'custom', organization_id: orgB },
      { 'x-correlation-id': 'corr-b-1' },
    );
    const a = await call(adminA, 'GET', '/api/history/?limit=500');
    const items = a.json<Page>().items;
    expect(items.some((e) => e.actor_id === viewerA.id)).toBe(true);
    expect(items.every((e) => e.organization_id === orgA)).toBe(true);
    expect(items.some((e) => e.correlation_id === 'corr-b-1')).toBe(false);
    const all = await call(root, 'GET', '/api/history/?limit=500');
    expect(all.json<Page>().items.some((e) => e.correlation_id === 'corr-b-1')).toBe(true);
  });

  it('paginates newest first with limit and offset and reports the total', async () => {
    const first = await call(root, 'GET', '/api/history/?limit=2');
    const second = await call(root, 'GET', '/api/history/?limit=2&offset=2');
    const p1 = first.json<Page>();
    const p2 = second.json<Page>();
    expect(p1).toMatchObject({ limit: 2, offset: 0 });
    expect(p2).toMatchObject({ limit: 2, offset: 2, total: p1.total });
    expect(p1.total).toBeGreaterThan(4);
    const seqs = [...p1.items, ...p2.items].map((e) => Number(e.seq));
    expect(seqs).toEqual([...seqs].sort((x, y) => y - x));
    expect(new Set(seqs).size).toBe(4);
    const defaults = await call(root, 'GET', '/api/history/');
    expect(defaults.json<Page>()).toMatchObject({ limit: 50, offset: 0 });
  });

  it('filters by time window, operation and outcome', async () => {
    const denied = await call(root, 'GET', '/api/history/?outcome=denied&limit=500');
    expect(denied.json<Page>().total).toBeGreaterThan(0);
    expect(denied.json<Page>().items.every((e) => e.outcome === 'denied')).toBe(true);
    const op = await call(root, 'GET', '/api/history/?operation_id=integrations.create&limit=500');
    expect(op.json<Page>().items.every((e) => e.operation_id === 'integrations.create')).toBe(true);
    const future = await call(root, 'GET', '/api/history/?from=2999-01-01T00:00:00Z');
    expect(future.json<Page>().total).toBe(0);
    const past = await call(root, 'GET', '/api/history/?to=2000-01-01T00:00:00%2B02:00');
    expect(past.json<Page>().total).toBe(0);
    const window = await call(root, 'GET', '/api/history/?from=2000-01-01T00:00:00Z&to=2999-01-01T00:00:00Z');
    expect(window.json<Page>().total).toBe((await call(root, 'GET', '/api/history/')).json<Page>().total);
  });

  it('refuses unknown parameters, bad dates and bad outcomes with 422', async () => {
    expect((await call(root, 'GET', '/api/history/?actor_id=1')).statusCode).toBe(422);
    const date = await call(root, 'GET', '/api/history/?from=yesterday');
    expect(date.statusCode).toBe(422);
    expect(date.json().error.code).toBe('request.invalid_date');
    expect((await call(root, 'GET', '/api/history/?outcome=maybe')).statusCode).toBe(422);
    expect((await call(root, 'GET', `/api/history/?limit=${MAX_LIMIT + 1}`)).statusCode).toBe(422);
  });

  it('needs a credential', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/history/' })).statusCode).toBe(401);
  });
});

describe('GET /api/history/audit', () => {
  it('is refused without user.manage (403 naming it)', async () => {
    for (const who of [viewerA, operatorA]) {
      const res = await call(who, 'GET', '/api/history/audit');
      expect(res.statusCode).toBe(403);
      expect(res.json().detail).toContain('user.manage');
      const csv = await call(who, 'GET', '/api/history/audit/csv');
      expect(csv.statusCode).toBe(403);
    }
  });

  it('shows an organization admin its organizations only; platform entries only to a global caller', async () => {
    // A global caller's bulk call over no organization is a platform entry (organization null).
    await call(
      root,
      'POST',
      '/api/integrations/bulk/deactivate',
      { ids: [987_654] },
      { 'x-correlation-id': 'corr-platform-1' },
    );
    const [platformEntry] = await entriesOf('corr-platform-1');
    expect(platformEntry?.organization_id).toBeNull();
    const a = await call(adminA, 'GET', '/api/history/audit?limit=500');
    expect(a.statusCode).toBe(200);
    const items = a.json<Page>().items;
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((e) => e.organization_id === orgA)).toBe(true);
    const foreign = await call(adminA, 'GET', `/api/history/audit?organization_id=${orgB}`);
    expect(foreign.json<Page>().total).toBe(0);
  });

  it('filters by actor, operation, organization (alias org_id), outcome and time', async () => {
    const byActor = await call(root, 'GET', `/api/history/audit?actor_kind=user&actor_id=${viewerA.id}&limit=500`);
    expect(byActor.json<Page>().total).toBeGreaterThan(0);
    expect(byActor.json<Page>().items.every((e) => e.actor_id === viewerA.id)).toBe(true);
    const byOrg = await call(root, 'GET', `/api/history/audit?org_id=${orgB}&limit=500`);
    expect(byOrg.json<Page>().total).toBeGreaterThan(0);
    expect(byOrg.json<Page>().items.every((e) => e.organization_id === orgB)).toBe(true);
    const combined = await call(
      root,
      'GET',
      `/api/history/audit?organization_id=${orgA}&operation_id=integrations.create&outcome=failed`,
    );
    expect(
      combined
        .json<Page>()
        .items.every(
          (e) => e.organization_id === orgA && e.outcome === 'failed' && e.operation_id === 'integrations.create',
        ),
    ).toBe(true);
    expect(combined.json<Page>().total).toBeGreaterThan(0);
    const conflicting = await call(root, 'GET', `/api/history/audit?org_id=${orgA}&organization_id=${orgB}`);
    expect(conflicting.statusCode).toBe(422);
    expect((await call(root, 'GET', '/api/history/audit?actor_kind=robot')).statusCode).toBe(422);
    expect((await call(root, 'GET', '/api/history/audit?to=not-a-date')).statusCode).toBe(422);
    expect((await call(root, 'GET', '/api/history/audit?from=2999-01-01')).json<Page>().total).toBe(0);
  });
});

describe('GET /api/history/audit/csv', () => {
  it('exports the filtered trail as an RFC 4180 attachment with formulas defused', async () => {
    // A user whose name a spreadsheet would run as a formula, and that needs quoting.
    const db = t.container.database.db;
    const user = await db
      .insertInto('users')
      .values({
        username: '=HYPERLINK("http://evil","x"),1',
        email: 'evil@example.test',
        password_hash: 'x',
        role: 'viewer',
        organization_id: orgA,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const { token } = await t.container.identity.tokens.create(
      { kind: 'user', id: user.id, role: 'viewer' },
      { name: 'evil' },
    );
    const evil = { kind: 'user' as const, id: user.id, token, headers: { authorization: `Bearer ${token}` } };
    expect(
      (await call(evil, 'DELETE', '/api/integrations/1', undefined, { 'x-correlation-id': 'corr-evil' })).statusCode,
    ).toBe(403);

    const res = await call(adminA, 'GET', `/api/history/audit/csv?actor_id=${user.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="audit-[0-9TZ]+\.csv"$/);
    const lines = res.body.split('\r\n');
    expect(lines[0]).toBe(
      'seq,at,actor_kind,actor_id,actor_name,organization_id,operation_id,method,path,target_type,target_id,outcome,status,error_code,correlation_id,details,hash,prev_hash',
    );
    expect(lines).toHaveLength(3); // header, one entry, final CRLF
    expect(lines[1]).toContain(
      `,user,${user.id},"'=HYPERLINK(""http://evil"",""x""),1",${orgA},integrations.delete,DELETE,/api/integrations/1,`,
    );
    expect(lines[1]).toContain(',denied,403,auth.forbidden,corr-evil,{},');
  });

  it('applies the caller scope and the filters; unknown parameters are 422', async () => {
    const a = await call(adminA, 'GET', '/api/history/audit/csv');
    const rows = parseCsv(a.body).slice(1);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r[5] === String(orgA))).toBe(true);
    const none = await call(root, 'GET', '/api/history/audit/csv?from=2999-01-01T00:00:00Z');
    expect(none.body.split('\r\n')).toHaveLength(2);
    expect((await call(root, 'GET', '/api/history/audit/csv?limit=5')).statusCode).toBe(422);
  });

  it('streams a large export, reading the store in batches', async () => {
    const added = await appendEntries(2_100);
    const total = (await call(root, 'GET', '/api/history/audit?limit=1')).json<Page>().total;
    const db = t.container.database.db;
    const spy = vi.spyOn(db, 'selectFrom');
    try {
      const res = await call(root, 'GET', '/api/history/audit/csv');
      expect(res.statusCode).toBe(200);
      expect(res.body.split('\r\n')).toHaveLength(total + 2);
      expect(res.body).toContain(`,bulk-${added - 1},`);
      const reads = spy.mock.calls.filter(([table]) => table === 'audit_log').length;
      expect(reads).toBeGreaterThanOrEqual(Math.ceil(total / 500));
    } finally {
      spy.mockRestore();
    }
    // Over a real socket the reply is chunked: it has no length known in advance.
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/api/history/audit/csv`, { headers: root.headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const text = await res.text();
    expect(text.split('\r\n')).toHaveLength(total + 2);
    expect(await t.container.audit.verify()).toMatchObject({ ok: true, entries: total });
  });
});

/** Appends n chained entries straight into the table (fast setup for the export test). */
async function appendEntries(n: number): Promise<number> {
  await inTransaction(t.container.database.db, async () => {
    const db = executor(t.container.database.db);
    const head = await db
      .selectFrom('audit_chain_head')
      .selectAll()
      .where('id', '=', 1)
      .forUpdate()
      .executeTakeFirstOrThrow();
    let prev = head.hash;
    let seq = Number(head.seq);
    const rows: AuditRow[] = [];
    for (let i = 0; i < n; i++) {
      seq++;
      const body = {
        seq,
        at: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)),
        actor_kind: 'user',
        actor_id: 1,
        actor_name: 'bulk',
        organization_id: orgA,
        operation_id: 'bulk.test',
        method: 'POST',
        path: '/api/bulk',
        target_type: null,
        target_id: null,
        outcome: 'success',
        status: 200,
        error_code: null,
        correlation_id: `bulk-${i}`,
        details: { i, note: 'a, "quoted"\nvalue' },
      };
      const hash = entryHash(prev, body);
      rows.push({ ...body, prev_hash: prev, hash });
      prev = hash;
    }
    for (let i = 0; i < rows.length; i += 500) {
      await db
        .insertInto('audit_log')
        .values(rows.slice(i, i + 500).map((r) => ({ ...r, details: JSON.stringify(r.details) })))
        .execute();
    }
    await db.updateTable('audit_chain_head').set({ seq, hash: prev }).where('id', '=', 1).execute();
  });
  return n;
}

/** RFC 4180 reader, enough to check what the export wrote. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  return rows;
}
