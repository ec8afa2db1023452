import { utimesSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { heldFiles } from './disk.js';
import { leftoverStem, recoverDirectory, recoveredName, recoverTree } from './recover.js';

let root: string;
const STALE = 60_000;
const T0 = Date.UTC(2024, 0, 1, 12);
const at = (ms: number) => ({ staleMs: STALE, fsync: true, now: () => ms });

/** A leftover written at T0 (mtime), as a killed writer leaves it. */
async function leftover(name: string, text: string, dir = root): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, text);
  await utimes(file, T0 / 1000, T0 / 1000);
  return file;
}

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'weir-file-recover-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('recovery of files left by dead writers', () => {
  it('cuts the torn last line and renames the file to *.ndjson, named after its writer and last write', async () => {
    const torn = '{"a":3, "cut';
    await leftover('events-123-abcdef.ndjson.current', `{"a":1}\n{"a":2}\n${torn}`);
    const report = await recoverDirectory(root, at(T0 + STALE));
    expect(report).toEqual({
      finished: ['events-20240101T120000.000Z-123-abcdef-recovered.ndjson'],
      removed: [],
      cutBytes: torn.length,
    });
    expect(await readdir(root)).toEqual(report.finished);
    const text = await readFile(path.join(root, report.finished[0]!), 'utf8');
    expect(text).toBe('{"a":1}\n{"a":2}\n');
    for (const line of text.trimEnd().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('finds the last newline across read chunks (a torn line longer than one chunk)', async () => {
    const long = `{"pad":"${'x'.repeat(200_000)}`;
    await leftover('p-1-000000.ndjson.current', `{"a":1}\n${long}`);
    const report = await recoverDirectory(root, at(T0 + STALE));
    expect(report.cutBytes).toBe(long.length);
    expect(await readFile(path.join(root, report.finished[0]!), 'utf8')).toBe('{"a":1}\n');
  });

  it('keeps a file that ends with a whole line as it is', async () => {
    await leftover('p-1-000000.ndjson.current', '{"a":1}\n');
    const report = await recoverDirectory(root, at(T0 + STALE));
    expect(report.cutBytes).toBe(0);
    expect(await readFile(path.join(root, report.finished[0]!), 'utf8')).toBe('{"a":1}\n');
  });

  it('removes a leftover that is empty or holds only a torn line', async () => {
    await leftover('p-1-000000.ndjson.current', '');
    await leftover('p-2-000000.ndjson.current', '{"a":1, "cu');
    const report = await recoverDirectory(root, at(T0 + STALE));
    expect(report.finished).toEqual([]);
    expect(report.removed.sort()).toEqual(['p-1-000000.ndjson.current', 'p-2-000000.ndjson.current']);
    expect(await readdir(root)).toEqual([]);
  });

  it('leaves a file touched within the stale period: its writer may be alive on another host', async () => {
    await leftover('p-1-000000.ndjson.current', '{"a":1}\n{"a"');
    expect(await recoverDirectory(root, at(T0 + STALE - 1))).toEqual({ finished: [], removed: [], cutBytes: 0 });
    expect(await readFile(path.join(root, 'p-1-000000.ndjson.current'), 'utf8')).toBe('{"a":1}\n{"a"');
  });

  it('never claims a file a writer of this process holds, however old', async () => {
    const file = await leftover('p-1-000000.ndjson.current', '{"a":1}\n');
    heldFiles.add(file);
    try {
      expect((await recoverDirectory(root, at(T0 + 10 * STALE))).finished).toEqual([]);
    } finally {
      heldFiles.delete(file);
    }
  });

  it('gives a file back when its writer touched it between the look and the claim', async () => {
    const file = await leftover('p-1-000000.ndjson.current', '{"a":1}\n{"a"');
    let calls = 0;
    const now = () => {
      // The first reading of the clock follows the look: the writer wakes up right then.
      if (++calls === 1) utimesSync(file, (T0 + STALE) / 1000, (T0 + STALE) / 1000);
      return T0 + STALE;
    };
    expect(await recoverDirectory(root, { staleMs: STALE, fsync: false, now })).toEqual({
      finished: [],
      removed: [],
      cutBytes: 0,
    });
    expect(await readdir(root)).toEqual(['p-1-000000.ndjson.current']);
    expect(await readFile(file, 'utf8')).toBe('{"a":1}\n{"a"');
  });

  it('two recoveries at once finish a file once', async () => {
    await leftover('p-1-000000.ndjson.current', '{"a":1}\n{"a":2}\n');
    const [a, b] = await Promise.all([recoverDirectory(root, at(T0 + STALE)), recoverDirectory(root, at(T0 + STALE))]);
    expect([...a.finished, ...b.finished]).toHaveLength(1);
    const names = await readdir(root);
    expect(names).toHaveLength(1);
    expect(await readFile(path.join(root, names[0]!), 'utf8')).toBe('{"a":1}\n{"a":2}\n');
  });

  it('finishes the claim of a recovery that died half way', async () => {
    await leftover('p-7-abcdef.ndjson.current.claim-99-123456', '{"a":1}\n{"a"');
    const report = await recoverDirectory(root, at(T0 + STALE));
    expect(report.finished).toEqual(['p-20240101T120000.000Z-7-abcdef-recovered.ndjson']);
  });

  it('does not follow a symbolic link named like a leftover, nor enter linked directories', async () => {
    const outside = await mkdtemp(path.join(tmpdir(), 'weir-outside-'));
    try {
      await leftover('victim.ndjson.current', '{"a":1}\n{"torn', outside);
      await symlink(path.join(outside, 'victim.ndjson.current'), path.join(root, 'p-1-000000.ndjson.current'));
      await symlink(outside, path.join(root, 'linked'));
      const report = await recoverTree(root, at(T0 + STALE));
      expect(report).toEqual({ finished: [], removed: [], cutBytes: 0 });
      expect(await readFile(path.join(outside, 'victim.ndjson.current'), 'utf8')).toBe('{"a":1}\n{"torn');
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('walks a whole tree (every owner and destination directory) and ignores other files', async () => {
    await mkdir(path.join(root, 'org-1', 'siem'), { recursive: true });
    await mkdir(path.join(root, 'global'), { recursive: true });
    await leftover('a-1-000001.ndjson.current', '{"a":1}\n', path.join(root, 'org-1', 'siem'));
    await leftover('b-2-000002.ndjson.current', '{"b":1}\n{"b', path.join(root, 'global'));
    await leftover('done.ndjson', '{"c":1}\n', path.join(root, 'org-1'));
    await leftover('notes.current', 'x', root);
    const report = await recoverTree(root, at(T0 + STALE));
    expect(report.finished.sort()).toEqual([
      path.join('global', 'b-20240101T120000.000Z-2-000002-recovered.ndjson'),
      path.join('org-1', 'siem', 'a-20240101T120000.000Z-1-000001-recovered.ndjson'),
    ]);
    expect(report.cutBytes).toBe(3);
    expect((await readdir(path.join(root, 'org-1'))).sort()).toEqual(['done.ndjson', 'siem']);
    expect(await readdir(root)).toContain('notes.current');
  });

  it('reads leftover names and builds finished names', () => {
    expect(leftoverStem('p-1-abcdef.ndjson.current')).toBe('p-1-abcdef');
    expect(leftoverStem('p-1-abcdef.ndjson.current.claim-9-0a0b0c')).toBe('p-1-abcdef');
    expect(leftoverStem('p.ndjson')).toBeNull();
    expect(leftoverStem('.ndjson.current')).toBeNull();
    expect(leftoverStem('p.ndjson.current.bak')).toBeNull();
    expect(recoveredName('my-prefix-12-abcdef', T0)).toBe('my-prefix-20240101T120000.000Z-12-abcdef-recovered.ndjson');
    expect(recoveredName('foreign', T0)).toBe('foreign-20240101T120000.000Z-recovered.ndjson');
  });
});
