// POST /api/search/export through the API: an organization's stored events of a time range
// written as Parquet in Security Lake's layout under WEIR_EXPORT_ROOT (the files the answer
// lists exist and hold the events), for administrators of the organization only.
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createPrincipal, type Principal } from '../../../test/support/identity.js';
import { newId } from '../../core/ids.js';
import { inTransaction } from '../../platform/db/ambient.js';
import { storedCopies } from '../../pipeline/delivery/routing-write.js';

type Json = Record<string, unknown>;
let t: TestApp;
let root: string;
let platform: Principal;
let admin: Principal;
let viewer: Principal;
let otherAdmin: Principal;
let org: number;
const NOW = Date.now();

async function call(method: string, url: string, who: Principal, payload?: unknown) {
  return t.app.inject({
    method: method as 'POST',
    url,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'weir-export-api-'));
  t = await createTestApp({ env: { WEIR_EXPORT_ROOT: root } });
  platform = await createPrincipal(t, { role: 'admin', organizationId: null });
  const made = async (name: string) =>
    (await call('POST', '/api/organizations/', platform, { name })).json<{ id: number }>().id;
  org = await made('Export A');
  const other = await made('Export B');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  viewer = await createPrincipal(t, { role: 'viewer', organizationId: org });
  otherAdmin = await createPrincipal(t, { role: 'admin', organizationId: other });
  const events = Array.from({ length: 6 }, (_, i) => ({
    id: newId(),
    ocsf: { class_uid: i % 2 ? 4001 : 3002, time: NOW - i * 1000, actor: { user: { name: `u${i}` } } },
  }));
  const copies = storedCopies(
    'd',
    { organization_id: org, integration_id: 1, stream: 's' },
    events.map((e) => JSON.stringify(e.ocsf)),
    (i) => ({ id: events[i]!.id, received: NOW, ocsf: events[i]!.ocsf }),
  );
  await t.container.eventStore.prepare(newId(), [copies]);
  await inTransaction(t.container.database.db, () => t.container.eventStore.write([copies]));
});
afterAll(async () => {
  await t?.close();
  await rm(root, { recursive: true, force: true });
});

describe('POST /api/search/export', () => {
  it("writes the organization's events of the range as Parquet files in Security Lake's layout, and lists them", async () => {
    const res = await call('POST', '/api/search/export', admin, {
      time: { last: '1h' },
      region: 'eu-central-1',
      account_id: '111122223333',
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ directory: string; rows: number; files: string[]; organization_id: number }>();
    expect(body).toMatchObject({ organization_id: org, rows: 6, region: 'eu-central-1', account_id: '111122223333' });
    expect(body.directory.startsWith(path.join(root, `org-${org}`))).toBe(true);
    expect(body.files.map((f) => f.split('/').slice(0, 5).join('/')).sort()).toEqual([
      expect.stringMatching(/^ext\/weir-authentication\/region=eu-central-1\/accountId=111122223333\/eventDay=\d{8}$/),
      expect.stringMatching(
        /^ext\/weir-network-activity\/region=eu-central-1\/accountId=111122223333\/eventDay=\d{8}$/,
      ),
    ]);
    let read = 0;
    for (const f of body.files) {
      await access(path.join(body.directory, f));
      const buf = await readFile(path.join(body.directory, f));
      read += (await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) }))
        .length;
    }
    expect(read).toBe(6);
  });

  it('is for administrators of the organization; bad input is a 4xx with its reason', async () => {
    expect((await call('POST', '/api/search/export', viewer, { time: { last: '1h' } })).statusCode).toBe(403);
    const foreign = await call('POST', '/api/search/export', otherAdmin, {
      organization_id: org,
      time: { last: '1h' },
    });
    expect([403, 404]).toContain(foreign.statusCode);
    const bad = await call('POST', '/api/search/export', admin, { time: { last: '1h' }, region: '../../etc' });
    expect(bad.statusCode).toBe(422);
    expect(typeof bad.json<{ detail: unknown }>().detail).toBe('string');
  });
});
