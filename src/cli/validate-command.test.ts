// `weir validate` as a user's CI runs it (a child process, no server, no database): a valid
// configuration bundle, an invalid one (each error with its location), a mapping directory with
// a failing test case and an invalid document, and the usage errors.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'weir-validate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function weir(...args: string[]) {
  const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'validate', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    // Nothing to reach: a server or a database would be an error here.
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      WEIR_URL: 'http://127.0.0.1:9',
      DATABASE_URL: 'postgres://127.0.0.1:9/none',
    },
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

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

const bundle = () => ({
  format: 'weir.config-bundle',
  version: 1,
  weir_version: '0.0.0',
  exported_at: '2026-01-01T00:00:00.000Z',
  organization: { name: 'Acme' },
  integrations: [{ name: 'vpn', platform: 'custom', is_active: true, parent: null, config: {} }],
  mappings: [
    {
      name: 'vpn',
      platform: 'custom',
      stream: 'logins',
      description: '',
      version: 1,
      document: vpn([{ name: 'bo', input_text: 'user=bo', expect: { 'user.name': 'bo' } }]),
    },
  ],
  destinations: [],
  routes: [],
  enrichment_tables: [],
  enrichment_policies: [],
  detection_rules: [
    {
      name: 'vpn logins',
      enabled: true,
      version: 1,
      definition: { condition: { field: 'class_uid', op: 'eq', value: 3002 }, severity_id: 2 },
    },
  ],
  saved_queries: [],
  schedules: [],
});

describe('weir validate', () => {
  it('a valid bundle: OK, exit 0', () => {
    const file = path.join(dir, 'bundle.json');
    writeFileSync(file, JSON.stringify(bundle()));
    const r = weir(file);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      `${file}: OK (configuration bundle, 3 objects, 1 mapping test case passed)\n1 file: 1 valid, 0 invalid\n`,
    );
    expect(r.code).toBe(0);
  }, 60_000);

  it('an invalid bundle: INVALID with each error at its location, exit 1', () => {
    const doc = bundle() as Record<string, unknown>;
    (doc.routes as unknown[]).push({ name: 'all' });
    doc.detection_rules = [
      ...(doc.detection_rules as unknown[]),
      { name: 'vpn logins', enabled: true, version: 1, definition: { condition: null, severity_id: 2 } },
    ];
    const shape = path.join(dir, 'shape.json');
    writeFileSync(shape, JSON.stringify(doc));
    const r = weir(shape);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${shape}: INVALID (configuration bundle)\n`);
    expect(r.stdout).toMatch(/^ {4}\/routes\/0: .*position/m);

    // The shape right, a rule whose condition names no OCSF field and a mapping's failing case.
    const semantic = bundle();
    semantic.detection_rules[0]!.definition.condition.field = 'user.nam';
    semantic.mappings[0]!.document = vpn([{ name: 'al', input_text: 'user=al', expect: { 'user.name': 'bo' } }]);
    const file = path.join(dir, 'semantic.json');
    writeFileSync(file, JSON.stringify(semantic));
    const s = weir(file);
    expect(s.code).toBe(1);
    expect(s.stdout).toContain(`${file}: INVALID (configuration bundle, 3 objects, 1 mapping test case passed)`);
    expect(s.stdout).toContain('    /mappings/0/document/tests/0 "al": user.name: expected "bo", got "al"');
    expect(s.stdout).toMatch(
      /^ {4}\/detection_rules\/0 \(vpn logins\) definition\.condition\.field: .*closest known field: user\.name/m,
    );

    // A condition in the text form, read as the server reads it: the field and the syntax at their line and column.
    const text = bundle() as unknown as { detection_rules: { definition: { condition: unknown } }[] };
    text.detection_rules[0]!.definition.condition = 'class_uid = 3002 and user.nam = "bo"';
    text.detection_rules.push({
      ...text.detection_rules[0]!,
      name: 'broken',
      definition: { condition: 'class_uid = = 1', severity_id: 2 },
    } as (typeof text.detection_rules)[number]);
    const textFile = path.join(dir, 'text.json');
    writeFileSync(textFile, JSON.stringify(text));
    const t = weir(textFile);
    expect(t.code).toBe(1);
    expect(t.stdout).toMatch(/^ {4}\/detection_rules\/0 \(vpn logins\) definition\.condition.*line 1, column 22/m);
    expect(t.stdout).toMatch(/^ {4}\/detection_rules\/1 .*line 1, column \d+/m);
  }, 60_000);

  it('a mapping directory: one line per document, the failing case and the invalid document named, exit 1', () => {
    const maps = path.join(dir, 'mappings');
    mkdirSync(path.join(maps, 'fw'), { recursive: true });
    writeFileSync(
      path.join(maps, 'fw', 'vpn.json'),
      JSON.stringify(
        vpn([
          { name: 'bo', input_text: 'user=bo', expect: { 'user.name': 'bo' } },
          { name: 'al', input_text: 'user=al', expect: { 'user.name': 'bo' } },
        ]),
      ),
    );
    writeFileSync(path.join(maps, 'ok.json'), JSON.stringify(vpn([])));
    writeFileSync(
      path.join(maps, 'broken.json'),
      JSON.stringify({
        product: { name: 'x', vendor_name: 'y' },
        rules: [{ name: 'r', class_uid: 9, activity_id: 1 }],
      }),
    );
    writeFileSync(path.join(maps, 'notes.txt'), 'not a document');
    const r = weir(maps);
    expect(r.code).toBe(1);
    expect(r.stdout.trimEnd().split('\n')).toEqual([
      `${maps}/broken.json: INVALID (mapping document)`,
      expect.stringMatching(/^ {4}\/rules\/0\/class_uid: unknown OCSF class 9/) as unknown as string,
      `${maps}/fw/vpn.json: INVALID (mapping document, 1 of 2 test cases passed)`,
      '    /tests/1 "al": user.name: expected "bo", got "al"',
      `${maps}/ok.json: OK (mapping document, no test cases)`,
      '3 files: 1 valid, 2 invalid',
    ]);
  }, 60_000);

  it('usage errors exit 2; --help prints the usage and checks nothing', () => {
    expect(weir()).toMatchObject({ code: 2, stderr: expect.stringContaining('usage: weir validate') });
    expect(weir(path.join(dir, 'missing'))).toMatchObject({ code: 2, stderr: expect.stringContaining('no such file') });
    expect(weir('--strict', dir)).toMatchObject({ code: 2 });
    const help = weir('--help', path.join(dir, 'missing'));
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: weir validate <file\|dir>\.\.\./);
  }, 60_000);
});
