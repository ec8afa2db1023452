// The event store on DuckDB (the embedded default; docs/search.md, decision 0058): one file
// beside the embedded database, columnar, read by DuckDB's own threads off Node's main thread.
// Writes: the pass's copies of one batch go in one DuckDB transaction through the appender
// (data chunks, not row INSERTs) with a mark of the batch id, before the batch's database
// transaction; a batch written again after that transaction failed finds its mark and is not
// stored twice. Reads: the condition language compiled to DuckDB SQL (condition.ts), each read on
// its own connection, interrupted at the statement timeout. Retention deletes by receipt time;
// the size budget (trim) deletes the events received first until the store is under it.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  DuckDBDataChunk,
  DuckDBInstance,
  DuckDBTimestampMillisecondsValue,
  DuckDBUUIDValue,
  INTEGER,
  TIMESTAMP_MS,
  UUID,
  VARCHAR,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { StoredCopies } from '../../../../pipeline/delivery/engine-port.js';
import { STORED_COLUMNS } from '../../../../pipeline/delivery/stored-columns.js';
import {
  StoreTimeout,
  type Bucket,
  type EventStore,
  type PagedEvent,
  type RetentionRemoved,
  type StoredRow,
  type StoreScope,
  type TrimRemoved,
} from '../port.js';
import { duckCondition } from './condition.js';
import { duckFieldJson, duckGroupKey, duckSortKeys, duckTopSource } from './fields.js';
import { registerConditionFunctions } from './operators.js';
import { sqlString } from './sql.js';
import { writeSecurityLake } from '../parquet-export.js';
import { SCHEMA_SQL } from './schema.js';

const DAY = 86_400_000;
/** Rows per data chunk (DuckDB's vector size). */
const CHUNK_ROWS = 2048;
/** How long a batch's mark is kept (a batch is not retried after this). */
const MARK_DAYS = 14;

const TYPES: DuckDBType[] = [
  TIMESTAMP_MS,
  TIMESTAMP_MS,
  INTEGER,
  INTEGER,
  VARCHAR,
  INTEGER,
  INTEGER,
  INTEGER,
  INTEGER,
  UUID,
  ...STORED_COLUMNS.map(() => VARCHAR),
  VARCHAR,
  INTEGER,
];

export interface DuckDbStoreOptions {
  /** The database file, or ':memory:'. */
  path: string;
  statementTimeoutMs: number;
  /** DuckDB's memory limit (e.g. '256MB') and worker threads. */
  memoryLimit: string;
  threads: number;
}

/** A time as a TIMESTAMP_MS literal: the columns' own type, so DuckDB skips row groups by their min and max instead of casting every row. */
const ms = (v: number) => `epoch_ms(${Math.trunc(v)}::BIGINT)::TIMESTAMP_MS`;
/** Checkpoint the WAL into the file once it holds this much: rarer checkpoints rewrite the table's open row group less often (bench/README.md, search). */
const CHECKPOINT_THRESHOLD = '256MB';

/** An event row's bytes of event text; rows written before the column count their text. */
const ROW_BYTES = 'coalesce(bytes, strlen(event::VARCHAR))';

/** The organizations and the time range as SQL (no organization: nothing). */
function range(organizationIds: readonly number[], from: Date, to: Date): string {
  const orgs = organizationIds.length ? organizationIds.map((o) => String(Math.trunc(o))).join(', ') : 'NULL';
  return `organization_id in (${orgs}) and time >= ${ms(from.getTime())} and time < ${ms(to.getTime())}`;
}

function base(scope: StoreScope): string {
  return `${range(scope.organizationIds, scope.from, scope.to)} and (${duckCondition(scope.condition)})`;
}

/** A JSON text DuckDB returned, as the value it holds (null for SQL NULL). */
function parsed(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? JSON.parse(v) : v;
}

