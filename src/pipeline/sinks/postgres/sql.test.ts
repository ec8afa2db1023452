import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../../core/redaction.js';
import { DeliveryError } from '../types.js';
import { createTableSql, hasNulEscape, insertSql, pgError, quoteIdent, rowsDocument } from './sql.js';

function pgFailure(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('postgres sink SQL', () => {
  it('quotes only valid identifiers', () => {
    expect(quoteIdent('events_2024')).toBe('"events_2024"');
    for (const bad of ['a-b', 'a"b', '9a', '', 'x'.repeat(64)]) expect(() => quoteIdent(bad)).toThrow(DeliveryError);
    expect(insertSql('s', 't')).toContain('into "s"."t" (');
    expect(createTableSql('s', 't')[0]).toContain('event_id text primary key');
  });

  it('builds the rows document from the JSON lines as they are, escaping ids and streams', () => {
    const doc = rowsDocument([
      { id: 'a"1', org: 1, integration: 2, stream: 'st\\r"eam', line: '{"x":[1,2]}' },
      { id: 'b', org: 3, integration: 4, stream: 'é', line: '{"y":"z"}' },
    ]);
    expect(JSON.parse(doc)).toEqual([
      { i: 'a"1', o: 1, n: 2, s: 'st\\r"eam', e: { x: [1, 2] } },
      { i: 'b', o: 3, n: 4, s: 'é', e: { y: 'z' } },
    ]);
    expect(rowsDocument([])).toBe('[]');
  });

  it('finds \\u0000 escapes, not escaped backslashes followed by u0000', () => {
    expect(hasNulEscape(JSON.stringify({ a: 'x\u0000y' }))).toBe(true);
    expect(hasNulEscape(JSON.stringify({ a: 'x\\u0000y' }))).toBe(false);
    expect(hasNulEscape(JSON.stringify({ a: 'x\\\u0000y' }))).toBe(true);
    expect(hasNulEscape('{"a":"plain"}')).toBe(false);
  });

  it('maps PostgreSQL errors to delivery error kinds, without the password', () => {
    const secret = createRedactor(['s3cr3t-pass']);
    expect(
      pgError(pgFailure('28P01', 'password authentication failed for user "u" s3cr3t-pass'), secret),
    ).toMatchObject({ kind: 'auth', retryable: false });
    expect(pgError(pgFailure('28P01', 'x s3cr3t-pass'), secret).message).not.toContain('s3cr3t-pass');
    expect(pgError(pgFailure('28000', 'role "x" does not exist'), secret).kind).toBe('auth');
    for (const code of ['42P01', '42501', '3F000', '3D000'])
      expect(pgError(pgFailure(code, 'no'), secret)).toMatchObject({ kind: 'config', retryable: false });
    expect(pgError(pgFailure('ECONNREFUSED', 'connect ECONNREFUSED'), secret)).toMatchObject({
      kind: 'connection',
      retryable: true,
    });
    expect(pgError(pgFailure('57P01', 'terminating connection due to administrator command'), secret).kind).toBe(
      'connection',
    );
    expect(pgError(new Error('Connection terminated unexpectedly'), secret).kind).toBe('connection');
    expect(pgError(new Error('The server does not support SSL connections'), secret).kind).toBe('tls');
    expect(pgError(pgFailure('40P01', 'deadlock detected'), secret)).toMatchObject({
      kind: 'protocol',
      retryable: true,
    });
    expect(pgError(pgFailure('40P01', 'deadlock detected'), secret).message).toBe(
      'PostgreSQL 40P01: deadlock detected',
    );
  });
});
