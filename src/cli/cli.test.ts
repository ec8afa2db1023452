// The `weir` commands as a user runs them: `node --import tsx src/main.ts ...` as a child
// process (what `npx tsx src/main.ts` runs). --help, and `tap` with the API's errors against
// a real test app on a loopback port. The config commands: config-commands.test.ts.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, startWorkerConsumers } from '../../test/support/app.js';
import { createDestination, seqOf, routeEverythingTo } from '../../test/support/delivery-api.js';
import { createOrganization, createPrincipal, type Principal } from '../../test/support/identity.js';
import { http } from '../../test/support/ingest.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/support/webhook-receiver.js';
import type { Consumer } from '../platform/queue/port.js';

type Json = Record<string, unknown>;
const ROOT = path.resolve(import.meta.dirname, '../..');
const okta = JSON.parse(
  readFileSync(path.join(ROOT, 'src/connectors/okta/fixtures/system_log.json'), 'utf8'),
) as Json[];

interface Run {
  code: number | string;
  stdout: string;
  stderr: string;
}

function weir(
  args: string[],
  env: Record<string, string>,
  onStdout?: (text: string, proc: ReturnType<typeof spawn>) => void,
): Promise<Run> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
    onStdout?.(stdout, proc);
  });
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code: code ?? signal ?? -1, stdout, stderr })),
  );
}

describe('weir --help', () => {
  it('lists every role and command; each command has its own help', async () => {
    const [all, diff, tapHelp] = await Promise.all([
      weir(['--help'], {}),
      weir(['config', 'diff', '--help'], {}),
      weir(['tap', '--help'], {}),
    ]);
    expect(all.code).toBe(0);
    for (const word of [
      'all',
      'api',
      'worker',
      'dispatcher',
      'beat',
      'migrate',
      'config export',
      'config diff <file>',
      'config import <file>',
      'tap <destination_id>',
    ])
      expect(all.stdout).toContain(word);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('--organization');
    expect(diff.stdout).toContain('0 nothing would change, 1 changes or conflicts, 2 error');
    expect(tapHelp.code).toBe(0);
    expect(tapHelp.stdout).toContain('--limit');
    expect(tapHelp.stdout).toContain('WEIR_TOKEN');
  }, 60_000);

  it('--version prints the version; a role asked for help prints it and starts nothing; a role refuses arguments', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'weir-role-help-'));
    const dataDir = path.join(dir, 'data');
    try {
      const [version, migrateHelp, allHelp, bogus] = await Promise.all([
        weir(['--version'], {}),
        weir(['migrate', '--help'], { WEIR_DATA_DIR: dataDir }),
        weir(['all', '-h'], { WEIR_DATA_DIR: dataDir }),
        weir(['all', '--port', '9'], { WEIR_DATA_DIR: dataDir }),
      ]);
      const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
      expect(version).toMatchObject({ code: 0, stdout: `weir ${pkg.version}\n` });
      expect(migrateHelp.code).toBe(0);
      expect(migrateHelp.stdout).toContain('usage: weir migrate');
      expect(migrateHelp.stdout).toContain('applies database migrations');
      expect(allHelp.code).toBe(0);
      expect(allHelp.stdout).toContain('usage: weir all');
      expect(bogus.code).toBe(2);
      expect(bogus.stderr).toContain('the role all takes no arguments (got --port 9)');
      // Nothing migrated, no server started: the data directory was never created.
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses an unknown option and a missing token with exit 2', async () => {
    const [unknown, noToken] = await Promise.all([
      weir(['tap', 'x', '--bogus'], {}),
      weir(['config', 'export'], { WEIR_URL: 'http://127.0.0.1:9' }),
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('bogus');
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('WEIR_TOKEN');
  }, 60_000);
});

