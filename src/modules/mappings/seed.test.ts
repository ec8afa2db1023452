// Built-in seeding: idempotent, concurrent-safe, and it never takes the live version away
// from a platform administrator's own publication or rollback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createPrincipal, type Principal } from '../../../test/support/identity.js';
import { loginDocument } from '../../../test/support/mappings.js';
import { BUILTIN_MAPPINGS } from '../../pipeline/normalize/builtin/index.js';
import { wireMappings, type Mappings } from './index.js';
import type { BuiltinMapping } from './seed.js';

let t: TestApp;
let mappings: Mappings;
let root: Principal;

type Json = Record<string, unknown>;

function entry(stream: string, document: Json = loginDocument(), name = `Seed ${stream}`): BuiltinMapping {
  return { platform: 'seed_test', stream, name, description: `Built-in for ${stream}`, document };
}

async function state(stream: string) {
  const db = t.container.database.db;
  const defs = await db
    .selectFrom('mapping_definitions')
    .selectAll()
    .where('platform', '=', 'seed_test')
    .where('stream', '=', stream)
    .execute();
  expect(defs).toHaveLength(1);
  const def = defs[0]!;
  const versions = await db
    .selectFrom('mapping_versions')
    .select(['id', 'version', 'builtin', 'comment'])
    .where('definition_id', '=', def.id)
    .orderBy('version')
    .execute();
  const live = versions.find((v) => v.id === def.live_version_id)?.version ?? null;
  return { def, versions, live };
}

function call(method: 'GET' | 'POST', url: string, payload?: Json) {
  return t.app.inject({ method, url, headers: root.headers, ...(payload ? { payload } : {}) });
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  mappings = wireMappings({ db: t.container.database.db, clock: t.container.clock, audit: t.container.audit });
  root = await createPrincipal(t, { role: 'admin' });
});
afterAll(async () => t?.close());

describe('seedBuiltins', () => {
  it('brings the shipped catalog in at start: every entry a live built-in', async () => {
    const body = (await call('GET', '/api/mappings?builtin=true&limit=500')).json<{ items: Json[] }>();
    for (const b of BUILTIN_MAPPINGS) {
      const def = body.items.find((d) => d.platform === b.platform && d.stream === b.stream);
      expect(def, `${b.platform}/${b.stream}`).toMatchObject({
        builtin: true,
        organization_id: null,
        name: b.name,
        live_version: { version: 1 },
      });
    }
    // Starting again changes nothing.
    expect(await mappings.seedBuiltins()).toEqual({ definitionsCreated: 0, versionsAdded: 0, madeLive: 0 });
  });

  it('creates the definition with version 1 live, and is idempotent', async () => {
    expect(await mappings.seedBuiltins([entry('fresh')])).toEqual({
      definitionsCreated: 1,
      versionsAdded: 1,
      madeLive: 1,
    });
    const first = await state('fresh');
    expect(first.def).toMatchObject({
      organization_id: null,
      builtin: true,
      name: 'Seed fresh',
      description: 'Built-in for fresh',
    });
    expect(first.versions).toEqual([expect.objectContaining({ version: 1, builtin: true, comment: 'built-in' })]);
    expect(first.live).toBe(1);
    expect(await mappings.seedBuiltins([entry('fresh')])).toEqual({
      definitionsCreated: 0,
      versionsAdded: 0,
      madeLive: 0,
    });
    expect((await state('fresh')).versions).toHaveLength(1);
  });

  it('is safe when several processes seed at once', async () => {
    const reports = await Promise.all([
      mappings.seedBuiltins([entry('race')]),
      mappings.seedBuiltins([entry('race')]),
      mappings.seedBuiltins([entry('race')]),
    ]);
    expect(reports.reduce((n, r) => n + r.definitionsCreated, 0)).toBe(1);
    expect(reports.reduce((n, r) => n + r.versionsAdded, 0)).toBe(1);
    expect((await state('race')).versions).toHaveLength(1);
  });

  it('adds a changed document as a new live version while the newest built-in is live, and renames', async () => {
    await mappings.seedBuiltins([entry('changing')]);
    const before = (await state('changing')).def.updated_at.getTime();
    const changed = loginDocument([{ target: 'status_id', value: 1 }]);
    expect(await mappings.seedBuiltins([entry('changing', changed, 'Renamed')])).toEqual({
      definitionsCreated: 0,
      versionsAdded: 1,
      madeLive: 1,
    });
    const after = await state('changing');
    expect(after.versions.map((v) => v.version)).toEqual([1, 2]);
    expect(after.live).toBe(2);
    expect(after.def.name).toBe('Renamed');
    expect(after.def.updated_at.getTime()).toBeGreaterThan(before);
  });

  it("keeps a platform administrator's own published version live", async () => {
    await mappings.seedBuiltins([entry('published')]);
    const { def } = await state('published');
    const own = await call('POST', `/api/mappings/${def.id}/versions`, {
      document: loginDocument([{ target: 'message', value: 'ours' }]),
      comment: 'tuned',
    });
    expect(own.statusCode, own.body).toBe(201);
    const changed = loginDocument([{ target: 'status_id', value: 1 }]);
    expect(await mappings.seedBuiltins([entry('published', changed)])).toEqual({
      definitionsCreated: 0,
      versionsAdded: 1,
      madeLive: 0,
    });
    const after = await state('published');
    expect(after.versions.map((v) => [v.version, v.builtin])).toEqual([
      [1, true],
      [2, false],
      [3, true],
    ]);
    expect(after.live).toBe(2);
    // The same shipped document again adds nothing: it is compared with the newest built-in.
    expect((await mappings.seedBuiltins([entry('published', changed)])).versionsAdded).toBe(0);
  });

  it('keeps a rollback to an older built-in version live', async () => {
    await mappings.seedBuiltins([entry('rolled')]);
    await mappings.seedBuiltins([entry('rolled', loginDocument([{ target: 'status_id', value: 1 }]))]);
    const { def } = await state('rolled');
    expect((await call('POST', `/api/mappings/${def.id}/rollback`, { version: 1 })).statusCode).toBe(200);
    const third = loginDocument([{ target: 'status_id', value: 2 }]);
    expect(await mappings.seedBuiltins([entry('rolled', third)])).toEqual({
      definitionsCreated: 0,
      versionsAdded: 1,
      madeLive: 0,
    });
    const after = await state('rolled');
    expect(after.versions.map((v) => v.version)).toEqual([1, 2, 3]);
    expect(after.live).toBe(1);
  });
});
