// The console served by the api role: its files with the security headers and caching,
// pre-compressed variants, index.html for the console's own routes (browser navigations
// only), and nothing of /api, the probes or an unknown asset taken over by the fallback.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_SECURITY_HEADERS } from '../../src/platform/http/console.js';
import { createTestApp, type TestApp } from '../support/app.js';

const INDEX =
  '<!doctype html><html lang="en"><head><title>Weir</title><script type="module" src="/assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});`;
const html = { accept: 'text/html,application/xhtml+xml' };

let served: TestApp;
let missing: TestApp;
beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'weir-console-test-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), INDEX);
  writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), SCRIPT);
  writeFileSync(path.join(dir, 'assets', 'index-abc123.js.br'), brotliCompressSync(SCRIPT));
  [served, missing] = await Promise.all([
    createTestApp({ env: { WEIR_CONSOLE_DIR: dir } }),
    createTestApp({ env: { WEIR_CONSOLE_DIR: path.join(dir, 'not-built') } }),
  ]);
});
afterAll(async () => {
  await served?.close();
  await missing?.close();
});

describe('the console at /', () => {
  it('serves index.html with its CSP and security headers, never cached', async () => {
    const res = await served.app.inject({ method: 'GET', url: '/', headers: html });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toBe(INDEX);
    for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS)) expect(res.headers[name], name).toBe(value);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it("answers the console's own routes with index.html when a browser navigates to them", async () => {
    for (const url of ['/integrations/7', '/mappings/0191e1a0-0000-7000-8000-000000000000', '/admin/users?x=1']) {
      const res = await served.app.inject({ method: 'GET', url, headers: html });
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toBe(INDEX);
      expect(res.headers['content-security-policy']).toBeDefined();
    }
  });

  it('serves hashed assets for a year, pre-compressed when the browser takes it', async () => {
    const plain = await served.app.inject({ method: 'GET', url: '/assets/index-abc123.js' });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.body).toBe(SCRIPT);
    const br = await served.app.inject({
      method: 'GET',
      url: '/assets/index-abc123.js',
      headers: { 'accept-encoding': 'br, gzip' },
    });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.rawPayload.length).toBeLessThan(SCRIPT.length / 10);
  });

  it('leaves the API, the probes and unknown files alone', async () => {
    const api = await served.app.inject({ method: 'GET', url: '/api/nothing-here', headers: html });
    expect(api.statusCode).toBe(404);
    expect(api.json<{ detail: string }>().detail).toBe('No route GET /api/nothing-here');
    expect(api.headers['content-security-policy']).toBeUndefined();
    const livez = await served.app.inject({ method: 'GET', url: '/livez', headers: html });
    expect(livez.json()).toEqual({ status: 'ok' });
    const asset = await served.app.inject({ method: 'GET', url: '/assets/gone-123.js', headers: html });
    expect(asset.statusCode).toBe(404);
    const json = await served.app.inject({
      method: 'GET',
      url: '/integrations/7',
      headers: { accept: 'application/json' },
    });
    expect(json.statusCode).toBe(404);
    expect((await served.app.inject({ method: 'POST', url: '/integrations', headers: html })).statusCode).toBe(404);
    const me = await served.app.inject({ method: 'GET', url: '/api/auth/me' });
    expect(me.statusCode).toBe(401);
  });

  it('says how to build the console when it is not there', async () => {
    const res = await missing.app.inject({ method: 'GET', url: '/', headers: html });
    expect(res.statusCode).toBe(404);
    expect(res.json<{ detail: string }>().detail).toContain('npm run build');
    expect((await missing.app.inject({ method: 'GET', url: '/livez' })).statusCode).toBe(200);
  });
});
