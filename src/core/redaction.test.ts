import { describe, expect, it } from 'vitest';
import { createRedactor, REDACT_MIN, REDACTED, redactAndCut, redactPatterns, secretForms } from './redaction.js';
import { leaks } from '../../test/support/leaks.js';

const PASSWORD = 'Tr0ub4dor&3-correct/horse+battery=staple';
const basic = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString('base64');

describe('createRedactor', () => {
  const redact = createRedactor([PASSWORD, `svc-user:${PASSWORD}`]);

  it('hides the raw value, and every prefix of it down to REDACT_MIN characters', () => {
    expect(redact(`bad password ${PASSWORD} given`)).toBe(`bad password ${REDACTED} given`);
    for (let n = REDACT_MIN; n <= PASSWORD.length; n++) {
      const out = redact(`echo: ${PASSWORD.slice(0, n)}... (cut by the server)`);
      expect(out, `prefix of ${n}`).toBe(`echo: ${REDACTED}... (cut by the server)`);
    }
  });

  it('hides a truncated base64 Basic credential, cut at any character', () => {
    const header = basic('svc-user', PASSWORD);
    for (let n = REDACT_MIN; n <= header.length; n++) {
      const out = redact(`{"error":"denied","authorization":"Basic ${header.slice(0, n)}`);
      expect(out.includes(header.slice(0, REDACT_MIN)), `cut at ${n}: ${out}`).toBe(false);
      expect(leaks(out, PASSWORD), out).toEqual([]);
    }
  });

  it('hides the value base64-encoded at any byte alignment inside a longer base64 text, URL-encoded and JSON-escaped', () => {
    for (const before of ['', 'x', 'xy', 'xyz', '{"k":"']) {
      const blob = Buffer.from(`${before}${PASSWORD}"}`).toString('base64');
      expect(leaks(redact(`body was ${blob}`), PASSWORD), before).toEqual([]);
      expect(leaks(redact(`body was ${blob.replace(/\+/g, '-').replace(/\//g, '_')}`), PASSWORD)).toEqual([]);
    }
    expect(leaks(redact(`GET /x?password=${encodeURIComponent(PASSWORD)}`), PASSWORD)).toEqual([]);
    expect(leaks(redact(`q=${new URLSearchParams({ p: PASSWORD }).toString()}`), PASSWORD)).toEqual([]);
    expect(leaks(redact(JSON.stringify({ said: `pw "${PASSWORD}"` })), PASSWORD)).toEqual([]);
    expect(leaks(redact(JSON.stringify(PASSWORD).replace(/\//g, '\\/')), PASSWORD)).toEqual([]);
  });

  it('hides each line of a multi-line secret (a PEM key), whole or cut', () => {
    const key =
      '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgPhTBGo0USdyPxg6o\nMWytmzwQ3vs+n79r0g1yxiDH4qahRANCAARV7g1wNHHlJ7GKTCYEuJlkB4Yi1AXm\n-----END PRIVATE KEY-----\n';
    const r = createRedactor([key]);
    const secondLine = key.split('\n')[2]!;
    expect(r(`bad key: ${secondLine.slice(0, 30)}`)).toBe(`bad key: ${REDACTED}`);
    expect(r(`key ${JSON.stringify(key)}`)).not.toContain('MIGHAgEA');
    expect(r(key)).not.toMatch(/MWytmz|MIGHAg/);
  });

  it('leaves texts without the secret as they are, and joins touching matches into one marker', () => {
    expect(redact('HTTP 401: unauthorized')).toBe('HTTP 401: unauthorized');
    expect(redact(`${PASSWORD}${PASSWORD}`)).toBe(REDACTED);
  });

  it('keeps the public prefix of a pair readable: the user name alone is not the secret', () => {
    const r = createRedactor([{ value: 'weir:es-password-1', publicPrefix: 5 }]);
    expect(r('cluster "weir-test" answered; user weir: denied')).toBe(
      'cluster "weir-test" answered; user weir: denied',
    );
    expect(r('login weir:es-pass')).toBe(`login ${REDACTED}`);
    expect(leaks(r(`Basic ${basic('weir', 'es-password-1').slice(0, 12)}`), 'es-password-1')).toEqual([]);
  });

  it('ignores empty values and still applies the patterns', () => {
    const r = createRedactor(['', '   ']);
    expect(r('token=abcdef123')).toBe(`token=${REDACTED}`);
  });

  it('forms are at least REDACT_MIN long', () => {
    for (const f of secretForms('abc')) expect(f.length).toBeGreaterThanOrEqual(REDACT_MIN);
  });
});

describe('redactPatterns', () => {
  it('hides the credential after an Authorization scheme word, not only the scheme', () => {
    expect(redactPatterns('Authorization: Basic dXNlcjpwYXNzd29yZA==')).toBe(`Authorization: Basic ${REDACTED}`);
    expect(redactPatterns('{"authorization":"Bearer abc.def.ghi"}')).toBe(`{"authorization":"Bearer ${REDACTED}"}`);
    expect(redactPatterns('authorization=Splunk 1234-5678')).toBe(`authorization=Splunk ${REDACTED}`);
  });

  it('hides secret-named key values and bare scheme credentials', () => {
    expect(redactPatterns('x-amz-security-token: FQoGZXIvYXdzE')).toBe(`x-amz-security-token: ${REDACTED}`);
    expect(redactPatterns('?api_key=abc123&x=1')).toBe(`?api_key=${REDACTED}&x=1`);
    expect(redactPatterns('sent Basic dXNlcjpwYXNz')).toBe(`sent Basic ${REDACTED}`);
    expect(redactPatterns('Basic authentication is required')).toBe('Basic authentication is required');
  });
});

describe('redactAndCut', () => {
  it('redacts before it cuts, so a cut never leaves a longer piece of the secret', () => {
    const r = createRedactor([PASSWORD]);
    const text = `${'x'.repeat(190)} ${PASSWORD}`;
    const out = redactAndCut(r, text, 200);
    expect(out.length).toBeLessThanOrEqual(200);
    expect(leaks(out, PASSWORD)).toEqual([]);
  });

  it('reads a bounded window of a huge text', () => {
    const r = createRedactor([PASSWORD]);
    expect(redactAndCut(r, `${'y'.repeat(16_380)}${PASSWORD}`, 20_000)).not.toContain(PASSWORD.slice(0, 5));
  });
});
