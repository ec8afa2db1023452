// What a sender is told when a push is not what the endpoint takes: the wrong credential,
// an undeclared gzip body, a Content-Type that is not JSON text, query parameters.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { ingestTarget } from '../../../test/support/ingest-target.js';

let t: TestApp;
let admin: Principal;
let token: string;

beforeAll(async () => {
  t = await createTestApp({ captureLogs: true, env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  const org = await createOrganization(t, 'Answers');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  ({ token } = await ingestTarget(t, admin, org, { name: 'answers' }));
});
afterAll(async () => t?.close());

const push = (url: string, payload: string | Buffer, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}`, ...headers }, payload });

describe('the wrong credential', () => {
  it('tells an API token apart and says where an ingestion token comes from', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/events',
      headers: admin.headers,
      payload: '{"a":1}',
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="service"');
    expect(res.json().error.code).toBe('ingest.invalid_token');
    expect(res.json().detail).toMatch(/ingestion token .* not an API token/);
    expect(res.json().detail).toContain('POST /api/ingest/integrations/{integration_id}/token');
  });

  it('says the same for any svcsk_ bearer, valid or not: nothing is looked up', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/events',
      headers: { authorization: 'Bearer svcsk_not-a-real-one' },
      payload: '{"a":1}',
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toMatch(/not an API token/);
  });

  it('tells a console session apart from a missing token', async () => {
    const withSession = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/events',
      headers: { cookie: 'weir_session=whatever' },
      payload: '{"a":1}',
    });
    expect(withSession.statusCode).toBe(401);
    expect(withSession.json().detail).toMatch(/not a console session/);
    const none = await t.app.inject({ method: 'POST', url: '/api/ingest/events', payload: '{"a":1}' });
    expect(none.json().detail).toMatch(/^Missing ingestion token/);
    expect(none.json().detail).toContain('/api/ingest/integrations/{integration_id}/token');
  });

  it('keeps the plain answer for a wrong ingestion token', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/events',
      headers: { authorization: 'Bearer svcik_nope' },
      payload: '{"a":1}',
    });
    expect(res.json().detail).toBe('Invalid or missing ingestion token');
  });
});

describe('gzip without Content-Encoding', () => {
  it('answers 400 ingest.undeclared_gzip saying to set Content-Encoding: gzip', async () => {
    const res = await push('/api/ingest/events', gzipSync('{"a":1}\n'), { 'content-type': 'application/x-ndjson' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('ingest.undeclared_gzip');
    expect(res.json().detail).toMatch(/looks like gzip/);
    expect(res.json().detail).toContain('Content-Encoding: gzip');
  });

  it('still takes the same body with the header', async () => {
    const res = await push('/api/ingest/events', gzipSync('{"a":1}\n'), { 'content-encoding': 'gzip' });
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe('Content-Type', () => {
  it('accepts JSON and NDJSON types in any case, with a UTF-8 charset, and +json types', async () => {
    for (const type of [
      'Application/JSON; charset=UTF-8',
      'application/x-ndjson',
      'application/ndjson',
      'application/jsonl',
      'text/plain; charset="utf-8"',
      'application/cloudevents-batch+json',
    ]) {
      const res = await push('/api/ingest/events', '{"a":1}', { 'content-type': type });
      expect(res.statusCode, `${type}: ${res.body}`).toBe(200);
    }
  });

  it('answers 415 naming the accepted types for anything else, before reading the body', async () => {
    for (const type of [
      'text/html',
      'multipart/form-data; boundary=x',
      'application/xml',
      'application/octet-stream',
      'json',
      'application/json; charset=iso-8859-1',
    ]) {
      const res = await push('/api/ingest/events', '{"a":1}', { 'content-type': type });
      expect(res.statusCode, type).toBe(415);
      expect(res.json().error.code).toBe('request.unsupported_media_type');
      expect(res.json().detail).toContain('application/x-ndjson');
      expect(res.json().error.details.accepted).toContain('application/json');
    }
  });

  it('sends a compressed-file type to Content-Encoding', async () => {
    const res = await push('/api/ingest/events', gzipSync('{"a":1}'), { 'content-type': 'application/gzip' });
    expect(res.statusCode).toBe(415);
    expect(res.json().detail).toContain('Content-Encoding: gzip');
  });

  it('checks the token first: no Content-Type answer without one', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/events',
      headers: { 'content-type': 'text/html' },
      payload: '{"a":1}',
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('query parameters', () => {
  it('ignores parameters senders add and names them in the answer', async () => {
    const res = await push('/api/ingest/events?_=1712&source=fluentbit', '{"a":1}');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().ignored_parameters).toEqual(['_', 'source']);
    const plain = await push('/api/ingest/events', '{"a":1}');
    expect(plain.json()).not.toHaveProperty('ignored_parameters');
  });

  it('honours format=ndjson: each line is an event even when the body is one document', async () => {
    const body = '{"a":1,\n"b":2}';
    expect((await push('/api/ingest/events', body)).json()).toMatchObject({ accepted: 1, rejected: 0 });
    const res = await push('/api/ingest/events?format=ndjson', body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details).toMatchObject({ rejected: 2 });
    expect((await push('/api/ingest/events?format=ndjson', '{"a":1}\n{"a":2}\n')).json()).toMatchObject({
      accepted: 2,
    });
  });

  it('honours format=json: the body must be one document', async () => {
    expect((await push('/api/ingest/events?format=json', '[{"a":1},{"a":2}]')).json()).toMatchObject({ accepted: 2 });
    const res = await push('/api/ingest/events?format=json', '{"a":1}\n{"a":2}\n');
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/format=json .* not one JSON document/);
  });

  it('answers 422 for an unknown format value', async () => {
    const res = await push('/api/ingest/events?format=xml', '{"a":1}');
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toContain('format');
  });

  it('refuses a token in the URL with 422, and keeps its value out of the log', async () => {
    const before = t.logs.length;
    const res = await t.app.inject({ method: 'POST', url: `/api/ingest/events?token=${token}`, payload: '{"a":1}' });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('ingest.token_in_query');
    expect(res.json().detail).toContain('Authorization: Bearer');
    expect(JSON.stringify(res.json())).not.toContain(token);
    const lines = JSON.stringify(t.logs.slice(before));
    expect(lines).toContain('token=[redacted]');
    expect(lines).not.toContain(token);
  });

  it('keeps the strict rule on the other ingest operations', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/ingest/integrations/1?verbose=1',
      headers: admin.headers,
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('request.unknown_parameter');
  });
});