describe('weir tap', () => {
  let t: TestApp;
  let base: string;
  let admin: Principal;
  let destination: string;
  let ingestToken: string;
  let receiver: WebhookReceiver;
  const consumers: Consumer[] = [];
  const loops: { stop(): Promise<void> }[] = [];

  beforeAll(async () => {
    t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_DISPATCH_POLL_MS: '20' } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const org = await createOrganization(t, 'Tap Org');
    admin = await createPrincipal(t, { role: 'admin', organizationId: org });
    receiver = await startWebhookReceiver({ keyOf: (event) => seqOf(event) });
    const created = await http(
      base,
      'POST',
      '/api/integrations/',
      { name: 'okta', platform: 'okta', organization_id: org },
      admin.headers,
    );
    ingestToken = String(
      (await http(base, 'POST', `/api/ingest/integrations/${String(created.json.id)}/token`, {}, admin.headers)).json
        .token,
    );
    destination = await routeEverythingTo(base, admin.headers, org, receiver.url);
    consumers.push(...startWorkerConsumers(t));
    loops.push(...t.container.loops.map((l) => l.start()));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(loops.map((l) => l.stop()));
    await Promise.all(consumers.map((c) => c.close()));
    await receiver?.close();
    await t?.close();
  });

  async function push(tag: string, n: number) {
    const lines = Array.from({ length: n }, (_, i) =>
      JSON.stringify({ ...okta[i % okta.length], weir_test_seq: `${tag}-${i}` }),
    );
    const res = await fetch(`${base}/api/ingest/system_log`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ingestToken}` },
      body: lines.join('\n'),
    });
    expect(res.status).toBe(200);
  }

  it('prints each event the destination receives as one JSON line {at, event}, and never the token', async () => {
    let pushed = false;
    const run = weir(['tap', destination, '--limit', '3', '--seconds', '30'], {
      WEIR_URL: base,
      WEIR_TOKEN: admin.token,
    });
    // The session must be open before events flow: push once the server has it.
    const opened = (async () => {
      for (let i = 0; i < 200 && !pushed; i++) {
        const n = await t.container.database.db
          .selectFrom('tap_sessions')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow();
        if (Number(n.n) > 0) {
          pushed = true;
          await push('tap', 5);
        } else await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const result = await run;
    await opened;
    expect(pushed).toBe(true);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      const parsed = JSON.parse(line) as { at: string; event: Json };
      expect(typeof parsed.at).toBe('string');
      expect(typeof parsed.event).toBe('object');
    }
    expect(result.stdout + result.stderr).not.toContain(admin.token);
  }, 90_000);

  it('follows until Ctrl-C, then exits 0', async () => {
    let interrupted = false;
    const run = weir(
      ['tap', destination, '--seconds', '30'],
      { WEIR_URL: base, WEIR_TOKEN: admin.token },
      (text, proc) => {
        if (!interrupted && text.includes('\n')) {
          interrupted = true;
          proc.kill('SIGINT');
        }
      },
    );
    for (let i = 0; i < 200; i++) {
      const n = await t.container.database.db
        .selectFrom('tap_sessions')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      if (Number(n.n) > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await push('sigint', 2);
    const result = await run;
    expect(interrupted).toBe(true);
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(1);
  }, 90_000);

  it("prints the API's detail and exits 1 for a destination it cannot see", async () => {
    const result = await weir(['tap', 'no-such-destination', '--once'], { WEIR_URL: base, WEIR_TOKEN: admin.token });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^weir: .*not found.*\(HTTP 404\)/i);
    expect(result.stderr).not.toContain(admin.token);
  }, 60_000);
});

describe('weir config against the real operations', () => {
  let t: TestApp;
  let base: string;
  let platform: Principal;
  let orgA: number;
  let orgB: number;
  let dir: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    orgA = await createOrganization(t, 'CLI source');
    orgB = await createOrganization(t, 'CLI target');
    platform = await createPrincipal(t, { role: 'admin' });
    dir = mkdtempSync(path.join(tmpdir(), 'weir-cli-'));
    await http(
      base,
      'POST',
      '/api/integrations/',
      { name: 'vpn', platform: 'custom', organization_id: orgA },
      platform.headers,
    );
    await createDestination(base, platform.headers, {
      name: 'siem',
      type: 'http',
      organization_id: orgA,
      config: { url: 'http://127.0.0.1:9/in' },
      credential: { bearer_token: 'cli-secret-A' },
    });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('exports, finds nothing to change in the source, a change in an empty organization, and imports it with its secrets', async () => {
    const env = { WEIR_URL: base, WEIR_TOKEN: platform.token };
    const file = path.join(dir, 'bundle.json');
    const exported = await weir(['config', 'export', '--organization', String(orgA), '--out', file], env);
    expect(exported.code, exported.stderr).toBe(0);
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { destinations: { name: string }[] };
    expect(doc.destinations.map((d) => d.name)).toEqual(['siem']);
    expect(readFileSync(file, 'utf8')).not.toContain('cli-secret-A');

    const same = await weir(['config', 'diff', file, '--organization', String(orgA)], env);
    expect(same.code, same.stderr).toBe(0);

    const into = await weir(['config', 'diff', file, '--organization', String(orgB)], env);
    expect(into.code, into.stderr).toBe(1);
    expect(into.stdout).toMatch(/siem/);

    const refused = await weir(['config', 'import', file, '--organization', String(orgB)], env);
    expect(refused.code, refused.stderr + refused.stdout).toBe(1);
    const secrets = path.join(dir, 'secrets.json');
    writeFileSync(secrets, JSON.stringify({ 'destination:siem:bearer_token': 'cli-secret-B' }));
    const applied = await weir(['config', 'import', file, '--organization', String(orgB), '--secrets', secrets], env);
    expect(applied.code, applied.stderr + applied.stdout).toBe(0);
    const after = await weir(['config', 'diff', file, '--organization', String(orgB)], env);
    expect(after.code, after.stdout).toBe(0);
    for (const run of [exported, same, into, refused, applied, after])
      expect(run.stdout + run.stderr).not.toContain(platform.token);
  }, 120_000);
});
