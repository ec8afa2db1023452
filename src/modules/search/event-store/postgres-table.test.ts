// The event store's table: rows written from a batch's copies, partitions attached on demand,
// idempotent replacement, retention deletes and partition drops, and the size budget's
// measure and chunked deletes of the events received first (PGlite, or PostgreSQL with
// DATABASE_URL).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../core/ids.js';
import { inTransaction } from '../../../platform/db/ambient.js';
import type { StoredCopies } from '../../../pipeline/delivery/engine-port.js';
import { storedCopies } from '../../../pipeline/delivery/routing-write.js';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/db.js';
import { createPostgresEventStore } from './postgres.js';
import { createEventsStore, dayOf, partitionName, type EventsStore } from './postgres-table.js';

let t: TestDatabase;
let store: EventsStore;
const DAY = 86_400_000;
const today = dayOf(Date.now());

function copies(org: number, times: number[], extra: Record<string, unknown> = {}, received?: 'time'): StoredCopies {
  const events = times.map((time, i) => ({
    id: newId(),
    time,
    class_uid: 3002,
    category_uid: 3,
    activity_id: 1,
    severity_id: 1,
    message: `e${i} "quoted" \\ back`,
    ...extra,
  }));
  return storedCopies(
    'dest',
    { organization_id: org, integration_id: 7, stream: 's' },
    events.map((e) => JSON.stringify(e)),
    (i) => ({ id: events[i]!.id, received: received === 'time' ? times[i]! : Date.now(), ocsf: events[i]! }),
  );
}

beforeAll(async () => {
  t = await createTestDatabase();
  store = createEventsStore(t.database.db);
});
afterAll(async () => t?.close());

describe('event store table', () => {
  it('writes a batch into the partitions of its days, created on demand, with the filter columns', async () => {
    const c = copies(1, [today + 1000, today - DAY + 5, today + 2000]);
    await store.prepare([c]);
    await inTransaction(t.database.db, () => store.write([c]));
    const names = (await store.partitions()).map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining([partitionName(today), partitionName(today - DAY)]));
    const rows = await t.database.db
      .selectFrom('events')
      .selectAll()
      .where('organization_id', '=', 1)
      .orderBy('time')
      .execute();
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({
      organization_id: 1,
      integration_id: 7,
      stream: 's',
      class_uid: 3002,
      category_uid: 3,
      activity_id: 1,
      severity_id: 1,
      event_id: c.ids[1],
    });
    expect(new Date(rows[0]!.time).getTime()).toBe(today - DAY + 5);
    expect((rows[0]!.event as { message: string }).message).toBe('e1 "quoted" \\ back');
  });

  it('stores an absurd event time under the receipt time', () => {
    const c = copies(1, [Date.now() + 10 * DAY, 5]);
    for (const t of c.times) expect(Math.abs(t - Date.now())).toBeLessThan(60_000);
  });

  it('replaces a resent batch instead of doubling it', async () => {
    const c = copies(2, [today + 10, today + 20]);
    await store.replace(c);
    await store.replace(c);
    const n = await t.database.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', 2)
      .executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(2);
  });

  it("deletes an organization's old events in bounded chunks and drops a partition", async () => {
    const old = today - 10 * DAY;
    // Received when they happened: retention counts from receipt.
    const c = copies(3, [old + 1, old + 2, old + 3], {}, 'time');
    await store.prepare([c]);
    await inTransaction(t.database.db, () => store.write([c]));
    const name = partitionName(old);
    expect((await store.contents(name)).map((c) => [c.organization_id, c.n])).toEqual([[3, 3]]);
    expect(await store.deleteOlder(name, 3, new Date(old + 2), 10)).toBe(1);
    expect(await store.deleteOrganization(3, 1, 1000)).toBe(1);
    expect(await store.dropPartition(name, 1000)).toBe(true);
    expect((await store.partitions()).map((p) => p.name)).not.toContain(name);
    // The day can be written again: the partition comes back.
    await store.prepare([c]);
    expect((await store.partitions()).map((p) => p.name)).toContain(name);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from events where organization_id = 3`.execute(
      t.database.db,
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('counts bytes of event text (rows from before the column by their jsonb text) and trims the events received first in chunks', async () => {
    await sql`delete from events`.execute(t.database.db);
    const received = (k: number) => today - DAY + k * 1000;
    const c = copies(4, [1, 2, 3, 4, 5].map(received), { pad: 'ü'.repeat(40) }, 'time');
    await store.prepare([c]);
    await inTransaction(t.database.db, () => store.write([c]));
    const bytes = c.lines.map((l) => Buffer.byteLength(l));
    expect(await store.size()).toBe(c.bytes);
    // A row stored before 0024 has no bytes: its jsonb text counts.
    await sql`update events set bytes = null where event_id = ${c.ids[4]!}::uuid`.execute(t.database.db);
    const { rows } = await sql<{
      n: number;
    }>`select octet_length(event::text) as n from events where event_id = ${c.ids[4]!}::uuid`.execute(t.database.db);
    expect(await store.size()).toBe(c.bytes - bytes[4]! + rows[0]!.n);
    // Two rows a statement: the first three would leave it a byte over, so four go, over two statements.
    const events = createPostgresEventStore(t.database.db, { statementTimeoutMs: 10_000, trimChunk: 2 });
    const before = await events.size();
    const out = await events.trim(before - bytes[0]! - bytes[1]! - bytes[2]! - 1);
    expect(out).toEqual({ removed: new Map([[4, 4]]), bytes: bytes[0]! + bytes[1]! + bytes[2]! + bytes[3]! });
    const left = await sql<{ event_id: string }>`select event_id::text from events`.execute(t.database.db);
    expect(left.rows.map((r) => r.event_id)).toEqual([c.ids[4]]);
    expect(await events.size()).toBe(rows[0]!.n);
  });
});
