import { describe, expect, it } from 'vitest';
import { checkHeaders, parseHttpUrl, probeVerdict, statusError, transportError } from './http-common.js';
import { createRedactor, redactPatterns } from '../../core/redaction.js';
import { NetError } from '../../platform/net/errors.js';
import { DeliveryError } from './types.js';

const answer = (status: number, text = '', headers: Record<string, string> = {}) => ({ status, text, headers });

describe('http-common', () => {
  it('maps statuses to kinds, with retryability and a redacted short answer', () => {
    expect(statusError(answer(401), redactPatterns)).toMatchObject({
      kind: 'auth',
      retryable: false,
      message: 'HTTP 401',
    });
    expect(statusError(answer(403), redactPatterns)).toMatchObject({ kind: 'auth' });
    expect(statusError(answer(408), redactPatterns)).toMatchObject({ kind: 'http_4xx', retryable: true });
    expect(statusError(answer(429, '', { 'retry-after': '2' }), redactPatterns)).toMatchObject({
      kind: 'rate_limited',
      retryable: true,
      retryAfterMs: 2000,
    });
    expect(statusError(answer(400), redactPatterns)).toMatchObject({ kind: 'http_4xx', retryable: false });
    expect(statusError(answer(502), redactPatterns)).toMatchObject({ kind: 'http_5xx', retryable: true });
    const e = statusError(
      answer(500, `oops   the key s3cr3t-value was\nbad ${'x'.repeat(400)}`),
      createRedactor(['s3cr3t-value']),
    );
    expect(e.message).toMatch(/^HTTP 500: oops the key \[redacted\] was bad x+…$/);
    expect(e.message.length).toBeLessThan(230);
  });

  it('maps transport failures, aborts first', () => {
    const aborted = AbortSignal.abort();
    expect(transportError(Object.assign(new Error('x'), { code: 'ECONNRESET' }), aborted).kind).toBe('timeout');
    expect(transportError(Object.assign(new Error('x'), { code: 'ECONNRESET' })).kind).toBe('connection');
    expect(transportError(Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' })).kind).toBe('timeout');
    expect(transportError(Object.assign(new Error('x'), { code: 'ENOTFOUND' })).kind).toBe('dns');
    expect(transportError(Object.assign(new Error('x'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' })).kind).toBe('tls');
    const blocked = new DeliveryError('blocked_address', 'refused');
    expect(transportError(new Error('wrapped', { cause: blocked }))).toBe(blocked);
    const guard = new NetError('blocked_address', 'refused to connect to 127.0.0.1');
    expect(transportError(new Error('wrapped', { cause: guard }))).toMatchObject({
      kind: 'blocked_address',
      message: 'refused to connect to 127.0.0.1',
      retryable: false,
    });
  });

  it('refuses URLs and headers that cannot work', () => {
    expect(() => parseHttpUrl('https://u:p@h/')).toThrow(/credential/);
    expect(() => parseHttpUrl('file:///etc/passwd')).toThrow(/http/);
    expect(parseHttpUrl('https://h:9/p?q=1#frag').toString()).toBe('https://h:9/p?q=1');
    expect(checkHeaders({ 'X-A': 'b' }, 'headers')).toEqual({ 'x-a': 'b' });
    expect(() => checkHeaders({ Host: 'evil' }, 'headers')).toThrow(DeliveryError);
    expect(() => checkHeaders(['x'], 'headers')).toThrow(DeliveryError);
  });
});

describe('answers to a connection test', () => {
  const answer = (status: number, headers: Record<string, string> = {}, text = '') => ({ status, headers, text });
  it('is ok on 2xx only, or 405/501 (the address takes other methods)', () => {
    expect(probeVerdict(answer(204), 'HEAD u', createRedactor([]))).toEqual({
      ok: true,
      detail: 'HEAD u answered 204 No Content',
    });
    expect(probeVerdict(answer(501), 'GET u', createRedactor([])).ok).toBe(true);
    expect(probeVerdict(answer(400, {}, 'bad'), 'GET u', createRedactor([]))).toEqual({
      ok: false,
      detail: 'GET u answered 400 Bad Request (bad)',
      error_kind: 'http_4xx',
    });
    expect(probeVerdict(answer(403), 'GET u', createRedactor([]))).toMatchObject({ ok: false, error_kind: 'auth' });
    expect(probeVerdict(answer(502), 'GET u', createRedactor([]))).toMatchObject({ ok: false, error_kind: 'http_5xx' });
  });

  it('names a redirect target without its query or user info, redacted', () => {
    const v = probeVerdict(
      answer(301, { location: 'https://user:pw@other.example/path-with-tok123456?key=tok123456' }),
      'HEAD u',
      createRedactor(['tok123456']),
    );
    expect(v).toMatchObject({ ok: false, error_kind: 'config' });
    expect(v.detail).toBe(
      'HEAD u answered 301 Moved Permanently (redirect to https://other.example/path-with-[redacted]): deliveries do not follow redirects; set the final URL',
    );
  });
});
