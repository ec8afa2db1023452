// A destination whose host the outbound address guard would refuse is saved with a
// warning that names the restriction and its setting, instead of failing later in the DLQ.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { httpSink } from '../../pipeline/sinks/http/index.js';
import { createNetPolicy } from '../../platform/net/ssrf.js';
import { outboundWarnings } from './rules.js';

type Json = Record<string, unknown>;
const BASE = '/api/collectors/destinations';
let t: TestApp;
let admin: Principal;

beforeAll(async () => {
  // Unlike the other tests' apps, this one keeps the guard's defaults: loopback refused.
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_OUTBOUND_ALLOW_CIDRS: '' } });
  const org = await createOrganization(t, 'Warnings');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
});
afterAll(async () => t?.close());

const create = (body: Json) => t.app.inject({ method: 'POST', url: BASE, headers: admin.headers, payload: body });

describe('warnings on a refused outbound address', () => {
  it('saves a loopback destination (201) and says deliveries will refuse it, naming WEIR_OUTBOUND_ALLOW_CIDRS', async () => {
    const res = await create({ name: 'local hook', type: 'http', config: { url: 'http://127.0.0.1:8088/hook' } });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json<{ id: string; warnings: Json[] }>();
    expect(body.warnings).toHaveLength(1);
    expect(body.warnings[0]).toMatchObject({ code: 'outbound_address_refused', field: 'config/url' });
    const message = String(body.warnings[0]!.message);
    expect(message).toContain('127.0.0.1 is a loopback address');
    expect(message).toContain('dead-letter queue');
    expect(message).toContain('WEIR_OUTBOUND_ALLOW_CIDRS (for example 127.0.0.0/8)');
    expect(
      (await t.app.inject({ method: 'GET', url: `${BASE}/${body.id}`, headers: admin.headers })).json(),
    ).not.toHaveProperty('warnings');
  });

  it('resolves names as a delivery would: localhost', async () => {
    const res = await create({ name: 'by name', type: 'http', config: { url: 'http://localhost:8088/' } });
    expect(res.statusCode).toBe(201);
    expect(String(res.json<{ warnings: Json[] }>().warnings[0]?.message)).toMatch(
      /^config\/url: localhost resolves \(from this server, now\) to (127\.0\.0\.1|::1), a loopback address/,
    );
  });

  it('names the cloud metadata range and host fields of other types', async () => {
    const res = await create({ name: 'syslog', type: 'syslog', config: { host: '169.254.169.254', protocol: 'udp' } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json<{ warnings: Json[] }>().warnings[0]).toMatchObject({
      field: 'config/host',
      message: expect.stringContaining('link-local address'),
    });
  });

  it('says nothing for an address deliveries may reach, and checks a new config on update only', async () => {
    const ok = await create({ name: 'public', type: 'http', config: { url: 'https://192.0.2.10/in' } });
    expect(ok.statusCode).toBe(201);
    const id = ok.json<{ id: string; warnings: Json[] }>().id;
    expect(ok.json<{ warnings: Json[] }>().warnings).toEqual([]);
    const moved = await t.app.inject({
      method: 'PUT',
      url: `${BASE}/${id}`,
      headers: admin.headers,
      payload: { config: { url: 'http://[::1]:9/' } },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json<{ warnings: Json[] }>().warnings[0]).toMatchObject({
      field: 'config/url',
      message: expect.stringContaining('::1 is a loopback address'),
    });
    const renamed = await t.app.inject({
      method: 'PUT',
      url: `${BASE}/${id}`,
      headers: admin.headers,
      payload: { name: 'renamed' },
    });
    expect(renamed.json<{ warnings: Json[] }>().warnings).toEqual([]);
  });
});

describe('outboundWarnings', () => {
  it('is empty when the setting allows the range', async () => {
    const allowed = createNetPolicy({ allowCidrs: ['127.0.0.0/8'] });
    expect(await outboundWarnings(httpSink, { url: 'http://127.0.0.1:9/' }, allowed)).toEqual([]);
    const strict = createNetPolicy({ allowCidrs: [] });
    expect(await outboundWarnings(httpSink, { url: 'http://127.0.0.1:9/' }, strict)).toHaveLength(1);
  });
});
