// The postgres sink against the machine's real PostgreSQL (trust authentication on 127.0.0.1).
// Every test works on its own table, dropped afterwards.
import { randomBytes } from 'node:crypto';
import { Ajv } from 'ajv';
// The test checks what landed in the table with its own client.
// eslint-disable-next-line no-restricted-imports
import pg from 'pg';
import net from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ocsfEvents, sinkBatch, sinkBatchFromLines, sinkContext } from '../../../../test/support/sink-batch.js';
import { DeliveryError, type Sink } from '../types.js';
import { PostgresConfigSchema, postgresSink } from './index.js';

// Test settings come from the environment (tests are outside the domain rule on process.env).
// eslint-disable-next-line no-restricted-properties
const env = process.env;
const URL_TEXT = env.WEIR_TEST_SINK_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const target = new URL(URL_TEXT);

/** A client on the test database, creating it when the machine has none yet; null when PostgreSQL is not there. */
async function connectAdmin(): Promise<pg.Client | { skip: string }> {
  const attempt = async (url: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    return c;
  };
  try {
    return await attempt(URL_TEXT);
  } catch (err) {
    if ((err as { code?: string }).code === '3D000') {
      const maint = new URL(URL_TEXT);
      maint.pathname = '/postgres';
      const c = await attempt(maint.toString());
      await c.query(`create database ${target.pathname.slice(1).replace(/[^a-z0-9_]/gi, '')}`).catch(() => undefined);
      await c.end();
      return attempt(URL_TEXT);
    }
    if (env.CI === 'true') throw err;
    return { skip: `PostgreSQL not reachable at ${target.host}: ${(err as Error).message}` };
  }
}

const connected = await connectAdmin();
const admin = 'skip' in connected ? null : connected;
if (!admin) console.warn(`postgres sink tests skipped: ${(connected as { skip: string }).skip}`);

const tables: string[] = [];
const roles: string[] = [];
const sinks: Sink[] = [];
const signal = () => AbortSignal.timeout(10_000);

function tableName(): string {
  const t = `weir_sink_${randomBytes(5).toString('hex')}`;
  tables.push(t);
  return t;
}

function base(table: string): Record<string, unknown> {
  return {
    host: target.hostname,
    port: Number(target.port || 5432),
    database: target.pathname.slice(1),
    user: target.username || 'postgres',
    schema: 'public',
    table,
    ssl: 'disable',
    create_table: true,
  };
}

function open(
  config: Record<string, unknown>,
  options: { credential?: Record<string, string>; allowCidrs?: string[] } = {},
): Sink {
  const sink = postgresSink.create(sinkContext({ config, type: postgresSink, ...options }));
  sinks.push(sink);
  return sink;
}

async function expectError(p: Promise<unknown>, kind: DeliveryError['kind']): Promise<DeliveryError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DeliveryError);
  expect((err as DeliveryError).kind, (err as Error).message).toBe(kind);
  return err as DeliveryError;
}

afterEach(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.close()));
  for (const t of tables.splice(0)) await admin?.query(`drop table if exists public.${t}`);
  for (const r of roles.splice(0)) await admin?.query(`drop role if exists ${r}`);
});
afterAll(async () => {
  await admin?.end();
});

