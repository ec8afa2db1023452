// Destination type `postgres`: one row per event in a table of the administrator's PostgreSQL,
// one INSERT per batch, idempotent on the envelope id (a redelivered batch inserts nothing
// twice). The sink talks to the address the SSRF guard resolved; TLS checks the host name.
import { Type } from 'typebox';
import { credentialString } from '../../../core/credentials.js';
import { timedTest } from '../http-common.js';
import { basicPair } from '../secrets.js';
import { DeliveryError, hostTarget, type Sink, type SinkContext, type SinkResult, type SinkType } from '../types.js';
import { createPgConnection, type PgConnection, type PgSettings } from './connection.js';
import { createTableSql, hasNulEscape, IDENTIFIER, insertSql, rowsDocument } from './sql.js';

const IDENTIFIER_RULE = { pattern: 'must be 1 to 63 letters, digits and "_", not starting with a digit' };

export const PostgresConfigSchema = Type.Object(
  {
    host: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[^\\s/]+$',
      errorMessage: { pattern: 'must be a host name or an IP address, without spaces or "/"' },
      description: 'Host name or IP address of the PostgreSQL server',
    }),
    port: Type.Integer({ default: 5432, minimum: 1, maximum: 65_535, description: 'Server port' }),
    database: Type.String({ minLength: 1, maxLength: 63, description: 'Database to connect to' }),
    user: Type.String({
      minLength: 1,
      maxLength: 63,
      description: 'Role to connect as (its password goes in the credential)',
    }),
    schema: Type.String({
      default: 'public',
      pattern: IDENTIFIER.source,
      errorMessage: IDENTIFIER_RULE,
      description: 'Schema of the table (letters, digits, _)',
    }),
    table: Type.String({
      pattern: IDENTIFIER.source,
      errorMessage: IDENTIFIER_RULE,
      description:
        'Table receiving the events (letters, digits, _; at most 63). Columns: event_id text primary key, organization_id, integration_id, stream, class_uid, time timestamptz, event jsonb, inserted_at',
    }),
    ssl: Type.Union([Type.Literal('disable'), Type.Literal('require'), Type.Literal('verify-full')], {
      default: 'require',
      description:
        'disable: no TLS; require: TLS without checking the certificate (like libpq sslmode=require); verify-full: TLS with the certificate checked against ssl_ca (or the public authorities) and the host name',
    }),
    ssl_ca: Type.Optional(
      Type.String({
        maxLength: 65_536,
        description: 'verify-full: PEM certificate(s) of the authority that signed the server certificate',
      }),
    ),
    create_table: Type.Boolean({
      default: true,
      description: 'Create the table (and an index on time) when it does not exist; needs CREATE on the schema',
    }),
  },
  { additionalProperties: false },
);

export const PostgresCredentialSchema = Type.Object(
  {
    password: Type.Optional(
      Type.String({
        maxLength: 1024,
        description: 'Password of the role (omit for trust or certificate authentication)',
      }),
    ),
  },
  { additionalProperties: false },
);

function settingsOf(ctx: SinkContext): PgSettings {
  const c = ctx.config;
  for (const f of ['host', 'database', 'user', 'table'] as const) {
    if (typeof c[f] !== 'string' || c[f] === '') throw new DeliveryError('config', `${f} is required`);
  }
  const schema = typeof c.schema === 'string' && c.schema ? c.schema : 'public';
  for (const [f, v] of [
    ['schema', schema],
    ['table', c.table as string],
  ]) {
    if (!IDENTIFIER.test(v as string))
      throw new DeliveryError('config', `${f} must be letters, digits and _ (at most 63, not starting with a digit)`);
  }
  const ssl = c.ssl === 'disable' || c.ssl === 'verify-full' ? c.ssl : 'require';
  return {
    host: c.host as string,
    port: typeof c.port === 'number' ? c.port : 5432,
    database: c.database as string,
    user: c.user as string,
    password: credentialString(ctx.credential, 'password'),
    schema,
    table: c.table as string,
    ssl,
    sslCa: typeof c.ssl_ca === 'string' && c.ssl_ca ? c.ssl_ca : undefined,
  };
}

export function createPostgresSink(ctx: SinkContext): Sink {
  const createTable = ctx.config.create_table !== false;
  let conn: PgConnection | undefined;
  let settings: PgSettings | undefined;
  let sql: string | undefined;
  let tableReady: Promise<void> | null = null;

  function get(): { conn: PgConnection; s: PgSettings } {
    settings ??= settingsOf(ctx);
    conn ??= createPgConnection(settings, ctx.net, ctx.logger, ctx.redact);
    return { conn, s: settings };
  }

  /** Once per sink: concurrent dispatchers racing on `create table if not exists` are fine (see connection.ts). */
  function ensureTable(signal: AbortSignal): Promise<void> {
    const { conn: c, s } = get();
    if (!createTable) return Promise.resolve();
    tableReady ??= c.ddl(createTableSql(s.schema, s.table), signal).catch((err: unknown) => {
      tableReady = null;
      throw err;
    });
    return tableReady;
  }

  return {
    async send(batch, signal) {
      const { conn: c, s } = get();
      await ensureTable(signal);
      const rejected: NonNullable<SinkResult['rejected']> = [];
      const rows: Parameters<typeof rowsDocument>[0] = [];
      for (let i = 0; i < batch.lines.length; i++) {
        const line = batch.lines[i] as string;
        if (hasNulEscape(line)) {
          rejected.push({ index: i, reason: 'event holds a \\u0000 character, which PostgreSQL jsonb cannot store' });
          continue;
        }
        const meta = batch.meta[i]!;
        rows.push({
          id: batch.ids[i] as string,
          org: meta.organization_id,
          integration: meta.integration_id,
          stream: meta.stream,
          line,
        });
      }
      if (rows.length > 0) {
        sql ??= insertSql(s.schema, s.table);
        await c.query(sql, [rowsDocument(rows)], signal);
      }
      return rejected.length > 0 ? { rejected } : {};
    },
    test(signal) {
      return timedTest(
        async () => {
          const { conn: c, s } = get();
          return c
            .check(createTable, signal)
            .then((r) => ({ ...r, detail: `${s.database} on ${s.host}:${s.port}: ${r.detail}` }));
        },
        signal,
        ctx.redact,
      );
    },
    async close() {
      await conn?.close();
    },
  };
}

export const postgresSink: SinkType = {
  type: 'postgres',
  title: 'PostgreSQL table',
  description:
    'Inserts each batch with one statement into a table (event_id primary key, organization_id, integration_id, stream, class_uid, time, event jsonb). ' +
    'Idempotent: a batch sent again after a timeout or a crash inserts nothing twice (on conflict do nothing). The table is created when missing unless create_table is off.',
  configSchema: PostgresConfigSchema,
  credentialSchema: PostgresCredentialSchema,
  credentialRequired: false,
  // The password, and the user:password of a connection URL (its URL-encoded form included).
  secretValues: (c, config) => [
    ...(credentialString(c, 'password') ? [credentialString(c, 'password')!] : []),
    ...basicPair(config.user, c.password),
  ],
  targets: (config) => hostTarget(config, 'host'),
  create: createPostgresSink,
};
