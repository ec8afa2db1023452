// Destination lifecycle: deletion (in use, ledger, state), shadows, credential re-encryption.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/support/app.js';
import {
  DESTINATIONS,
  destinationsApp,
  open,
  secure,
  SECRET,
  SECURE_TYPE,
  type DestinationsApp,
  type Method,
} from '../../../test/support/destinations.js';
import type { Principal } from '../../../test/support/identity.js';
import { newId } from '../../core/ids.js';
import { createCredentialCipher } from '../../platform/crypto/credentials.js';
import { wireDestinations } from './index.js';

let h: DestinationsApp;
let t: TestApp;
let orgA: number;
let root: Principal;
let adminA: Principal;
let adminB: Principal;

type Json = Record<string, unknown>;
const BASE = DESTINATIONS;
const call = (who: Principal, method: Method, url: string, payload?: unknown) => h.call(who, method, url, payload);
const create = (who: Principal, body: Json) => h.create(who, body);

beforeAll(async () => {
  h = await destinationsApp();
  ({ t, orgA, root, adminA, adminB } = h);
});
afterAll(async () => h?.t.close());
beforeEach(async () => h.clear());

describe('DELETE', () => {
  async function outbox(
    destinationId: string,
    kind: 'primary' | 'shadow' | 'reprocess',
    integrationId: number,
    count: number,
  ) {
    await t.container.database.db
      .insertInto('delivery_batches')
      .values({
        id: newId(),
        destination_id: destinationId,
        organization_id: orgA,
        integration_id: integrationId,
        stream: 'auth',
        source_batch_id: newId(),
        kind,
        event_count: count,
        bytes: 10,
        event_ids: '',
        events: '',
      })
      .execute();
  }

  it('refuses while routes use it, naming them', async () => {
    const d = await create(adminA, open('Used'));
    const routeId = newId();
    await t.container.database.db
      .insertInto('routes')
      .values({
        id: routeId,
        organization_id: orgA,
        name: 'r',
        position: 1,
        transforms: '[]',
        destination_ids: JSON.stringify(['other', d.id]),
      })
      .execute();
    const res = await call(adminA, 'DELETE', `${BASE}/${String(d.id)}`);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toMatchObject({ code: 'destination.in_use', details: { route_ids: [routeId] } });
    expect((await call(adminA, 'GET', `${BASE}/${String(d.id)}`)).statusCode).toBe(200);
  });

  it('counts waiting events in the ledger, removes its state, clears shadows to it, then answers 204', async () => {
    const d = await create(adminA, open('Doomed'));
    const id = String(d.id);
    const mirror = await create(adminA, open('Mirrors to doomed'));
    expect(
      (await call(adminA, 'POST', `${BASE}/${String(mirror.id)}/shadow`, { target_destination_id: id })).statusCode,
    ).toBe(200);
    const keep = await create(adminA, open('Untouched'));
    await outbox(id, 'primary', 11, 5);
    await outbox(id, 'reprocess', 11, 2);
    await outbox(id, 'primary', 12, 4);
    await outbox(id, 'shadow', 11, 3);
    await outbox(String(keep.id), 'primary', 11, 9);
    const db = t.container.database.db;
    await db
      .insertInto('dlq_events')
      .values({
        id: newId(),
        destination_id: id,
        organization_id: orgA,
        integration_id: 11,
        stream: 'auth',
        event_id: 'e',
        delivery_batch_id: 'b',
        event: '{}',
        error_kind: 'rejected',
        reason: 'x',
        attempts: 1,
      })
      .execute();
    await db.insertInto('destination_state').values({ destination_id: id }).execute();

    const res = await call(adminA, 'DELETE', `${BASE}/${id}`);
    expect(res.statusCode, res.body).toBe(204);
    expect((await call(adminA, 'GET', `${BASE}/${id}`)).statusCode).toBe(404);
    const ledger = await db
      .selectFrom('ledger')
      .select(['integration_id', 'outcome', 'destination_id', 'reason', 'count'])
      .orderBy('integration_id')
      .orderBy('outcome')
      .execute();
    expect(ledger.map((r) => ({ ...r, count: Number(r.count) }))).toEqual([
      { integration_id: 11, outcome: 'dead_lettered', destination_id: id, reason: 'destination_deleted', count: 7 },
      { integration_id: 11, outcome: 'shadow_dropped', destination_id: id, reason: 'destination_deleted', count: 3 },
      { integration_id: 12, outcome: 'dead_lettered', destination_id: id, reason: 'destination_deleted', count: 4 },
    ]);
    const left = await db.selectFrom('delivery_batches').select(['destination_id', 'event_count']).execute();
    expect(left).toEqual([{ destination_id: keep.id, event_count: 9 }]);
    expect(await db.selectFrom('dlq_events').select('id').where('destination_id', '=', id).execute()).toEqual([]);
    expect(
      await db.selectFrom('destination_state').select('destination_id').where('destination_id', '=', id).execute(),
    ).toEqual([]);
    expect((await call(adminA, 'GET', `${BASE}/${String(mirror.id)}`)).json()).toMatchObject({
      shadow_destination_id: null,
      version: 3,
    });
    const entry = await db
      .selectFrom('audit_log')
      .select(['details', 'outcome'])
      .where('operation_id', '=', 'destinations.delete')
      .where('target_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({
      outcome: 'success',
      details: {
        cleared_shadows: [mirror.id],
        outbox_events_dead_lettered: 11,
        shadow_events_dropped: 3,
        dlq_events_removed: 1,
      },
    });
  });
});

