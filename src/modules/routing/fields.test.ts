// Route field paths are held to OCSF where a user writes them (create, update, dry run),
// never where a stored route is read or dispatched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { newId } from '../../core/ids.js';

type Json = Record<string, unknown>;
const BASE = '/api/collectors/routes';
let t: TestApp;
let org: number;
let admin: Principal;

const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: Json) =>
  t.app.inject({ method, url, headers: admin.headers, ...(payload !== undefined ? { payload } : {}) });

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  org = await createOrganization(t, 'Fields');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
});
afterAll(async () => t?.close());

describe('unknown route fields', () => {
  it('refuses clas_uid on create with 422 naming class_uid', async () => {
    const res = await call('POST', BASE, {
      name: 'typo',
      destination_ids: [],
      condition: { field: 'clas_uid', op: 'eq', value: 3002 },
    });
    expect(res.statusCode).toBe(422);
    const body = res.json<{ detail: string; error: { code: string; details: { errors: Json[] } } }>();
    expect(body.error.code).toBe('route.invalid_definition');
    expect(body.detail).toMatch(/^condition\.field: unknown field: .*'clas_uid'.*closest known field: 'class_uid'/);
    expect(body.error.details.errors[0]).toMatchObject({ path: 'condition.field', closest: 'class_uid' });
  });

  it('accepts OCSF paths, unmapped vendor fields, array wildcards and envelope fields', async () => {
    const condition = {
      all: [
        { field: 'class_uid', op: 'eq', value: 3002 },
        { field: 'unmapped["okta.debug"].risk', op: 'exists' },
        { field: 'observables[*].value', op: 'contains', value: 'x' },
        { field: 'envelope.stream', op: 'eq', value: 'system_log' },
      ],
    };
    const res = await call('POST', BASE, {
      name: 'good',
      destination_ids: [],
      condition,
      transforms: [{ type: 'drop_fields', fields: ['raw_data', 'unmapped'] }],
    });
    expect(res.statusCode, res.body).toBe(201);
  });

  it('checks the parts an update writes, and only those: a stored route keeps working', async () => {
    // A route stored before the rule (written straight to the table, as an older version would have).
    const id = newId();
    await t.container.database.db
      .insertInto('routes')
      .values({
        id,
        organization_id: org,
        name: 'legacy',
        description: '',
        position: 99,
        enabled: true,
        condition: JSON.stringify({ field: 'clas_uid', op: 'eq', value: 1 }),
        transforms: '[]',
        destination_ids: '[]',
        final: true,
        version: 1,
        created_by: null,
      } as never)
      .execute();
    expect((await call('GET', `${BASE}/${id}`)).statusCode).toBe(200);
    const renamed = await call('PUT', `${BASE}/${id}`, { name: 'legacy (off)', enabled: false });
    expect(renamed.statusCode, renamed.body).toBe(200);
    const fixed = await call('PUT', `${BASE}/${id}`, { condition: { field: 'class_uid', op: 'eq', value: 1 } });
    expect(fixed.statusCode, fixed.body).toBe(200);
    const broken = await call('PUT', `${BASE}/${id}`, { transforms: [{ type: 'keep_fields', fields: ['actor.usr'] }] });
    expect(broken.statusCode).toBe(422);
    expect(broken.json<{ detail: string }>().detail).toContain("closest known field: 'actor.user'");
  });

  it('refuses unknown fields in dry-run drafts too', async () => {
    const res = await call('POST', `${BASE}/dry-run`, {
      events: [{ class_uid: 3002 }],
      routes: [{ condition: { field: 'actor.usr.name', op: 'exists' } }],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json<{ error: { details: { errors: Json[] } } }>().error.details.errors[0]).toMatchObject({
      path: 'routes[0].condition.field',
      closest: 'actor.user.name',
    });
  });
});
