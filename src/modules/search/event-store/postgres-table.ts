// The event store's table (0015, docs/search.md): writing an organization's events, the
// day partitions they need, retention and deletion. Partitions are attached (SHARE UPDATE
// EXCLUSIVE on the parent, which inserts and reads do not wait on) rather than created as
// partitions (ACCESS EXCLUSIVE), so a new day never stalls the batches being written.
import { sql, type Kysely } from 'kysely';
import { afterCommit, executor, inTransaction } from '../../../platform/db/ambient.js';
import type { DB } from '../../../platform/db/index.js';
import type { StoredCopies } from '../../../pipeline/delivery/engine-port.js';

const DAY_MS = 86_400_000;
/** pg_advisory_xact_lock key of partition changes ('weirpart' as digits). */
const PARTITION_LOCK = 0x7765697270617274n;
const PARTITION_NAME = /^events_p(\d{4})(\d{2})(\d{2})$/;

/** The UTC day (ms at midnight) of an epoch-ms time. */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

export function partitionName(day: number): string {
  return `events_p${new Date(day).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

function partitionDay(name: string): number | undefined {
  const m = PARTITION_NAME.exec(name);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : undefined;
}

/** Each line's length in UTF-8 bytes: what the store's size budget counts (event-store/port.ts size()). */
export function lineBytes(lines: readonly string[]): number[] {
  return lines.map((l) => Buffer.byteLength(l));
}

/** An event row's bytes of event text; rows stored before 0024 count their jsonb text. */
const ROW_BYTES = sql.raw('coalesce(bytes, octet_length(event::text))');

/** A timestamptz literal of our own making (DDL takes no parameters). */
const literal = (ms: number) => sql.raw(`'${new Date(ms).toISOString()}'::timestamptz`);

export function createEventsStore(db: Kysely<DB>) {
  const known = new Set<number>();

  async function ensureDay(day: number): Promise<void> {
    if (known.has(day)) return;
    const name = partitionName(day);
    await inTransaction(db, async () => {
      const ex = executor(db);
      await sql`select pg_advisory_xact_lock(${PARTITION_LOCK.toString()}::bigint)`.execute(ex);
      const { rows } = await sql<{ present: boolean }>`select to_regclass(${name}) is not null as present`.execute(ex);
      if (!rows[0]?.present) {
        await sql`create table ${sql.id(name)} (like events including defaults)`.execute(ex);
        await sql`alter table events attach partition ${sql.id(name)} for values from (${literal(day)}) to (${literal(day + DAY_MS)})`.execute(
          ex,
        );
      }
      // Remembered once committed: a rolled-back creation must be tried again.
      await afterCommit(async () => {
        known.add(day);
      });
    });
  }

  /** Attaches the partitions the copies' days need (joins an open transaction, else its own). */
  async function prepare(stored: readonly StoredCopies[]): Promise<void> {
    const days = new Set<number>();
    for (const s of stored) for (const t of s.times) days.add(dayOf(t));
    for (const day of [...days].sort((a, b) => a - b)) await ensureDay(day);
  }

  /** Inserts the copies, one statement per destination's copies; joins the open transaction. */
  async function write(stored: readonly StoredCopies[]): Promise<void> {
    for (const s of stored) {
      if (s.ids.length === 0) continue;
      // One JSON array text: PostgreSQL parses the events, JavaScript only joins the lines.
      await sql`
        insert into events (time, received, organization_id, integration_id, stream, class_uid, category_uid, activity_id, severity_id, event_id, event, bytes)
        select to_timestamp(u.t / 1000.0), to_timestamp(u.r / 1000.0), ${s.organization_id}::int, ${s.integration_id}::int, ${s.stream}::text, u.c, u.ca, u.a, u.sv, u.id::uuid, j.e, u.b
        from unnest(${s.times}::float8[], ${s.received}::float8[], ${s.class_uid}::int[], ${s.category_uid}::int[], ${s.activity_id}::int[], ${s.severity_id}::int[], ${s.ids}::text[], ${lineBytes(s.lines)}::int[])
          with ordinality as u(t, r, c, ca, a, sv, id, b, n)
        join jsonb_array_elements(${`[${s.lines.join(',')}]`}::jsonb) with ordinality as j(e, n) on j.n = u.n`.execute(
        executor(db),
      );
    }
  }

  /** The lane's path (replays to the event store): idempotent, a resent batch replaces its rows. */
  async function replace(stored: StoredCopies): Promise<void> {
    await prepare([stored]);
    await inTransaction(db, async () => {
      await sql`delete from events where event_id = any(${stored.ids}::uuid[])`.execute(executor(db));
      await write([stored]);
    });
  }

  /** Every partition with its UTC day, oldest first. */
  async function partitions(): Promise<{ name: string; day: number }[]> {
    const { rows } = await sql<{ name: string }>`
      select c.relname as name from pg_inherits i
      join pg_class c on c.oid = i.inhrelid
      join pg_class p on p.oid = i.inhparent
      where p.relname = 'events'`.execute(db);
    return rows
      .flatMap((r) => {
        const day = partitionDay(r.name);
        return day === undefined ? [] : [{ name: r.name, day }];
      })
      .sort((a, b) => a.day - b.day);
  }

  /**
   * Drops a whole partition. A search holding the table makes the drop wait; the lock wait
   * is bounded so that the writers queued behind the drop are not stalled (tried again later).
   */
  async function dropPartition(name: string, lockTimeoutMs: number): Promise<boolean> {
    if (!PARTITION_NAME.test(name)) throw new Error(`not an event store partition: ${name}`);
    try {
      await inTransaction(db, async () => {
        const ex = executor(db);
        await sql`select set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`.execute(ex);
        await sql`select pg_advisory_xact_lock(${PARTITION_LOCK.toString()}::bigint)`.execute(ex);
        await sql`drop table if exists ${sql.id(name)}`.execute(ex);
      });
      known.delete(partitionDay(name)!);
      return true;
    } catch (err) {
      if (isLockTimeout(err)) return false;
      throw err;
    }
  }

  /** Deletes up to `limit` of an organization's events received before `before` from one partition; the count. */
  async function deleteOlder(partition: string, organizationId: number, before: Date, limit: number): Promise<number> {
    const res = await sql`
      delete from ${sql.id(partition)} where ctid in (
        select ctid from ${sql.id(partition)} where organization_id = ${organizationId} and coalesce(received, time) < ${before} limit ${limit})`.execute(
      executor(db),
    );
    return Number(res.numAffectedRows ?? 0);
  }

  /** A partition's events by organization, and when the first and last of them were received. */
  async function contents(
    partition: string,
  ): Promise<{ organization_id: number; n: number; first: Date; last: Date }[]> {
    const { rows } = await sql<{ organization_id: number; n: string; first: Date; last: Date }>`
      select organization_id, count(*) as n, min(coalesce(received, time)) as first, max(coalesce(received, time)) as last from ${sql.id(partition)} group by 1`.execute(
      db,
    );
    return rows.map((r) => ({
      organization_id: r.organization_id,
      n: Number(r.n),
      first: new Date(r.first),
      last: new Date(r.last),
    }));
  }

  /** The bytes of event text the table holds (ROW_BYTES summed). */
  async function size(): Promise<number> {
    const { rows } = await sql<{ n: string | null }>`select sum(${ROW_BYTES}) as n from events`.execute(db);
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Deletes, from the `limit` events received first (ties by event id), those needed to take
   * `excess` bytes off: each whose running total before it is under `excess`. What it deleted,
   * by organization, with the bytes.
   */
  async function deleteOldest(
    excess: number,
    limit: number,
  ): Promise<{ organization_id: number; n: number; bytes: number }[]> {
    const { rows } = await sql<{ organization_id: number; n: string; bytes: string }>`
      with oldest as (
        select tableoid, ctid, b, sum(b) over (order by r, event_id rows between unbounded preceding and current row) as run
        from (select tableoid, ctid, event_id, coalesce(received, time) as r, ${ROW_BYTES} as b from events order by r, event_id limit ${limit}) e
      ), gone as (
        delete from events where (tableoid, ctid) in (select tableoid, ctid from oldest where run - b < ${excess})
        returning organization_id, ${ROW_BYTES} as b
      )
      select organization_id, count(*) as n, sum(b) as bytes from gone group by 1`.execute(executor(db));
    return rows.map((r) => ({ organization_id: r.organization_id, n: Number(r.n), bytes: Number(r.bytes) }));
  }

  /** Deletes up to `limit` of an organization's events; the count (statements bounded by the lock timeout). */
  async function deleteOrganization(organizationId: number, limit: number, lockTimeoutMs: number): Promise<number> {
    return inTransaction(db, async () => {
      const ex = executor(db);
      await sql`select set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`.execute(ex);
      const res = await sql`
        delete from events where (tableoid, ctid) in (
          select tableoid, ctid from events where organization_id = ${organizationId} limit ${limit})`.execute(ex);
      return Number(res.numAffectedRows ?? 0);
    });
  }

  return {
    prepare,
    write,
    replace,
    partitions,
    dropPartition,
    deleteOlder,
    contents,
    deleteOrganization,
    ensureDay,
    size,
    deleteOldest,
  };
}

export type EventsStore = ReturnType<typeof createEventsStore>;

/** PostgreSQL's lock_not_available (55P03): a lock_timeout ran out. */
export function isLockTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '55P03';
}
