import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ocsfEvents, sinkBatch, sinkContext } from '../../../../test/support/sink-batch.js';
import { DeliveryError, type Sink } from '../types.js';
import { fileConfigProblem, FileConfigSchema, fileSink } from './index.js';
import { createFileWriter } from './writer.js';

let root: string;
const sinks: Sink[] = [];
const signal = () => AbortSignal.timeout(5000);

function open(config: Record<string, unknown>, destinationId = 'dest-1'): Sink {
  const sink = fileSink.create(sinkContext({ config, fileRoot: root, destinationId }));
  sinks.push(sink);
  return sink;
}

async function files(dir: string): Promise<string[]> {
  return (await readdir(path.join(root, dir))).sort();
}

async function linesOf(dir: string, names: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const n of names) {
    const text = await readFile(path.join(root, dir, n), 'utf8');
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
      const text = await readFile(path.join(root, n), 'utf8');
      // A file only goes past the limit when one batch alone is bigger.
      expect(Buffer.byteLength(text) <= 2048 || text.split('\n').length - 1 === 3).toBe(true);
      expect((text.split('\n').length - 1) % 3).toBe(0);
    }
  });

  it('rotates by age', async () => {
    let t = Date.UTC(2024, 0, 1);
    const writer = createFileWriter({ dir: root, root, prefix: 'p', rotateBytes: 1e9, rotateSeconds: 60, fsync: false, now: () => t });
    await writer.append('{"a":1}\n');
    t += 30_000;
    await writer.append('{"a":2}\n');
    t += 31_000;
    await writer.append('{"a":3}\n');
    const names = await files('.');
    const finished = names.filter((n) => n.endsWith('.ndjson'));
    expect(finished).toHaveLength(1);
    expect(finished[0]).toMatch(/^p-20240101T000101\.000Z-/);
    expect(await readFile(path.join(root, finished[0]!), 'utf8')).toBe('{"a":1}\n{"a":2}\n');
    expect(await readFile(writer.currentPath, 'utf8')).toBe('{"a":3}\n');
    await writer.close();
    expect((await files('.')).filter((n) => n.endsWith('.current'))).toEqual([]);
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
      const text = (await readFile(path.join(root, 'shared', n), 'utf8')).trimEnd().split('\n');
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
      expect(fileConfigProblem({ path: bad }), bad).toMatch(/relative/);
      const sink = open({ path: bad });
      const err = await sink.send(sinkBatch(ocsfEvents(1)), signal()).then(() => null, (e: unknown) => e);
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
      await symlink(outside, path.join(root, 'escape'));
      const sink = open({ path: 'escape/sub' });
      const err = await sink.send(sinkBatch(ocsfEvents(1)), signal()).then(() => null, (e: unknown) => e);
      expect((err as DeliveryError).kind).toBe('config');
      expect((err as DeliveryError).message).toMatch(/outside the file destinations root/);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('test() checks the directory is writable, and says when it is not', async () => {
    const sink = open({ path: 'probe/here' });
    const ok = await sink.test(signal());
    expect(ok).toMatchObject({ ok: true });
    expect(ok.detail).toMatch(/probe\/here.*writable/);
    expect(await files('probe/here')).toEqual([]);
    await writeFile(path.join(root, 'plain-file'), 'x');
    const notDir = await open({ path: 'plain-file/sub' }).test(signal());
    expect(notDir).toMatchObject({ ok: false, error_kind: 'config' });
    expect(notDir.detail).not.toContain(root);
    if (process.getuid?.() !== 0) {
      await mkdir(path.join(root, 'ro'));
      await chmod(path.join(root, 'ro'), 0o500);
      expect(await open({ path: 'ro' }).test(signal())).toMatchObject({ ok: false, error_kind: 'config' });
    }
  });

  it('an aborted signal before writing is a timeout, and nothing is written', async () => {
    const sink = open({ path: 'abort' });
    const ac = new AbortController();
    ac.abort();
    const err = await sink.send(sinkBatch(ocsfEvents(2)), ac.signal).then(() => null, (e: unknown) => e);
    expect((err as DeliveryError).kind).toBe('timeout');
    await sink.send(sinkBatch(ocsfEvents(1)), signal());
    expect(await linesOf('abort', await files('abort'))).toHaveLength(1);
  });
});
