// `weir config export|diff|import` as a user runs them (child processes), against a small
// HTTP server that answers the import/export contract the configuration bundle operations
// follow: export 200 with the document; import {document, dry_run?, secrets?} answered 200
// {dry_run, applied, summary, items}, 409 with those fields in the error body's details
// ({detail, error: {code, message, details}}), or 422. The
// server records the requests, so the tests check what the command sent.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Json = Record<string, unknown>;
const ROOT = path.resolve(import.meta.dirname, '../..');
const TOKEN = 'svcsk_cli-test-token-never-printed';
const dir = mkdtempSync(path.join(tmpdir(), 'weir-cli-'));

interface Seen {
  method: string;
  url: string;
  authorization: string;
  body: Json | undefined;
}

const EXPORTED = {
  version: 1,
  organization: 'Acme',
  routes: [{ name: 'all', destinations: ['siem'] }],
  destinations: [{ name: 'siem', type: 'http', credential: { ref: 'siem-token' } }],
};
const ITEMS_CHANGED = [
  {
    kind: 'route',
    name: 'all',
    action: 'update',
    changes: [{ path: 'destinations', from: ['siem'], to: ['siem', 'lake'] }],
  },
  { kind: 'destination', name: 'lake', action: 'create' },
  { kind: 'destination', name: 'siem', action: 'unchanged' },
];

let server: Server;
let url: string;
const seen: Seen[] = [];

/** The project's error body, the diff in its details (as config_bundle.conflict answers). */
function conflictBody(detail: string, details: Json): Json {
  return { detail, error: { code: 'config_bundle.conflict', message: detail, details } };
}

function answer(
  document: Json | undefined,
  dryRun: boolean,
  secrets: Json | undefined,
): { status: number; body: Json } {
  const name = (document as { organization?: unknown } | undefined)?.organization;
  if (typeof name !== 'string') return { status: 422, body: { detail: 'document.organization is required' } };
  if (name === 'Same') {
    return {
      status: 200,
      body: {
        dry_run: dryRun,
        applied: !dryRun,
        summary: { create: 0, update: 0, unchanged: 2, conflict: 0 },
        items: [
          { kind: 'route', name: 'all', action: 'unchanged' },
          { kind: 'destination', name: 'siem', action: 'unchanged' },
        ],
      },
    };
  }
  if (name === 'Clash') {
    const items = [
      { kind: 'route', name: 'all', action: 'conflict', reason: 'changed on the server since the export' },
    ];
    const summary = { create: 0, update: 0, unchanged: 0, conflict: 1 };
    return dryRun
      ? { status: 200, body: { dry_run: true, applied: false, summary, items } }
      : {
          status: 409,
          body: conflictBody('the import has conflicts', { dry_run: false, applied: false, summary, items }),
        };
  }
  if (!dryRun && (secrets as { 'siem-token'?: unknown } | undefined)?.['siem-token'] === undefined) {
    return {
      status: 409,
      body: conflictBody('secret siem-token is needed', {
        dry_run: false,
        applied: false,
        summary: { create: 1, update: 1, unchanged: 1, conflict: 0 },
        items: ITEMS_CHANGED,
      }),
    };
  }
  return {
    status: 200,
    body: {
      dry_run: dryRun,
      applied: !dryRun,
      summary: { create: 1, update: 1, unchanged: 1, conflict: 0 },
      items: ITEMS_CHANGED.map((i) => ({ ...i, id: dryRun ? undefined : 7 })),
    },
  };
}

async function read(req: IncomingMessage): Promise<Json | undefined> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json) : undefined;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void (async () => {
      const body = await read(req);
      seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization ?? '', body });
      const send = (status: number, b: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(b));
      };
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, { detail: 'Not authenticated' });
      const u = new URL(req.url ?? '/', 'http://x');
      if (req.method === 'GET' && u.pathname === '/api/collectors/config/export') {
        return u.searchParams.get('organization_id') === '404'
          ? send(404, { detail: 'Organization not found' })
          : send(200, EXPORTED);
      }
      if (req.method === 'POST' && u.pathname === '/api/collectors/config/import') {
        const a = answer(body?.document as Json | undefined, body?.dry_run === true, body?.secrets as Json | undefined);
        return send(a.status, a.body);
      }
      send(404, { detail: 'Not found' });
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

function weir(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, WEIR_URL: url, WEIR_TOKEN: TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code: code ?? signal ?? -1, stdout, stderr })),
  );
}

function file(name: string, content: unknown): string {
  const p = path.join(dir, name);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
}