describe.skipIf(!admin)('postgres sink (real PostgreSQL)', () => {
  const db = admin as pg.Client;

  it('creates the table and inserts a batch with one row per event', async () => {
    const table = tableName();
    const sink = open(base(table));
    const t = await sink.test(signal());
    expect(t).toMatchObject({ ok: true });
    expect(t.detail).toMatch(/will be created/);
    const events = ocsfEvents(3);
    events[1]!.class_uid = 'not a number';
    delete events[2]!.time;
    const batch = sinkBatch(events, { meta: { organization_id: 7, integration_id: 11, stream: 'auth' } });
    expect(await sink.send(batch, signal())).toEqual({});
    const { rows } = await db.query(
      `select event_id, organization_id, integration_id, stream, class_uid, time, event, inserted_at from ${table} order by time nulls last, event_id`,
    );
    expect(rows).toHaveLength(3);
    const byId = new Map(rows.map((r) => [r.event_id as string, r]));
    for (let i = 0; i < 3; i++) {
      const r = byId.get(batch.ids[i]!)!;
      expect(r).toMatchObject({ organization_id: 7, integration_id: 11, stream: 'auth' });
      expect(r.event).toEqual(events[i]);
      expect(r.inserted_at).toBeInstanceOf(Date);
    }
    expect(byId.get(batch.ids[0]!)!.class_uid).toBe(3002);
    expect((byId.get(batch.ids[0]!)!.time as Date).getTime()).toBe(events[0]!.time);
    expect(byId.get(batch.ids[1]!)!.class_uid).toBeNull();
    expect(byId.get(batch.ids[2]!)!.time).toBeNull();
    expect((await sink.test(signal())).detail).toMatch(/exists and accepts INSERT/);
  });

  it('a redelivered batch inserts nothing twice', async () => {
    const table = tableName();
    const sink = open(base(table));
    const first = sinkBatch(ocsfEvents(50));
    await sink.send(first, signal());
    await sink.send(first, signal());
    const overlap = sinkBatchFromLines([...first.lines.slice(40), ...sinkBatch(ocsfEvents(5)).lines], {
      ids: [...first.ids.slice(40), 'n1', 'n2', 'n3', 'n4', 'n5'],
    });
    await sink.send(overlap, signal());
    const { rows } = await db.query(`select count(*)::int as n from ${table}`);
    expect(rows[0].n).toBe(55);
  });

  it('refuses only the events jsonb cannot store (\\u0000) and inserts the rest', async () => {
    const table = tableName();
    const sink = open(base(table));
    const batch = sinkBatchFromLines(['{"a":1}', '{"a":"nul \\u0000 here"}', '{"a":"escaped \\\\u0000 is fine"}'], {
      ids: ['x1', 'x2', 'x3'],
    });
    const result = await sink.send(batch, signal());
    expect(result.rejected?.map((r) => r.index)).toEqual([1]);
    const { rows } = await db.query(`select event_id from ${table} order by event_id`);
    expect(rows.map((r) => r.event_id)).toEqual(['x1', 'x3']);
  });

  it('one statement for a batch of 5000 events', async () => {
    const table = tableName();
    const sink = open(base(table));
    const batch = sinkBatch(ocsfEvents(5000));
    const started = Date.now();
    await sink.send(batch, signal());
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await db.query(`select count(*)::int as n from ${table}`)).rows[0].n).toBe(5000);
  });

  it('a missing table with create_table off is a config error; test() says so', async () => {
    const table = tableName();
    const sink = open({ ...base(table), create_table: false });
    const err = await expectError(sink.send(sinkBatch(ocsfEvents(1)), signal()), 'config');
    expect(err.message).toMatch(/42P01/);
    expect(err.retryable).toBe(false);
    expect(await sink.test(signal())).toMatchObject({ ok: false, error_kind: 'config' });
  });

  it('a role without INSERT: config error in send and in test(); an unknown role: auth', async () => {
    const table = tableName();
    await db.query(
      `create table ${table} (event_id text primary key, organization_id int, integration_id int, stream text, class_uid int, time timestamptz, event jsonb, inserted_at timestamptz default now())`,
    );
    const role = `weir_sink_ro_${randomBytes(4).toString('hex')}`;
    roles.push(role);
    await db.query(`create role ${role} login`);
    const sink = open({ ...base(table), user: role });
    const t = await sink.test(signal());
    expect(t).toMatchObject({ ok: false, error_kind: 'config' });
    expect(t.detail).toMatch(/may not INSERT/);
    await expectError(sink.send(sinkBatch(ocsfEvents(1)), signal()), 'config');
    await db.query(`grant insert on ${table} to ${role}`);
    await sink.send(sinkBatch(ocsfEvents(2)), signal());
    expect((await db.query(`select count(*)::int as n from ${table}`)).rows[0].n).toBe(2);

    const nobody = open(
      { ...base(table), user: `weir_no_such_${randomBytes(4).toString('hex')}` },
      { credential: { password: 'hunter2-secret' } },
    );
    const err = await expectError(nobody.send(sinkBatch(ocsfEvents(1)), signal()), 'auth');
    expect(err.message).not.toContain('hunter2-secret');
    expect(await nobody.test(signal())).toMatchObject({ ok: false, error_kind: 'auth' });
  });

  it('ssl require against a server without TLS is a tls error', async () => {
    const { rows } = await db.query('show ssl');
    const sink = open({ ...base(tableName()), ssl: 'require' });
    if (rows[0].ssl === 'on') await sink.send(sinkBatch(ocsfEvents(1)), signal());
    else await expectError(sink.send(sinkBatch(ocsfEvents(1)), signal()), 'tls');
  });

  it('an insert stuck behind a lock times out on abort and its connection is closed', async () => {
    const table = tableName();
    const sink = open(base(table));
    await sink.send(sinkBatch(ocsfEvents(1)), signal());
    const locker = new pg.Client({ connectionString: URL_TEXT });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query(`lock table ${table} in access exclusive mode`);
      await expectError(sink.send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(300)), 'timeout');
      await expect
        .poll(
          async () =>
            (
              await db.query(
                `select count(*)::int as n from pg_stat_activity where application_name = 'weir' and wait_event_type = 'Lock' and query like '%${table}%'`,
              )
            ).rows[0].n,
        )
        .toBe(0);
      await locker.query('rollback');
      await sink.send(sinkBatch(ocsfEvents(1)), signal());
      expect((await db.query(`select count(*)::int as n from ${table}`)).rows[0].n).toBe(2);
    } finally {
      await locker.end();
    }
  });
});

