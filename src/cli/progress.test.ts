// Progress of long work on stderr, only with --progress (or a terminal): `weir config import`
// against the real operations (a test app on a loopback port), `weir backfill ... --wait`
// against a small server answering the backfill contract (POST /api/integrations/{id}/backfill
// 201 with the job, GET /api/backfill-jobs/{id} the job as it runs). Without --progress and with
// stderr not a terminal, stderr is empty; stdout is the same with and without.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/support/app.js';
import { createDestination } from '../../test/support/delivery-api.js';
import { createOrganization, createPrincipal, type Principal } from '../../test/support/identity.js';
import { http } from '../../test/support/ingest.js';

type Json = Record<string, unknown>;
const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'weir-progress-'));

function weir(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
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

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('weir config import: progress', () => {
  let t: TestApp;
  let base: string;
  let platform: Principal;
  let orgs: number[];

  beforeAll(async () => {
    t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    orgs = [
      await createOrganization(t, 'Progress source'),
      await createOrganization(t, 'Progress quiet'),
      await createOrganization(t, 'Progress shown'),
    ];
    platform = await createPrincipal(t, { role: 'admin' });
    const h = platform.headers;
    await http(base, 'POST', '/api/integrations/', { name: 'vpn', platform: 'custom', organization_id: orgs[0] }, h);
    await createDestination(base, h, {
      name: 'lake',
      type: 'http',
      organization_id: orgs[0],
      config: { url: 'http://127.0.0.1:9/in' },
    });
    await http(
      base,
      'POST',
      '/api/detections/rules',
      {
        name: 'vpn sign-ins',
        organization_id: orgs[0],
        definition: { condition: { field: 'class_uid', op: 'eq', value: 3002 }, severity_id: 2 },
      },
      h,
    );
  }, 60_000);
  afterAll(async () => t?.close());

  it('prints the document per kind, the plan per kind and the apply on stderr with --progress; stdout unchanged', async () => {
    const env = { WEIR_URL: base, WEIR_TOKEN: platform.token };
    const file = path.join(dir, 'bundle.json');
    const exported = await weir(['config', 'export', '--organization', String(orgs[0]), '--out', file], env);
    expect(exported.code, exported.stderr).toBe(0);

    const quiet = await weir(['config', 'import', file, '--organization', String(orgs[1])], env);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe('');

    const shown = await weir(['config', 'import', file, '--organization', String(orgs[2]), '--progress'], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe(quiet.stdout);
    expect(shown.stdout).toMatch(/create\s+detection_rule\s+vpn sign-ins/);
    const lines = shown.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(
        `^read ${file}: 3 objects \\(integrations 1, mappings 0, destinations 1, routes 0, .*detection_rules 1`,
      ),
    );
    expect(lines[1]).toBe('planning (dry run)');
    expect(lines).toEqual(
      expect.arrayContaining(['  integration: 1 create', '  destination: 1 create', '  detection_rule: 1 create']),
    );
    expect(lines.find((l) => l.startsWith('applying '))).toMatch(/^applying 3 changes, all or nothing \(\d+\.\d s\)$/);
    expect(lines.at(-1)).toMatch(/^answered HTTP 200 after \d+\.\d s$/);
  }, 120_000);
});

describe('weir backfill --wait: progress', () => {
  let server: Server;
  let url: string;
  const reads = new Map<string, number>();
  const job = (id: string, status: string, pages: number, done: boolean): Json => ({
    id,
    organization_id: 1,
    integration_id: 5,
    streams: ['system_log'],
    from_ts: '2026-01-01T00:00:00.000Z',
    to_ts: '2026-01-02T00:00:00.000Z',
    status,
    cancel_requested: false,
    progress: {
      system_log: {
        chunk_from: done ? '2026-01-02T00:00:00.000Z' : '2026-01-01T00:00:00.000Z',
        chunk_to: null,
        cursor: null,
        events: pages * 100,
        filtered: 0,
        pages,
        done,
      },
    },
    events: pages * 100,
    pages,
    warnings: [],
    error: status === 'failed' ? 'the vendor answered 401' : null,
    resume_at: null,
  });
  /** A job read n times: queued, running (1 page, then 2), then its end. */
  const stateOf = (id: string, n: number) => {
    const end = id.startsWith('bad') ? 'failed' : 'completed';
    if (n === 0) return job(id, 'queued', 0, false);
    if (n === 1) return job(id, 'running', 1, false);
    if (n === 2) return job(id, 'running', 2, false);
    return job(id, end, 3, end === 'completed');
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json) : undefined;
        const send = (status: number, b: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(b));
        };
        const u = new URL(req.url ?? '/', 'http://x');
        const start = /^\/api\/integrations\/(\d+)\/backfill$/.exec(u.pathname);
        if (req.method === 'POST' && start) {
          if (!Array.isArray(body?.streams)) return send(422, { detail: 'body/streams is required' });
          const id = `${String((body.streams as string[])[0])}-${reads.size}`;
          reads.set(id, 0);
          return send(201, stateOf(id, 0));
        }
        const get = /^\/api\/backfill-jobs\/(.+)$/.exec(u.pathname);
        if (req.method === 'GET' && get && reads.has(get[1]!)) {
          const n = reads.get(get[1]!)! + 1;
          reads.set(get[1]!, n);
          return send(200, stateOf(get[1]!, n));
        }
        send(404, { detail: 'Backfill job not found' });
      })();
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  const start = (streams: string, ...more: string[]) =>
    weir(
      [
        'backfill',
        'start',
        '5',
        '--streams',
        streams,
        '--from',
        '2026-01-01T00:00:00Z',
        '--to',
        '2026-01-02T00:00:00Z',
        ...more,
      ],
      { WEIR_URL: url, WEIR_TOKEN: 'svcsk_test' },
    );

  it('follows the job to its end: progress lines on stderr with --progress, the final job on stdout either way', async () => {
    const quiet = await start('system_log', '--wait', '--interval', '0.05');
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe('');
    const final = JSON.parse(quiet.stdout) as Json;
    expect(final).toMatchObject({ status: 'completed', events: 300, pages: 3 });

    const shown = await start('system_log', '--wait', '--interval', '0.05', '--progress');
    expect(shown.code, shown.stderr).toBe(0);
    expect({ ...(JSON.parse(shown.stdout) as Json), id: null }).toEqual({ ...final, id: null });
    const id = String((JSON.parse(shown.stdout) as Json).id);
    expect(shown.stderr.trimEnd().split('\n')).toEqual([
      `backfill ${id}: queued, 0 pages, 0 events; system_log from 2026-01-01T00:00:00.000Z (0 events)`,
      `backfill ${id}: running, 1 pages, 100 events; system_log from 2026-01-01T00:00:00.000Z (100 events)`,
      `backfill ${id}: running, 2 pages, 200 events; system_log from 2026-01-01T00:00:00.000Z (200 events)`,
      `backfill ${id}: completed, 3 pages, 300 events; system_log done (300 events)`,
    ]);
  }, 60_000);

  it('a failed job exits 1 naming its error; without --wait the job as created, exit 0; status follows too', async () => {
    const failed = await start('bad', '--wait', '--interval', '0.05');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^weir: backfill bad-\d+ failed: the vendor answered 401\n$/);
    const created = await start('system_log');
    expect(created.code).toBe(0);
    const job = JSON.parse(created.stdout) as Json;
    expect(job).toMatchObject({ status: 'queued' });
    const status = await weir(['backfill', 'status', String(job.id), '--wait', '--interval', '0.05'], {
      WEIR_URL: url,
      WEIR_TOKEN: 'svcsk_test',
    });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ status: 'completed' });
    const missing = await weir(['backfill', 'status', 'nope'], { WEIR_URL: url, WEIR_TOKEN: 'svcsk_test' });
    expect(missing).toMatchObject({ code: 1, stderr: 'weir: Backfill job not found (HTTP 404)\n' });
    const usage = await weir(['backfill', 'start', '5'], { WEIR_URL: url, WEIR_TOKEN: 'svcsk_test' });
    expect(usage).toMatchObject({ code: 2, stderr: 'weir: weir backfill start needs --streams, --from and --to\n' });
  }, 60_000);
});
