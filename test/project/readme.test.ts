// The README's and the docs' examples run as written. Every ```sh block of README.md, then of
// each docs/*.md in name order, is extracted and run, in order, by one bash session (so the docs'
// examples use the $TOKEN and objects the README's made) against a whole Weir this file starts on a fresh database
// (every role in this process). The one change made to the text is the address:
// `localhost:8080` becomes the test server's. A block may be left out only with a marker on the
// line before it, `<!-- readme-test: not run: <reason> -->`, and the reason is listed here.
// Every curl call must succeed (HTTP 2xx): curl is wrapped with --fail-with-body, and the
// shell stops at the first failure with the answer's body and status in the message.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeir, type RunningWeir } from '../console/server.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FILES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const SKIP_MARKER = /<!--\s*readme-test: not run: (.+?)\s*-->/;

interface Block {
  /** file:line of the opening fence. */
  where: string;
  text: string;
  skipped?: string;
}

function shellBlocks(file: string): Block[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!);
    const before = lines
      .slice(0, start)
      .reverse()
      .find((l) => l.trim() !== '');
    const skipped = before?.match(SKIP_MARKER)?.[1];
    blocks.push({ where: `${file}:${start + 1}`, text: body.join('\n'), ...(skipped ? { skipped } : {}) });
  }
  return blocks;
}

const blocks = FILES.flatMap(shellBlocks);
const run = promisify(execFile);

let weir: RunningWeir;
let work: string;

beforeAll(async () => {
  weir = await startWeir();
  // The commands run from a directory of their own (they write a cookie jar), where the
  // repository's files they name (test/corpus/...) are found by the same relative paths.
  work = mkdtempSync(path.join(tmpdir(), 'weir-readme-'));
  symlinkSync(path.join(ROOT, 'test'), path.join(work, 'test'));
}, 60_000);

afterAll(async () => {
  await weir?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the README's and the docs' examples", () => {
  it('has shell examples, and each one left out says why', () => {
    expect(blocks.length).toBeGreaterThan(8);
    for (const b of blocks.filter((x) => x.skipped)) expect(b.skipped!.length, b.where).toBeGreaterThan(10);
  });

  it('run verbatim, in order, against a fresh Weir: every call answers 2xx', async () => {
    const address = new URL(weir.url).host;
    const ran = blocks.filter((b) => !b.skipped);
    const script = [
      'set -eo pipefail',
      // Each call's status and URL on stderr; a 4xx or 5xx stops the session with its body.
      `curl() { command curl --fail-with-body --write-out '%{stderr}HTTP %{http_code} %{method} %{url_effective}\\n' "$@"; }`,
      ...ran.map((b) => `echo '## ${b.where}' >&2\n${b.text.replaceAll('localhost:8080', address)}\necho >&2`),
    ].join('\n');
    let stdout = '';
    let stderr = '';
    try {
      ({ stdout, stderr } = await run('bash', ['-c', script], { cwd: work, timeout: 60_000 }));
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; code?: number };
      expect.fail(`an example failed (exit ${e.code}):\n${e.stderr}\n--- output ---\n${e.stdout}`);
    }
    const calls = stderr.split('\n').filter((l) => l.startsWith('HTTP '));
    expect(calls.length, stderr).toBeGreaterThanOrEqual(ran.length);
    expect(
      calls.filter((l) => !/^HTTP 2\d\d /.test(l)),
      stderr,
    ).toEqual([]);
    // The push was accepted and nothing it sent was refused.
    expect(stdout).toMatch(/"accepted":\s*[1-9]/);
  }, 120_000);
});