export async function createDuckDbEventStore(opts: DuckDbStoreOptions): Promise<EventStore> {
  if (opts.path !== ':memory:') mkdirSync(path.dirname(opts.path), { recursive: true });
  const instance = await DuckDBInstance.create(opts.path, {
    memory_limit: opts.memoryLimit,
    threads: String(opts.threads),
  });
  const writer = await instance.connect();
  for (const statement of SCHEMA_SQL) await writer.run(statement);
  await writer.run(`set checkpoint_threshold = '${CHECKPOINT_THRESHOLD}'`);
  // The condition SQL's helper functions, registered once for the whole instance.
  registerConditionFunctions(writer);
  let closed = false;

  // One write at a time on the writer connection (DuckDB transactions are per connection).
  let tail: Promise<unknown> = Promise.resolve();
  function serially<T>(fn: () => Promise<T>): Promise<T> {
    const next = tail.then(fn, fn);
    tail = next.catch(() => undefined);
    return next;
  }

  async function inWriteTransaction<T>(fn: () => Promise<T>): Promise<T> {
    await writer.run('begin transaction');
    try {
      const out = await fn();
      await writer.run('commit');
      return out;
    } catch (err) {
      await writer.run('rollback').catch(() => undefined);
      throw err;
    }
  }

  /** Appends the copies through the appender, a data chunk at a time. */
  async function append(stored: readonly StoredCopies[]): Promise<void> {
    const appender = await writer.createAppender('events');
    try {
      for (const s of stored) {
        for (let start = 0; start < s.ids.length; start += CHUNK_ROWS) {
          const end = Math.min(s.ids.length, start + CHUNK_ROWS);
          const n = end - start;
          const columns: DuckDBValue[][] = TYPES.map(() => new Array<DuckDBValue>(n));
          for (let i = 0; i < n; i++) {
            const k = start + i;
            columns[0]![i] = new DuckDBTimestampMillisecondsValue(BigInt(Math.trunc(s.received[k]!)));
            columns[1]![i] = new DuckDBTimestampMillisecondsValue(BigInt(Math.trunc(s.times[k]!)));
            columns[2]![i] = s.organization_id;
            columns[3]![i] = s.integration_id;
            columns[4]![i] = s.stream;
            columns[5]![i] = s.class_uid[k]!;
            columns[6]![i] = s.category_uid[k]!;
            columns[7]![i] = s.activity_id[k]!;
            columns[8]![i] = s.severity_id[k]!;
            columns[9]![i] = DuckDBUUIDValue.fromUint128(BigInt(`0x${s.ids[k]!.replaceAll('-', '')}`));
            const hot = s.columns[k]!;
            for (let c = 0; c < STORED_COLUMNS.length; c++) columns[10 + c]![i] = hot[c] ?? null;
            columns[10 + STORED_COLUMNS.length]![i] = s.lines[k]!;
            columns[11 + STORED_COLUMNS.length]![i] = Buffer.byteLength(s.lines[k]!);
          }
          const chunk = DuckDBDataChunk.create(TYPES, n);
          chunk.setColumns(columns);
          appender.appendDataChunk(chunk);
        }
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }

  /**
   * The pass's batches waiting to be written. Batches that arrive while one is being written go
   * together in the next DuckDB transaction (a group commit: one commit, one look-up of marks),
   * so many small batches (syslog's, say) do not each pay a commit; when that transaction
   * fails, each batch is tried alone, so one bad batch fails only itself.
   */
  const pending: { batchId: string; stored: readonly StoredCopies[]; resolve(): void; reject(err: unknown): void }[] =
    [];

  async function writeBatches(group: readonly { batchId: string; stored: readonly StoredCopies[] }[]): Promise<void> {
    await inWriteTransaction(async () => {
      const ids = [...new Set(group.map((g) => g.batchId))];
      const marked = await writer.runAndReadAll(
        `select batch_id from stored_batches where batch_id in (${ids.map(sqlString).join(', ')})`,
      );
      const seen = new Set((marked.getRowsJS() as [string][]).map(([id]) => id));
      const fresh = group.filter((g) => !seen.has(g.batchId) && (seen.add(g.batchId), true));
      if (fresh.length === 0) return;
      await append(fresh.flatMap((g) => g.stored));
      const at = ms(Date.now());
      await writer.run(
        `insert into stored_batches values ${fresh.map((g) => `(${sqlString(g.batchId)}, ${at})`).join(', ')}`,
      );
    });
  }

  async function drain(): Promise<void> {
    while (pending.length > 0) {
      const group = pending.splice(0, pending.length);
      try {
        await writeBatches(group);
        for (const g of group) g.resolve();
      } catch (err) {
        if (group.length === 1) {
          group[0]!.reject(err);
          continue;
        }
        for (const g of group) {
          try {
            await writeBatches([g]);
            g.resolve();
          } catch (one) {
            g.reject(one);
          }
        }
      }
    }
  }

  /** One read on a connection of its own, interrupted at the statement timeout. */
  async function read<T extends Record<string, unknown>>(text: string): Promise<T[]> {
    const connection = await instance.connect();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      connection.interrupt();
    }, opts.statementTimeoutMs);
    try {
      const reader = await connection.runAndReadAll(text);
      return reader.getRowObjectsJS() as T[];
    } catch (err) {
      if (timedOut) throw new StoreTimeout(opts.statementTimeoutMs);
      throw err;
    } finally {
      clearTimeout(timer);
      connection.closeSync();
    }
  }

  const idList = (ids: readonly string[]) => ids.map((id) => `${sqlString(id)}::UUID`).join(', ');

  async function rows(
    scope: StoreScope,
    o: { fields: string[] | null; sort: { field: string; order: 'asc' | 'desc' }[]; limit: number; offset?: number },
  ): Promise<StoredRow[]> {
    if (o.limit === 0) return [];
    const order = [...o.sort.flatMap((s) => duckSortKeys(s.field, s.order)), 'event_id'].join(', ');
    const projection = o.fields
      ? o.fields.map((f, i) => `(${duckFieldJson(f)})::VARCHAR as f${i}`).join(', ')
      : 'event::VARCHAR as event';
    const found = await read<Record<string, unknown>>(`
      select event_id::VARCHAR as event_id, epoch_ms(time) as t, organization_id, integration_id, stream, ${projection}
      from events where ${base(scope)}
      order by ${order}
      limit ${Math.trunc(o.limit)} offset ${Math.trunc(o.offset ?? 0)}`);
    return found.map((r) => {
      const out: StoredRow = {
        event_id: r.event_id as string,
        time: new Date(Number(r.t)).toISOString(),
        organization_id: Number(r.organization_id),
        integration_id: Number(r.integration_id),
        stream: r.stream as string,
      };
      if (o.fields) out.fields = Object.fromEntries(o.fields.map((f, i) => [f, parsed(r[`f${i}`])]));
      else out.event = JSON.parse(r.event as string) as Record<string, unknown>;
      return out;
    });
  }

  async function count(scope: StoreScope): Promise<number> {
    const r = await read<{ n: bigint }>(`select count(*) as n from events where ${base(scope)}`);
    return Number(r[0]?.n ?? 0);
  }

  async function countBy(scope: StoreScope, fields: string[], size: number): Promise<Bucket[]> {
    const keys = fields.map(duckGroupKey);
    const groups = fields.map((_, i) => String(i + 1)).join(', ');
    const r = await read<Record<string, unknown>>(`
      select ${keys.map((k, i) => `${k.expr} as k${i}`).join(', ')}, count(*) as n from events where ${base(scope)}
      group by ${groups} order by n desc, ${groups} limit ${Math.trunc(size)}`);
    const value = (v: unknown, decode: 'json' | 'value') =>
      decode === 'json' ? parsed(v) : typeof v === 'bigint' ? Number(v) : (v ?? null);
    return r.map((row) => ({
      key: Object.fromEntries(fields.map((f, i) => [f, value(row[`k${i}`], keys[i]!.decode)])),
      count: Number(row.n),
    }));
  }

  async function top(scope: StoreScope, field: string, size: number): Promise<{ value: unknown; count: number }[]> {
    // A searched field groups on its column; a [*] path counts every element; ties in the pass's value order.
    const src = duckTopSource(field);
    const r = await read<{ value: unknown; n: bigint }>(`
      select value, n from (
        select v as value, count(*) as n from (select ${src.value} as v from events ${src.from} where ${base(scope)}) s
        where v is not null and v <> 'null' group by 1
      ) t order by n desc, ${src.order.join(', ')} limit ${Math.trunc(size)}`);
    return r.map((row) => ({ value: parsed(row.value), count: Number(row.n) }));
  }

  async function histogram(scope: StoreScope, intervalMs: number): Promise<{ start: string; count: number }[]> {
    const origin = scope.from.getTime();
    const step = Math.max(1, Math.trunc(intervalMs));
    const r = await read<{ b: bigint; n: bigint }>(`
      select (epoch_ms(time) - ${origin}) // ${step} as b, count(*) as n from events where ${base(scope)} group by 1`);
    const found = new Map(r.map((row) => [origin + Number(row.b) * step, Number(row.n)]));
    const out: { start: string; count: number }[] = [];
    for (let t = origin; t < scope.to.getTime(); t += step)
      out.push({ start: new Date(t).toISOString(), count: found.get(t) ?? 0 });
    return out;
  }

  async function page(
    scope: StoreScope,
    after: { time: Date; id: string } | null,
    limit: number,
  ): Promise<PagedEvent[]> {
    const keyset = after
      ? `and (time > ${ms(after.time.getTime())} or (time = ${ms(after.time.getTime())} and event_id > ${sqlString(after.id)}::UUID))`
      : '';
    const r = await read<{
      event_id: string;
      t: bigint;
      organization_id: number;
      integration_id: number;
      stream: string;
      line: string;
    }>(`
      select event_id::VARCHAR as event_id, epoch_ms(time) as t, organization_id, integration_id, stream, event::VARCHAR as line
      from events where ${base(scope)} ${keyset}
      order by time, event_id limit ${Math.trunc(limit)}`);
    return r.map((row) => ({
      event_id: row.event_id,
      time: new Date(Number(row.t)),
      organization_id: Number(row.organization_id),
      integration_id: Number(row.integration_id),
      stream: row.stream,
      line: row.line,
    }));
  }

  async function retain(now: Date, retentionDays: ReadonlyMap<number, number>): Promise<RetentionRemoved> {
    return serially(async () => {
      const removed = new Map<number, number>();
      const present = await writer.runAndReadAll('select distinct organization_id from events');
      for (const [org] of present.getRowsJS() as [number][]) {
        const keep = retentionDays.get(Number(org));
        // A deleted organization's events go (its data deletion removes them too).
        const where = keep === undefined ? '' : `and received < ${ms(now.getTime() - keep * DAY)}`;
        const res = await writer.run(`delete from events where organization_id = ${Number(org)} ${where}`);
        const n = Number(res.rowsChanged);
        if (n > 0) removed.set(Number(org), n);
      }
      await writer.run(`delete from stored_batches where stored_at < ${ms(now.getTime() - MARK_DAYS * DAY)}`);
      if (removed.size > 0) await writer.run('checkpoint');
      return { removed, dropped: [], deferred: [] };
    });
  }

  async function size(): Promise<number> {
    const r = await read<{ n: bigint | number | null }>(`select sum(${ROW_BYTES})::BIGINT as n from events`);
    return Number(r[0]?.n ?? 0);
  }

  /**
   * The size budget: finds the last event to go (received first, ties by event id, until the
   * removed bytes reach the excess), then counts and deletes everything up to it in one
   * transaction on the writer (no write runs between).
   */
  async function trim(maxBytes: number): Promise<TrimRemoved> {
    return serially(() =>
      inWriteTransaction(async () => {
        const out: TrimRemoved = { removed: new Map(), bytes: 0 };
        const total = await writer.runAndReadAll(`select sum(${ROW_BYTES})::BIGINT from events`);
        const excess = Number((total.getRowsJS()[0]?.[0] as bigint | null) ?? 0) - maxBytes;
        if (excess <= 0) return out;
        const last = await writer.runAndReadAll(`
          select epoch_ms(received) as r, event_id::VARCHAR as id from (
            select received, event_id, sum(${ROW_BYTES}) over (order by received, event_id rows between unbounded preceding and current row) as run from events
          ) where run >= ${excess} order by received, event_id limit 1`);
        const [r, id] = (last.getRowsJS()[0] ?? []) as [bigint | undefined, string | undefined];
        if (r === undefined || id === undefined) return out;
        const upTo = `received < ${ms(Number(r))} or (received = ${ms(Number(r))} and event_id <= ${sqlString(id)}::UUID)`;
        const counted = await writer.runAndReadAll(
          `select organization_id, count(*)::BIGINT, sum(${ROW_BYTES})::BIGINT from events where ${upTo} group by 1`,
        );
        for (const [org, n, bytes] of counted.getRowsJS() as [number, bigint, bigint][]) {
          out.removed.set(Number(org), Number(n));
          out.bytes += Number(bytes);
        }
        await writer.run(`delete from events where ${upTo}`);
        return out;
      }),
    ).then(async (out) => {
      if (out.removed.size > 0) await serially(() => writer.run('checkpoint'));
      return out;
    });
  }

  return {
    kind: 'duckdb',
    prepare: (batchId, stored) => {
      if (stored.every((c) => c.ids.length === 0)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        pending.push({ batchId, stored, resolve, reject });
        if (pending.length === 1) void serially(drain);
      });
    },
    write: async () => {},
    replace: (stored) =>
      serially(() =>
        inWriteTransaction(async () => {
          if (stored.ids.length === 0) return;
          await writer.run(`delete from events where event_id in (${idList(stored.ids)})`);
          await append([stored]);
        }),
      ),
    check: async () => {
      await read('select count(*) from stored_batches');
    },
    rows,
    count,
    countBy,
    top,
    histogram,
    page,
    retain,
    size,
    trim,
    deleteOrganization: (organizationId, limit) =>
      serially(async () => {
        const res = await writer.run(
          `delete from events where rowid in (select rowid from events where organization_id = ${Math.trunc(organizationId)} limit ${Math.trunc(limit)})`,
        );
        return Number(res.rowsChanged);
      }),
    exportParquet: async (o) => {
      const connection = await instance.connect();
      try {
        return await writeSecurityLake(
          connection,
          `(select time, class_uid, event from events where ${range(o.organizationIds, o.from, o.to)})`,
          o,
        );
      } finally {
        connection.closeSync();
      }
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await tail;
      writer.closeSync();
      instance.closeSync();
    },
  };
}