describe('postgres sink failures', () => {
  it('connection refused is a retryable connection error', async () => {
    const server = net.createServer();
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((ok) => server.close(() => ok()));
    const sink = open({ host: '127.0.0.1', port, database: 'x', user: 'x', table: 't', ssl: 'disable' });
    const err = await expectError(sink.send(sinkBatch(ocsfEvents(1)), signal()), 'connection');
    expect(err.retryable).toBe(true);
    expect(await sink.test(signal())).toMatchObject({ ok: false, error_kind: 'connection' });
  });

  it('the SSRF guard refuses loopback unless allowed', async () => {
    const sink = open(
      { host: '127.0.0.1', port: 5432, database: 'x', user: 'x', table: 't', ssl: 'disable' },
      { allowCidrs: [] },
    );
    const err = await expectError(sink.send(sinkBatch(ocsfEvents(1)), signal()), 'blocked_address');
    expect(err.retryable).toBe(false);
    expect(await sink.test(signal())).toMatchObject({ ok: false, error_kind: 'blocked_address' });
  });

  it('identifiers are validated by the schema and at run time', async () => {
    const validate = new Ajv({ strict: false, useDefaults: true }).compile(PostgresConfigSchema);
    const good = { host: 'db.example', database: 'd', user: 'u', table: 'events_2024' };
    expect(validate({ ...good })).toBe(true);
    for (const table of ['bad-name', 'x"; drop table y; --', '1abc', 'a'.repeat(64)])
      expect(validate({ ...good, table }), table).toBe(false);
    expect(validate({ ...good, schema: 'my schema' })).toBe(false);
    const withDefaults: Record<string, unknown> = { ...good };
    validate(withDefaults);
    expect(withDefaults).toMatchObject({ port: 5432, schema: 'public', ssl: 'require', create_table: true });
    await expectError(open({ ...good, table: 'x"y' }).send(sinkBatch(ocsfEvents(1)), signal()), 'config');
    await expectError(open({ ...good, host: undefined }).send(sinkBatch(ocsfEvents(1)), signal()), 'config');
  });
});
