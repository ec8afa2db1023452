// SQL of the postgres sink and the mapping of PostgreSQL errors to delivery errors. The
// identifiers come from validated config and are quoted; every value travels as a parameter.
import { redactAndCut, type Redactor } from '../../../core/redaction.js';
import { NetError } from '../../../platform/net/errors.js';
import { DeliveryError, fromNetError } from '../types.js';

export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function quoteIdent(name: string): string {
  if (!IDENTIFIER.test(name))
    throw new DeliveryError(
      'config',
      `"${name.slice(0, 64)}" is not a valid identifier (letters, digits, _; at most 63)`,
    );
  return `"${name}"`;
}

export function qualified(schema: string, table: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(table)}`;
}

export function createTableSql(schema: string, table: string): string[] {
  const t = qualified(schema, table);
  return [
    `create table if not exists ${t} (
      event_id text primary key,
      organization_id integer not null,
      integration_id integer not null,
      stream text not null,
      class_uid integer,
      time timestamptz,
      event jsonb not null,
      inserted_at timestamptz not null default now()
    )`,
    `create index if not exists ${quoteIdent(`${table.slice(0, 54)}_time_idx`)} on ${t} (time)`,
  ];
}

/**
 * One statement per batch, its rows in one JSON document ($1) built by concatenating the
 * events' JSON texts: no parse in the dispatcher and no array escaping (pg's text[] encoding
 * costs more than the insert). class_uid and time are read by the server; values that do not
 * fit the column become null instead of failing the batch. `on conflict do nothing` makes a
 * redelivered batch (at-least-once) a no-op; without a conflict target it needs only INSERT
 * on the table (a target would also need SELECT).
 */
export function insertSql(schema: string, table: string): string {
  return `insert into ${qualified(schema, table)} (event_id, organization_id, integration_id, stream, class_uid, time, event)
    select r.i, r.o, r.n, r.s,
      case when jsonb_typeof(r.e->'class_uid') = 'number' and (r.e->>'class_uid') ~ '^-?[0-9]{1,9}$' then (r.e->>'class_uid')::integer end,
      case when jsonb_typeof(r.e->'time') = 'number' and abs((r.e->>'time')::numeric) < 1e14 then to_timestamp((r.e->>'time')::numeric / 1000) end,
      r.e
    from json_to_recordset($1::json) as r(i text, o integer, n integer, s text, e jsonb)
    on conflict do nothing`;
}

/** The rows document: [{"i": id, "o": org, "n": integration, "s": stream, "e": <event JSON as is>}, ...]. */
export function rowsDocument(
  rows: { id: string; org: number; integration: number; stream: string; line: string }[],
): string {
  let out = '[';
  for (let k = 0; k < rows.length; k++) {
    const r = rows[k]!;
    out += `${k ? ',' : ''}{"i":${JSON.stringify(r.id)},"o":${r.org},"n":${r.integration},"s":${JSON.stringify(r.stream)},"e":${r.line}}`;
  }
  return `${out}]`;
}

/** jsonb refuses \u0000 in strings; an escaped backslash before "u0000" is not one. */
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;

export function hasNulEscape(line: string): boolean {
  return line.includes('\\u0000') && NUL_ESCAPE.test(line);
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'ETIMEDOUT',
]);
/** Settings the administrator must fix: missing table, schema or database, no privilege, wrong table shape. */
const CONFIG_CODES = new Set(['42P01', '42501', '3F000', '3D000', '42703', '42804', '42P10', '25006']);

/** A pg failure as a DeliveryError whose message names no secret. */
export function pgError(err: unknown, redact: Redactor): DeliveryError {
  if (err instanceof DeliveryError) return err;
  // The guard refused the host or could not resolve it (net.resolve before connecting).
  if (err instanceof NetError) return fromNetError(err);
  const e = err as (Error & { code?: string; severity?: string }) | undefined;
  const code = e?.code ?? '';
  const text = redactAndCut((t) => redact(t).replace(/\s+/g, ' '), e?.message ?? String(err), 300);
  const message = code && /^[0-9A-Z]{5}$/.test(code) ? `PostgreSQL ${code}: ${text}` : `PostgreSQL: ${text}`;
  if (code === '28P01' || code === '28000') return new DeliveryError('auth', message, { cause: err });
  if (CONFIG_CODES.has(code)) return new DeliveryError('config', message, { cause: err });
  if (
    CONNECTION_CODES.has(code) ||
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    /Connection terminated|connection timeout|timeout expired/i.test(text)
  ) {
    return new DeliveryError('connection', message, { cause: err });
  }
  if (/ssl|tls|certificate/i.test(text) || /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code))
    return new DeliveryError('tls', message, { cause: err });
  return new DeliveryError('protocol', message, { cause: err, retryable: true });
}
