// `weir test`: the built-in mappings' folder as a user's CI would run it (a child process), and
// the answers for failing cases, invalid documents and usage errors.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CliError } from './api.js';
import { testMappings } from './test-command.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'weir-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const vpn = (tests: unknown[]) => ({
  product: { name: 'Tunnelbox VPN', vendor_name: 'Example Corp' },
  parse: [{ parser: 'kv' }],
  rules: [{ name: 'logins', class_uid: 3002, activity_id: 1, set: [{ target: 'user.name', from: 'user' }, { target: 'service.name', value: 'vpn' }] }],
  tests,
});

function run(targets: string[], verbose = false) {
  const lines: string[] = [];
  const code = testMappings(targets, { verbose }, (l) => lines.push(l));
  return { code, lines };
}

describe('weir test', () => {
  it('runs the built-in mappings\' folder as CI would: exit 0', () => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'test', 'src/pipeline/normalize/builtin'], { cwd: ROOT, encoding: 'utf8' });
    expect(res.stderr).toBe('');
    expect(res.stdout).toMatch(/src\/pipeline\/normalize\/builtin\/okta\.system_log\.json: \d+ cases, all passed/);
    expect(res.stdout).toMatch(/\d+ documents, \d+ cases: \d+ passed, 0 failed\n$/);
    expect(res.status).toBe(0);
    // A child process compiles every built-in and runs its cases (over a hundred, XML among them).
  }, 90_000);

  it('names each failing case with why, and each invalid document with its problems: exit 1', () => {
    mkdirSync(path.join(dir, 'fw'));
    writeFileSync(path.join(dir, 'fw', 'vpn.json'), JSON.stringify(vpn([
      { name: 'bo', input_text: 'user=bo', expect: { 'user.name': 'bo' } },
      { name: 'al', input_text: 'user=al', expect: { 'user.name': 'bo' } },
    ])));
    writeFileSync(path.join(dir, 'broken.json'), JSON.stringify({ product: { name: 'x', vendor_name: 'y' }, rules: [{ name: 'r', class_uid: 9, activity_id: 1 }] }));
    writeFileSync(path.join(dir, 'notes.txt'), 'not a document');
    const { code, lines } = run([dir]);
    expect(code).toBe(1);
    expect(lines).toEqual([
      `${dir}/broken.json: invalid document`,
      expect.stringMatching(/^ {4}\/rules\/0\/class_uid: unknown OCSF class 9 /) as unknown as string,
      `${dir}/fw/vpn.json: 2 cases, 1 failed`,
      '  FAIL "al" (/tests/1)',
      '         user.name: expected "bo", got "al"',
      '2 documents, 2 cases: 1 passed, 1 failed; 1 invalid document',
    ]);
  });

  it('lists passing cases with --verbose, and exits 0 when all pass', () => {
    const file = path.join(dir, 'ok.json');
    writeFileSync(file, JSON.stringify(vpn([{ name: 'bo', input_text: 'user=bo', expect: { 'user.name': 'bo' } }])));
    expect(run([file], true)).toEqual({ code: 0, lines: [`${file}: 1 case, all passed`, '  ok   "bo" (/tests/0)', '1 document, 1 cases: 1 passed, 0 failed'] });
  });

  it('is a usage error (2) without a target or with one that does not exist', () => {
    expect(() => run([])).toThrow(CliError);
    expect(() => run([path.join(dir, 'missing')])).toThrow(expect.objectContaining({ exitCode: 2 }) as unknown as Error);
  });
});
