// Reading the event store: a planned query's rows, count and aggregations, always within the
// caller's organizations and the query's time range (partition pruning and the
// (organization_id, time) index), each statement bounded by a statement timeout.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { executor, inTransaction } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { parsePath } from '../../pipeline/normalize/paths.js';
import type { Bucket, StoredRow, StoreScope } from './event-store/port.js';
import { conditionSql, fieldValue, jsonpathOf, sortExpression } from './query-sql.js';

export type { Bucket, StoredRow, StoreScope } from './event-store/port.js';

function base(scope: StoreScope): RawBuilder<unknown> {
  return sql`organization_id = any(${[...scope.organizationIds]}::int[]) and time >= ${scope.from} and time < ${scope.to} and ${conditionSql(scope.condition)}`;
}

export function createStoreQueries(db: Kysely<DB>, statementTimeoutMs: number) {
  /** One read under the statement timeout (its own transaction, or the caller's). */
  async function bounded<T>(fn: (ex: Kysely<DB>) => Promise<T>): Promise<T> {
    return inTransaction(db, async () => {
      const ex = executor(db);
      await sql`select set_config('statement_timeout', ${`${statementTimeoutMs}ms`}, true)`.execute(ex);
      return fn(ex);
    });
  }

  async function rows(
    scope: StoreScope,
    opts: { fields: string[] | null; sort: { field: string; order: 'asc' | 'desc' }[]; limit: number; offset?: number },
  ): Promise<StoredRow[]> {
    if (opts.limit === 0) return [];
    const order = sql.join(
      [
        ...opts.sort.map(
          (s) => sql`${sortExpression(s.field)} ${sql.raw(s.order === 'desc' ? 'desc nulls last' : 'asc nulls first')}`,
        ),
        sql`event_id`,
      ],
      sql`, `,
    );
    const projection = opts.fields
      ? sql`jsonb_build_array(${sql.join(opts.fields.map(fieldValue))}) as picked`
      : sql`event`;
    return bounded(async (ex) => {
      const { rows: found } = await sql<{
        event_id: string;
        time: Date;
        organization_id: number;
        integration_id: number;
        stream: string;
        event?: Record<string, unknown>;
        picked?: unknown[];
      }>`
        select event_id::text as event_id, time, organization_id, integration_id, stream, ${projection}
        from events where ${base(scope)}
        order by ${order}
        limit ${opts.limit} offset ${opts.offset ?? 0}`.execute(ex);
      return found.map((r) => {
        const out: StoredRow = {
          event_id: r.event_id,
          time: new Date(r.time).toISOString(),
          organization_id: r.organization_id,
          integration_id: r.integration_id,
          stream: r.stream,
        };
        if (opts.fields) out.fields = Object.fromEntries(opts.fields.map((f, i) => [f, r.picked?.[i] ?? null]));
        else out.event = r.event as Record<string, unknown>;
        return out;
      });
    });
  }

  async function count(scope: StoreScope): Promise<number> {
    return bounded(async (ex) => {
      const { rows: r } = await sql<{
        n: string | number;
      }>`select count(*) as n from events where ${base(scope)}`.execute(ex);
      return Number(r[0]?.n ?? 0);
    });
  }

  async function countBy(scope: StoreScope, fields: string[], size: number): Promise<Bucket[]> {
    const keys = fields.map((f, i) => sql`${fieldValue(f)} as ${sql.ref(`k${i}`)}`);
    const groups = fields.map((_, i) => sql.raw(String(i + 1)));
    return bounded(async (ex) => {
      const { rows: r } = await sql<Record<string, unknown>>`
        select ${sql.join(keys)}, count(*) as n from events where ${base(scope)}
        group by ${sql.join(groups)} order by n desc, ${sql.join(groups)} limit ${size}`.execute(ex);
      return r.map((row) => ({
        key: Object.fromEntries(fields.map((f, i) => [f, row[`k${i}`] ?? null])),
        count: Number(row.n),
      }));
    });
  }

  /** The most frequent values of a field; a [*] path counts every element. Missing values are left out. */
  async function top(scope: StoreScope, field: string, size: number): Promise<{ value: unknown; count: number }[]> {
    const segs = parsePath(field);
    const many = segs.some((s) => s.t === 'all');
    return bounded(async (ex) => {
      const { rows: r } = many
        ? await sql<{ value: unknown; n: string }>`
            select x.v as value, count(*) as n from events, lateral jsonb_path_query(event, ${jsonpathOf(segs, true)}::jsonpath) as x(v)
            where ${base(scope)} and x.v <> 'null'::jsonb
            group by 1 order by n desc, 1 limit ${size}`.execute(ex)
        : await sql<{ value: unknown; n: string }>`
            select v as value, count(*) as n from (select ${fieldValue(field)} as v from events where ${base(scope)}) s
            where v is not null and v <> 'null'::jsonb
            group by 1 order by n desc, 1 limit ${size}`.execute(ex);
      return r.map((row) => ({ value: row.value, count: Number(row.n) }));
    });
  }

  /** Events per interval from `from`, every bucket of the range (zeros included). */
  async function histogram(scope: StoreScope, intervalMs: number): Promise<{ start: string; count: number }[]> {
    const origin = scope.from;
    const found = await bounded(async (ex) => {
      const { rows: r } = await sql<{ b: Date; n: string }>`
        select date_bin(${`${intervalMs} milliseconds`}::interval, time, ${origin}::timestamptz) as b, count(*) as n
        from events where ${base(scope)} group by 1`.execute(ex);
      return new Map(r.map((row) => [new Date(row.b).getTime(), Number(row.n)]));
    });
    const out: { start: string; count: number }[] = [];
    for (let t = origin.getTime(); t < scope.to.getTime(); t += intervalMs)
      out.push({ start: new Date(t).toISOString(), count: found.get(t) ?? 0 });
    return out;
  }

  /**
   * A page of matching events in (time, event_id) order after a keyset position, for replay:
   * the events' stored texts with their origin.
   */
  async function page(scope: StoreScope, after: { time: Date; id: string } | null, limit: number) {
    const keyset = after ? sql`and (time, event_id) > (${after.time}, ${after.id}::uuid)` : sql``;
    return bounded(async (ex) => {
      const { rows: r } = await sql<{
        event_id: string;
        time: Date;
        integration_id: number;
        stream: string;
        organization_id: number;
        line: string;
      }>`
        select event_id::text as event_id, time, organization_id, integration_id, stream, event::text as line
        from events where ${base(scope)} ${keyset}
        order by time, event_id limit ${limit}`.execute(ex);
      return r.map((row) => ({ ...row, time: new Date(row.time) }));
    });
  }

  return { rows, count, countBy, top, histogram, page };
}

export type StoreQueries = ReturnType<typeof createStoreQueries>;
