import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ocsfEvents, sinkBatch, sinkContext } from '../../../../test/support/sink-batch.js';
import { DeliveryError, type Sink } from '../types.js';
import { createLogger } from '../../../platform/logger.js';
import { fileConfigProblem, FileConfigSchema, fileSink } from './index.js';

let root: string;
const sinks: Sink[] = [];
const signal = () => AbortSignal.timeout(5000);

function open(
  config: Record<string, unknown>,
  destinationId = 'dest-1',
  more: { organizationId?: number | null; fileStaleMs?: number } = {},
): Sink {
  const sink = fileSink.create(sinkContext({ config, fileRoot: root, destinationId, ...more }));
  sinks.push(sink);
  return sink;
}

/** Organization 1's directory (the sink context's default owner). */
const org = (...parts: string[]) => path.join(root, 'org-1', ...parts);

async function files(dir: string): Promise<string[]> {
  return (await readdir(org(dir))).sort();
}

async function linesOf(dir: string, names: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const n of names) {
    const text = await readFile(org(dir, n), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    out.push(...text.slice(0, -1).split('\n'));
  }
  return out;
}

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'weir-file-sink-'));
});
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.close()));
  await rm(root, { recursive: true, force: true });
});

describe('file sink', () => {
  it('appends batches as NDJSON to its current file, creating the directory', async () => {
    const sink = open({ path: 'siem/out', fsync: true });
    const a = sinkBatch(ocsfEvents(3));
    const b = sinkBatch(ocsfEvents(2));
    expect(await sink.send(a, signal())).toEqual({});
    await sink.send(b, signal());
    const names = await files('siem/out');
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(new RegExp(`^dest-1-${process.pid}-[0-9a-f]{6}\\.ndjson\\.current$`));
    const lines = await linesOf('siem/out', names);
    expect(lines).toEqual([...a.lines, ...b.lines]);
    expect(JSON.parse(lines[0]!)).toEqual(JSON.parse(a.lines[0]!));
  });

  it('rotates by size into timestamped files without splitting a batch or a line', async () => {
    const sink = open({ path: '.', prefix: 'events', rotate_bytes: 2048, fsync: false });
    const sent: string[] = [];
    for (let i = 0; i < 12; i++) {
      const batch = sinkBatch(ocsfEvents(3));
      sent.push(...batch.lines);
      await sink.send(batch, signal());
    }
    await sink.close();
    const names = await files('.');
    expect(names.length).toBeGreaterThan(3);
    expect(names.every((n) => /^events-\d{8}T\d{6}\.\d{3}Z-\d+-[0-9a-f]{6}-\d{6}\.ndjson$/.test(n))).toBe(true);
    // Name order is rotation order (time, then the writer's sequence), so reading them in order gives every line once, in order.
    const lines = await linesOf('.', names);
    expect(lines).toEqual(sent);
    for (const n of names) {
      const text = await readFile(org(n), 'utf8');
      // A file only goes past the limit when one batch alone is bigger.
      expect(Buffer.byteLength(text) <= 2048 || text.split('\n').length - 1 === 3).toBe(true);
      expect((text.split('\n').length - 1) % 3).toBe(0);
    }
  });

  it('two writers of one destination never share a file; concurrent batches stay whole', async () => {
    const one = open({ path: 'shared', fsync: false });
    const two = open({ path: 'shared', fsync: false });
    const batches = Array.from({ length: 20 }, () => sinkBatch(ocsfEvents(5)));
    await Promise.all(batches.map((b, i) => (i % 2 ? one : two).send(b, signal())));
    const names = await files('shared');
    expect(names).toHaveLength(2);
    const lines = await linesOf('shared', names);
    expect(lines.sort()).toEqual(batches.flatMap((b) => b.lines).sort());
    for (const n of names) {
      const text = (await readFile(org('shared', n), 'utf8')).trimEnd().split('\n');
      for (let i = 0; i < text.length; i += 5) {
        const batch = batches.find((b) => b.lines[0] === text[i]);
        expect(text.slice(i, i + 5)).toEqual(batch!.lines);
      }
    }
  });

  it('refuses absolute paths and ".." in the schema and at run time, with config errors', async () => {
    // The validator the destinations API uses (ajv, as for integration configs).
    const validate = new Ajv({ strict: false, useDefaults: true }).compile(FileConfigSchema);
    const check = { Check: (v: unknown) => validate(v) };
    for (const bad of ['/etc', '../up', 'a/../../b', 'a/..', '..', 'C:/x', 'a\\b']) {
      expect(check.Check({ path: bad }), bad).toBe(false);
      expect(fileConfigProblem({ path: bad }), bad).toMatch(/^path must be a relative directory/);
      const sink = open({ path: bad });
      const err = await sink.send(sinkBatch(ocsfEvents(1)), signal()).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DeliveryError);
      expect((err as DeliveryError).kind).toBe('config');
      expect(await sink.test(signal())).toMatchObject({ ok: false, error_kind: 'config' });
    }
    for (const good of ['.', 'a', 'a/b', 'a..b/c', './x']) {
      expect(check.Check({ path: good }), good).toBe(true);
      expect(fileConfigProblem({ path: good })).toBeNull();
    }
    expect(check.Check({ path: 'x', prefix: '../p' })).toBe(false);
  });

  it('a symbolic link out of the root is refused', async () => {
    const outside = await mkdtemp(path.join(tmpdir(), 'weir-outside-'));
    try {
      await mkdir(org(), { recursive: true });
      await symlink(outside, org('escape'));
      const sink = open({ path: 'escape/sub' });
      const err = await sink.send(sinkBatch(ocsfEvents(1)), signal()).then(
        () => null,
        (e: unknown) => e,
      );
      expect((err as DeliveryError).kind).toBe('config');
      expect((err as DeliveryError).message).toMatch(/outside the owner's directory/);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('test() checks the directory is writable, and says when it is not', async () => {
    const sink = open({ path: 'probe/here' });
    const ok = await sink.test(signal());
    expect(ok).toMatchObject({ ok: true });
    expect(ok.detail).toBe('directory "org-1/probe/here" under the file destinations root is writable');
    expect(await files('probe/here')).toEqual([]);
    await mkdir(org(), { recursive: true });
    await writeFile(org('plain-file'), 'x');
    const notDir = await open({ path: 'plain-file/sub' }).test(signal());
    expect(notDir).toMatchObject({ ok: false, error_kind: 'config' });
    expect(notDir.detail).not.toContain(root);
    if (process.getuid?.() !== 0) {
      await mkdir(org('ro'));
      await chmod(org('ro'), 0o500);
      expect(await open({ path: 'ro' }).test(signal())).toMatchObject({ ok: false, error_kind: 'config' });
    }
  });

  it('an aborted signal before writing is a timeout, and nothing is written', async () => {
    const sink = open({ path: 'abort' });
    const ac = new AbortController();
    ac.abort();
    const err = await sink.send(sinkBatch(ocsfEvents(2)), ac.signal).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as DeliveryError).kind).toBe('timeout');
    await sink.send(sinkBatch(ocsfEvents(1)), signal());
    expect(await linesOf('abort', await files('abort'))).toHaveLength(1);
  });

  it("keeps each organization's files in its own directory: two organizations naming the same path and prefix never share a file", async () => {
    const config = { path: 'siem', prefix: 'events', fsync: false };
    const one = open(config, 'dest-a', { organizationId: 1 });
    const two = open(config, 'dest-b', { organizationId: 2 });
    const global = open(config, 'dest-g', { organizationId: null });
    const [a, b, g] = [sinkBatch(ocsfEvents(2)), sinkBatch(ocsfEvents(3)), sinkBatch(ocsfEvents(1))];
    await Promise.all([one.send(a, signal()), two.send(b, signal()), global.send(g, signal())]);
    await Promise.all([one.close(), two.close(), global.close()]);
    expect((await readdir(root)).sort()).toEqual(['global', 'org-1', 'org-2']);
    const read = async (owner: string) => {
      const dir = path.join(root, owner, 'siem');
      const names = await readdir(dir);
      expect(names.every((n) => n.endsWith('.ndjson'))).toBe(true);
      return (await Promise.all(names.map((n) => readFile(path.join(dir, n), 'utf8')))).join('').trimEnd().split('\n');
    };
    expect(await read('org-1')).toEqual(a.lines);
    expect(await read('org-2')).toEqual(b.lines);
    expect(await read('global')).toEqual(g.lines);
  });

  it("a symbolic link from one organization's directory into another's is refused", async () => {
    await mkdir(path.join(root, 'org-2', 'theirs'), { recursive: true });
    await mkdir(org(), { recursive: true });
    await symlink(path.join(root, 'org-2', 'theirs'), org('shortcut'));
    const err = await open({ path: 'shortcut' })
      .send(sinkBatch(ocsfEvents(1)), signal())
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect((err as DeliveryError).kind).toBe('config');
    expect((err as DeliveryError).message).toMatch(/outside the owner's directory/);
    expect(await readdir(path.join(root, 'org-2', 'theirs'))).toEqual([]);
  });

  it('says in words what a path and a prefix may be', () => {
    expect(fileConfigProblem({ path: '../x' })).toBe(
      'path must be a relative directory such as "siem/okta" or ".": names separated by "/", not starting with "/" or a drive letter (C:), without a ".." segment, a backslash or a NUL character',
    );
    expect(fileConfigProblem({ path: 'x', prefix: '-p' })).toBe(
      'prefix must be 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or a digit',
    );
    const props = (
      FileConfigSchema as unknown as { properties: Record<string, { errorMessage?: unknown; default?: unknown }> }
    ).properties;
    expect(props.path!.errorMessage).toEqual({ pattern: expect.stringMatching(/^must be a relative directory/) });
    expect(props.idle_seconds!.default).toBe(60);
  });

  it('finishes files that writers of other processes left in its directory while it runs', async () => {
    await mkdir(org('out'), { recursive: true });
    const left = org('out', 'dest-1-4242-abcdef.ndjson.current');
    await writeFile(left, '{"a":1}\n{"a":2');
    const old = (Date.now() - 10_000) / 1000;
    await utimes(left, old, old);
    open({ path: 'out' }, 'dest-1', { fileStaleMs: 200 });
    for (let i = 0; i < 100 && !(await files('out')).some((n) => n.endsWith('.ndjson')); i++)
      await new Promise((r) => setTimeout(r, 50));
    const names = await files('out');
    expect(names).toEqual([expect.stringMatching(/^dest-1-\d{8}T\d{6}\.\d{3}Z-4242-abcdef-recovered\.ndjson$/)]);
    expect(await readFile(org('out', names[0]!), 'utf8')).toBe('{"a":1}\n');
  });

  it('at dispatcher start, finishes leftovers anywhere under the root and points at entries from before per-organization directories', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({
      level: 'info',
      role: 'dispatcher',
      destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
    });
    await mkdir(path.join(root, 'org-3', 'a'), { recursive: true });
    await mkdir(path.join(root, 'legacy-path'), { recursive: true });
    const old = (Date.now() - 10_000) / 1000;
    for (const f of [
      path.join(root, 'org-3', 'a', 'p-1-000001.ndjson.current'),
      path.join(root, 'legacy-path', 'p-2-000002.ndjson.current'),
    ]) {
      await writeFile(f, '{"a":1}\n');
      await utimes(f, old, old);
    }
    const recovery = fileSink.recover!({ fileRoot: root, fileStaleMs: 5_000, logger });
    await recovery.stop();
    expect((await readdir(path.join(root, 'org-3', 'a')))[0]).toMatch(/-recovered\.ndjson$/);
    expect((await readdir(path.join(root, 'legacy-path')))[0]).toMatch(/-recovered\.ndjson$/);
    expect(lines.find((l) => /outside the org-<id>\/ and global\/ directories/.test(String(l.msg)))).toMatchObject({
      entries: ['legacy-path'],
    });
    expect(lines.filter((l) => l.msg === 'finished a file left by a stopped writer')).toHaveLength(2);
  });
});