describe('weir config export', () => {
  it('writes the document, pretty, to the file or stdout, for the organization asked', async () => {
    const out = path.join(dir, 'exported.json');
    const [toFile, toStdout, missing] = await Promise.all([
      weir(['config', 'export', '--organization', '3', '--out', out]),
      weir(['config', 'export', '--token', TOKEN], { WEIR_TOKEN: '' }),
      weir(['config', 'export', '--organization', '404']),
    ]);
    expect(toFile.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(`${JSON.stringify(EXPORTED, null, 2)}\n`);
    expect(seen.some((s) => s.url === '/api/collectors/config/export?organization_id=3')).toBe(true);
    expect(toStdout.code).toBe(0);
    expect(JSON.parse(toStdout.stdout)).toEqual(EXPORTED);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('weir: Organization not found (HTTP 404)\n');
    for (const r of [toFile, toStdout, missing]) expect(r.stdout + r.stderr).not.toContain(TOKEN);
  }, 60_000);
});

describe('weir config diff', () => {
  it('prints one line per item with its changes, and exits 1 when something would change', async () => {
    const doc = file('changed.json', { organization: 'Acme', routes: [] });
    const r = await weir(['config', 'diff', doc, '--organization', '3']);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^update\s+route\s+all$/);
    expect(lines[1]).toContain('"path":"destinations"');
    expect(lines[2]).toMatch(/^create\s+destination\s+lake$/);
    expect(lines[3]).toMatch(/^unchanged\s+destination\s+siem$/);
    expect(lines.at(-1)).toBe('summary: create 1, update 1, unchanged 1, conflict 0');
    const sent = seen.filter((s) => s.method === 'POST').at(-1)!;
    expect(sent.url).toBe('/api/collectors/config/import?organization_id=3');
    expect(sent.body).toEqual({ document: { organization: 'Acme', routes: [] }, dry_run: true });
  }, 60_000);

  it('exits 0 when nothing would change, 1 on conflicts, 2 on a bad document or file', async () => {
    const [same, clash, bad, notJson] = await Promise.all([
      weir(['config', 'diff', file('same.json', { organization: 'Same' })]),
      weir(['config', 'diff', file('clash.json', { organization: 'Clash' })]),
      weir(['config', 'diff', file('bad.json', { nothing: true })]),
      weir(['config', 'diff', file('broken.json', '{not json')]),
    ]);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain('summary: create 0, update 0, unchanged 2, conflict 0');
    expect(clash.code).toBe(1);
    expect(clash.stdout).toMatch(/conflict\s+route\s+all\n\s+reason: changed on the server since the export/);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('weir: document.organization is required (HTTP 422)\n');
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain('is not JSON');
  }, 60_000);
});

describe('weir config import', () => {
  it('sends the secrets and prints what was applied', async () => {
    const doc = file('apply.json', { organization: 'Acme' });
    const secrets = file('secrets.json', { 'siem-token': 'hunter2' });
    const r = await weir(['config', 'import', doc, '--secrets', secrets]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/update\s+route\s+all/);
    expect(r.stdout).toMatch(/create\s+destination\s+lake/);
    expect(r.stdout).not.toMatch(/unchanged\s+destination/);
    expect(r.stdout).toContain('applied: create 1, update 1, unchanged 1, conflict 0');
    expect(r.stdout).not.toContain('hunter2');
    const sent = seen.filter((s) => s.method === 'POST').at(-1)!;
    expect(sent.body).toEqual({
      document: { organization: 'Acme' },
      dry_run: false,
      secrets: { 'siem-token': 'hunter2' },
    });
  }, 60_000);

  it('exits 1 with the detail when the server needs secrets or finds conflicts, 2 on a bad secrets file', async () => {
    const [needs, clash, badSecrets] = await Promise.all([
      weir(['config', 'import', file('needs.json', { organization: 'Acme' })]),
      weir(['config', 'import', file('clash2.json', { organization: 'Clash' })]),
      weir([
        'config',
        'import',
        file('ok.json', { organization: 'Acme' }),
        '--secrets',
        file('bad-secrets.json', ['x']),
      ]),
    ]);
    expect(needs.code).toBe(1);
    expect(needs.stderr).toBe('weir: nothing applied: secret siem-token is needed (HTTP 409)\n');
    expect(clash.code).toBe(1);
    expect(clash.stdout).toMatch(/conflict\s+route\s+all/);
    expect(badSecrets.code).toBe(2);
    expect(badSecrets.stderr).toContain('must be a JSON object');
  }, 60_000);
});