describe('shadow', () => {
  it('sets and clears a mirror within the organization or to a global destination; refuses the rest', async () => {
    const a1 = String((await create(adminA, open('a1'))).id);
    const a2 = String((await create(adminA, open('a2'))).id);
    const a3 = String((await create(adminA, open('a3'))).id);
    const b1 = String((await create(adminB, open('b1'))).id);
    const g1 = String((await create(root, open('g1'))).id);
    const g2 = String((await create(root, open('g2'))).id);
    const shadow = (who: Principal, from: string, to: string | null) =>
      call(who, 'POST', `${BASE}/${from}/shadow`, { target_destination_id: to });

    const set = await shadow(adminA, a1, a2);
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ shadow_destination_id: a2, version: 2 });
    expect((await shadow(adminA, a2, a3)).statusCode).toBe(200);
    expect((await shadow(adminA, a3, g1)).statusCode).toBe(200);
    expect((await shadow(root, g1, g2)).statusCode).toBe(200);

    for (const [who, from, to] of [
      [adminA, a1, a1],
      [adminA, a3, a1],
      [adminA, a1, b1],
      [adminA, a1, 'missing'],
      [root, g2, g1],
      [root, g2, a1],
    ] as [Principal, string, string][]) {
      const res = await shadow(who, from, to);
      expect(res.statusCode, `${from} -> ${to}`).toBe(422);
      expect(res.json().error.code).toBe('destination.invalid_shadow');
    }
    const cleared = await shadow(adminA, a1, null);
    expect(cleared.json()).toMatchObject({ shadow_destination_id: null, version: 3 });
    expect((await t.container.destinations.directory.list()).find((d) => d.id === a2)).toMatchObject({
      shadow_destination_id: a3,
      organization_id: orgA,
      enabled: true,
    });
  });
});

describe('credential re-encryption after a master key rotation', () => {
  it('re-seals credentials of a previous key, idempotently, and counts the ones it cannot open', async () => {
    const oldKey = randomBytes(32);
    const lostKey = randomBytes(32);
    const db = t.container.database.db;
    const insert = async (name: string, key: Buffer) => {
      const id = newId();
      const sealed = createCredentialCipher(key).seal(id, { token: SECRET });
      await db
        .insertInto('destinations')
        .values({
          id,
          organization_id: orgA,
          name,
          type: 'fake_secure',
          config: '{"url":"u"}',
          delivery: '{}',
          credential: sealed.ciphertext,
          credential_key_id: sealed.keyId,
          disabled_reason: null,
          credential_updated_at: null,
          shadow_destination_id: null,
          created_by: null,
        })
        .execute();
      return id;
    };
    const movable = await insert('old key', oldKey);
    await insert('lost key', lostKey);
    await create(adminA, secure('current key'));
    const rewired = wireDestinations({
      db,
      clock: t.container.clock,
      logger: t.container.logger,
      audit: t.container.audit,
      credentialKeys: { current: t.container.keys.key('credentials'), previous: [oldKey] },
      outboundAllowCidrs: [],
      fileRoot: '/nonexistent',
      sinkTypes: [SECURE_TYPE],
    });
    expect(await rewired.reencryptCredentials()).toEqual({ reencrypted: 1, failed: 1 });
    expect(await rewired.reencryptCredentials()).toEqual({ reencrypted: 0, failed: 1 });
    // The container's own cipher (current key only) now opens it.
    expect(await t.container.destinations.directory.credential(movable)).toEqual({ token: SECRET });
    const lost = await db
      .selectFrom('destinations')
      .select('id')
      .where('name', '=', 'lost key')
      .executeTakeFirstOrThrow();
    await expect(t.container.destinations.directory.credential(lost.id)).rejects.toMatchObject({
      name: 'DeliveryError',
      kind: 'config',
    });
    expect(JSON.stringify(t.logs)).not.toContain(SECRET);
  });
});
