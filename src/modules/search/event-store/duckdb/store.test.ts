// The DuckDB store's own guarantees, beyond the contract: a batch's mark survives a restart (a
// batch that runs again after Weir stopped is not stored twice), a batch that fails half-way
// leaves nothing and no mark (it can be written again), batches arriving together share one
// transaction and a bad one among them fails alone, and a read past the statement timeout is
// interrupted with the timeout's error. A file written before events kept their bytes counts
// its rows' texts in the size budget.
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../../core/ids.js';
import type { StoredCopies } from '../../../../pipeline/delivery/engine-port.js';
import { storedCopies } from '../../../../pipeline/delivery/routing-write.js';
import { StoreTimeout } from '../port.js';
import { SCHEMA_SQL } from './schema.js';
import { createDuckDbEventStore } from './store.js';

const NOW = Date.now();
let dir: string;

function copies(n: number): StoredCopies {
  const events = Array.from({ length: n }, (_, i) => ({
    id: newId(),
    ocsf: { class_uid: 3002, time: NOW - i, message: `event ${i} ${'x'.repeat(200)}`, user: { name: `u${i % 7}` } },
  }));
  return storedCopies(
    'd',
    { organization_id: 1, integration_id: 1, stream: 's' },
    events.map((e) => JSON.stringify(e.ocsf)),
    (i) => ({ id: events[i]!.id, received: NOW, ocsf: events[i]!.ocsf }),
  );
}

const all = { organizationIds: [1], from: new Date(NOW - 86_400_000), to: new Date(NOW + 1), condition: null };
const open = (file: string, statementTimeoutMs = 10_000) =>
  createDuckDbEventStore({ path: file, statementTimeoutMs, memoryLimit: '64MB', threads: 1 });

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'weir-duckdb-store-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('DuckDB event store', () => {
  it('remembers a written batch across a restart: the same batch written again is not stored twice', async () => {
    const file = path.join(dir, 'restart.duckdb');
    const batchId = newId();
    const c = copies(10);
    const first = await open(file);
    await first.prepare(batchId, [c]);
    await first.close();
    const again = await open(file);
    try {
      await again.prepare(batchId, [c]);
      expect(await again.count(all)).toBe(10);
    } finally {
      await again.close();
    }
  });

  it('counts the rows of a file written before the bytes column by their text, and trims them first', async () => {
    const file = path.join(dir, 'before-bytes.duckdb');
    const line = JSON.stringify({ class_uid: 3002, time: NOW - 5_000, message: 'written before the bytes column: é' });
    const old = await DuckDBInstance.create(file);
    const connection = await old.connect();
    // The tables as they were: every statement but the one adding the column.
    for (const statement of SCHEMA_SQL.filter((q) => !q.includes('add column'))) await connection.run(statement);
    await connection.run(`insert into events (received, time, organization_id, integration_id, stream, event_id, event)
      values (epoch_ms(${NOW - 5_000}::BIGINT), epoch_ms(${NOW - 5_000}::BIGINT), 1, 1, 's', '${newId()}'::UUID, '${line}')`);
    connection.closeSync();
    old.closeSync();
    const store = await open(file);
    try {
      const c = copies(3);
      await store.prepare(newId(), [c]);
      expect(await store.size()).toBe(Buffer.byteLength(line) + c.bytes);
      const out = await store.trim(c.bytes);
      expect(out).toEqual({ removed: new Map([[1, 1]]), bytes: Buffer.byteLength(line) });
      expect(await store.count(all)).toBe(3);
    } finally {
      await store.close();
    }
  });

  it('leaves nothing and no mark when a batch fails half-way, so it can be written again', async () => {
    const store = await open(':memory:');
    try {
      const batchId = newId();
      // A copy in the batch's second data chunk cannot be written (its id is not a UUID): the
      // first chunk was already handed to the appender, and the transaction takes it back.
      const bad = copies(3_000);
      bad.ids[2_500] = 'not-a-uuid';
      await expect(store.prepare(batchId, [bad])).rejects.toThrow();
      expect(await store.count(all)).toBe(0);
      await store.prepare(batchId, [copies(8)]);
      expect(await store.count(all)).toBe(8);
    } finally {
      await store.close();
    }
  });

  it('writes batches that arrive together in one transaction, and a bad one among them fails alone', async () => {
    const store = await open(':memory:');
    try {
      const bad = copies(3);
      bad.ids[1] = 'not-a-uuid';
      const good = Array.from({ length: 6 }, () => copies(4));
      const results = await Promise.allSettled(
        [...good.slice(0, 3), bad, ...good.slice(3)].map((c) => store.prepare(newId(), [c])),
      );
      expect(results.map((r) => r.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
        'fulfilled',
      ]);
      expect(await store.count(all)).toBe(24);
      // The same batch twice in one group is stored once.
      const twice = copies(5);
      const id = newId();
      await Promise.all([store.prepare(id, [twice]), store.prepare(id, [twice])]);
      expect(await store.count(all)).toBe(29);
    } finally {
      await store.close();
    }
  });

  it('interrupts a read that runs past the statement timeout, with the timeout as its error', async () => {
    const store = await open(':memory:', 1);
    try {
      for (let b = 0; b < 10; b++) await store.prepare(newId(), [copies(5_000)]);
      // A regex over every stored event's text: far longer than 1 ms.
      const slow = store.count({
        ...all,
        condition: {
          any: Array.from({ length: 20 }, (_, k) => ({ field: 'message', op: 'regex', value: `(x+y|z${k})+$` })),
        },
      });
      await expect(slow).rejects.toBeInstanceOf(StoreTimeout);
    } finally {
      await store.close();
    }
  });
});
