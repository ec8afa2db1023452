// Every role and command of `weir` answers --help (and -h, a few checked) with its usage, exit 0, and starts
// nothing: no data directory is created, no database opened, no API called (the URL points at a
// closed port, the database at an unreachable one). `weir --version` prints the version.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROLES } from '../config.js';
import { COMMAND_SUMMARY } from './index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'weir-help-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function weir(args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      WEIR_DATA_DIR: path.join(dir, 'data'),
      WEIR_URL: 'http://127.0.0.1:9',
      WEIR_TOKEN: 'svcsk_never-used',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const killer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    proc.on('exit', (code, signal) => {
      clearTimeout(killer);
      resolve({ code: code ?? signal ?? -1, stdout, stderr });
    }),
  );
}

/** Every command as the top-level usage lists it, without its arguments: `config export`, `backfill start`. */
const COMMANDS = [
  ...new Set(
    COMMAND_SUMMARY.map(([name]) =>
      name
        .split(' ')
        .filter((w) => /^[a-z]+$/.test(w))
        .join(' '),
    ),
  ),
];

describe('weir <anything> --help', () => {
  it('lists every command in the top-level usage, including validate and backfill', () => {
    expect(COMMANDS).toEqual(
      expect.arrayContaining([
        'config export',
        'config diff',
        'config import',
        'tap',
        'test',
        'validate',
        'backfill start',
        'backfill status',
      ]),
    );
  });

  it('every role and every command prints its usage, exits 0 and starts nothing', async () => {
    const targets = [...ROLES, ...COMMANDS, 'config', 'backfill'];
    const jobs = [
      ...targets.map((t) => ({ t, flag: '--help' })),
      ...['migrate', 'config import', 'validate', 'backfill status'].map((t) => ({ t, flag: '-h' })),
    ];
    const runs: { t: string; flag: string; r: Awaited<ReturnType<typeof weir>> }[] = [];
    // A few at a time: each is a Node process compiling TypeScript.
    for (let i = 0; i < jobs.length; i += 4)
      runs.push(
        ...(await Promise.all(
          jobs.slice(i, i + 4).map(async ({ t, flag }) => ({ t, flag, r: await weir([...t.split(' '), flag]) })),
        )),
      );
    for (const { t, flag, r } of runs) {
      const label = `weir ${t} ${flag}: ${r.stderr}`;
      expect(r.code, label).toBe(0);
      expect(r.stdout, label).toMatch(new RegExp(`^usage: weir ${t.split(' ')[0]}`));
      expect(r.stderr, label).toBe('');
    }
    // Nothing started: no data directory (a role creates it and its lock), no server answered.
    expect(existsSync(path.join(dir, 'data')) ? readdirSync(path.join(dir, 'data')) : []).toEqual([]);
  }, 400_000);

  it('weir --version and -V print the package version', async () => {
    const version = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    for (const flag of ['--version', '-V']) {
      const r = await weir([flag]);
      expect(r).toEqual({ code: 0, stdout: `weir ${version}\n`, stderr: '' });
    }
  }, 60_000);
});
