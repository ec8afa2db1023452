// `weir test`: the built-in mappings' folder as a user's CI would run it (a child process), and
// the answers for failing cases, invalid documents and usage errors.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  rules: [
    {
      name: 'logins',
      class_uid: 3002,
      activity_id: 1,
      set: [
        { target: 'user.name', from: 'user' },
        { target: 'service.name', value: 'vpn' },
      ],
    },
  ],
  tests,
});

function run(targets: string[], verbose = false, more: { update?: boolean; summary?: boolean } = {}) {
  const lines: string[] = [];
  const code = testMappings(targets, { verbose, ...more }, (l) => lines.push(l));
  return { code, lines };
}

describe('weir test', () => {
  it("runs the built-in mappings' folder as CI would: exit 0", () => {
    const res = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', 'test', 'src/pipeline/normalize/builtin'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(res.stderr).toBe('');
    expect(res.stdout).toMatch(/src\/pipeline\/normalize\/builtin\/okta\.system_log\.json: \d+ cases, all passed/);
    expect(res.stdout).toMatch(/\d+ documents, \d+ cases: \d+ passed, 0 failed\n$/);
    expect(res.status).toBe(0);
    // A child process compiles every built-in and runs its cases (over a hundred, XML among them).
  }, 90_000);

  it('names each failing case with why, and each invalid document with its problems: exit 1', () => {
    mkdirSync(path.join(dir, 'fw'));
    writeFileSync(
      path.join(dir, 'fw', 'vpn.json'),
      JSON.stringify(
        vpn([
          { name: 'bo', input_text: 'user=bo', expect: { 'user.name': 'bo' } },
          { name: 'al', input_text: 'user=al', expect: { 'user.name': 'bo' } },
        ]),
      ),
    );
    writeFileSync(
      path.join(dir, 'broken.json'),
      JSON.stringify({
        product: { name: 'x', vendor_name: 'y' },
        rules: [{ name: 'r', class_uid: 9, activity_id: 1 }],
      }),
    );
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
    expect(run([file], true)).toEqual({
      code: 0,
      lines: [`${file}: 1 case, all passed`, '  ok   "bo" (/tests/0)', '1 document, 1 cases: 1 passed, 0 failed'],
    });
  });

  it('is a usage error (2) without a target or with one that does not exist', () => {
    expect(() => run([])).toThrow(CliError);
    expect(() => run([path.join(dir, 'missing')])).toThrow(
      expect.objectContaining({ exitCode: 2 }) as unknown as Error,
    );
  });

  it('runs a corpus of samples against the built-in of its folder: --update writes, a difference fails with its path', () => {
    const corpus = path.join(dir, 'corpus');
    const okta = path.join(corpus, 'okta', 'system_log');
    mkdirSync(okta, { recursive: true });
    const session = {
      uuid: 'b1e7c6a2-0c5d-11ef-9f6a-0242ac120002',
      published: '2024-05-08T09:15:02.114Z',
      eventType: 'user.session.start',
      displayMessage: 'User login to Okta',
      severity: 'INFO',
      actor: { id: '00u1abcd', type: 'User', alternateId: 'ana@example.com', displayName: 'Ana' },
      outcome: { result: 'SUCCESS' },
      client: { ipAddress: '198.51.100.23' },
    };
    writeFileSync(
      path.join(okta, 'sessions.ndjson'),
      `${JSON.stringify(session)}\n\n${JSON.stringify({ ...session, outcome: { result: 'FAILURE', reason: 'INVALID_CREDENTIALS' } })}\n`,
    );
    // Without an expected file, the sample fails and says how to make one.
    const before = run([corpus]);
    expect(before.code).toBe(1);
    expect(before.lines).toContain(
      '    no sessions.expected.json beside it: run weir test --update, then review what it wrote',
    );
    expect(run([corpus], false, { update: true }).lines).toEqual([
      `${okta}/sessions.ndjson: 2 events, expected output written`,
      'corpus: 1 source, 1 sample file, 2 events: expected output written',
    ]);
    const expected = JSON.parse(readFileSync(path.join(okta, 'sessions.expected.json'), 'utf8')) as Record<
      string,
      unknown
    >[];
    expect(expected.map((e) => [e.class_uid, e.activity_id, e.status_id])).toEqual([
      [3002, 1, 1],
      [3002, 1, 2],
    ]);
    const summary = run([corpus], false, { summary: true });
    expect(summary.code).toBe(0);
    expect(summary.lines[0]).toMatch(
      /^source\s+events\s+valid\s+Base Event\s+quarantined\s+class\+activity as expected\s+output as expected$/,
    );
    expect(summary.lines[1]).toMatch(/^okta\/system_log\s+2\s+2\s+0\s+0\s+2\s+2$/);
    expect(summary.lines.at(-1)).toBe('corpus: 1 source, 1 sample file, 2 events: 2 as expected, 0 differ');
    // A reviewer's correction the mapping does not meet: the line and the path that differ.
    expected[1]!.status_id = 1;
    writeFileSync(path.join(okta, 'sessions.expected.json'), JSON.stringify(expected));
    const after = run([corpus]);
    expect(after.code).toBe(1);
    expect(after.lines).toEqual([
      `${okta}/sessions.ndjson: 2 events, 1 differ`,
      '  FAIL line 3',
      '         status_id: expected 1, got 2',
      'corpus: 1 source, 1 sample file, 2 events: 1 as expected, 1 differ (1 file failing)',
    ]);
  });

  it('a sample whose folder names no mapping is refused when it has an expected file, ignored otherwise', () => {
    const lost = path.join(dir, 'lost', 'acme', 'firewall');
    mkdirSync(lost, { recursive: true });
    writeFileSync(path.join(lost, 'a.txt'), 'action=allow\n');
    writeFileSync(path.join(lost, 'README.txt'), 'notes, not a sample\n');
    writeFileSync(path.join(lost, 'a.expected.json'), '[]');
    const { code, lines } = run([path.join(dir, 'lost')]);
    expect(code).toBe(1);
    expect(lines).toEqual([
      `${lost}/a.txt: 0 events, 0 differ`,
      '    no mapping for acme/firewall: the folders holding a sample name a platform and a stream (a document of this run or a built-in)',
      'corpus: 0 sources, 1 sample file, 0 events: 0 as expected, 0 differ (1 file failing)',
    ]);
  });
});
