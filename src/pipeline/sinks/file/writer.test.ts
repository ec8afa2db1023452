import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileTimestamp, heldFiles } from './disk.js';
import { recoverDirectory } from './recover.js';
import { createFileWriter, type FileWriter, type WriterOptions } from './writer.js';

let root: string;
let t: number;
const writers: FileWriter[] = [];
const STALE = 60_000;

function writer(options: Partial<WriterOptions> = {}): FileWriter {
  const w = createFileWriter({
    dir: root,
    owner: root,
    root,
    prefix: 'p',
    rotateBytes: 1e9,
    rotateSeconds: 3600,
    idleSeconds: 60,
    fsync: false,
    staleMs: STALE,
    now: () => t,
    tickMs: 0,
    ...options,
  });
  writers.push(w);
  return w;
}

async function names(): Promise<{ finished: string[]; current: string[] }> {
  const all = (await readdir(root)).sort();
  return {
    finished: all.filter((n) => n.endsWith('.ndjson')),
    current: all.filter((n) => n.endsWith('.ndjson.current')),
  };
}

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'weir-file-writer-'));
  // Near the real time: appends stamp the files' mtime with the real clock.
  t = Date.now();
});
afterEach(async () => {
  await Promise.all(writers.splice(0).map((w) => w.close().catch(() => undefined)));
  await rm(root, { recursive: true, force: true });
});

describe('file writer', () => {
  it('rotates by age when a batch arrives', async () => {
    const w = writer({ rotateSeconds: 60, idleSeconds: 3600 });
    await w.append('{"a":1}\n');
    t += 30_000;
    await w.append('{"a":2}\n');
    t += 31_000;
    await w.append('{"a":3}\n');
    const { finished } = await names();
    expect(finished).toHaveLength(1);
    expect(finished[0]).toMatch(
      new RegExp(`^p-${fileTimestamp(t).replace('.', '\\.')}-\\d+-[0-9a-f]{6}-000001\\.ndjson$`),
    );
    expect(await readFile(path.join(root, finished[0]!), 'utf8')).toBe('{"a":1}\n{"a":2}\n');
    expect(await readFile(w.currentPath, 'utf8')).toBe('{"a":3}\n');
    await w.close();
    expect((await names()).current).toEqual([]);
  });

  it('finishes a file that received nothing for the idle period, without waiting for a batch', async () => {
    const w = writer({ idleSeconds: 60 });
    await w.append('{"a":1}\n');
    t += 40_000;
    await w.append('{"a":2}\n');
    t += 59_000;
    await w.tick();
    expect(await names()).toMatchObject({ finished: [], current: [path.basename(w.currentPath)] });
    t += 1_000;
    await w.tick();
    const { finished, current } = await names();
    expect(current).toEqual([]);
    expect(finished).toHaveLength(1);
    expect(await readFile(path.join(root, finished[0]!), 'utf8')).toBe('{"a":1}\n{"a":2}\n');
    // The next batch starts a new file.
    await w.append('{"a":3}\n');
    expect(await readFile(w.currentPath, 'utf8')).toBe('{"a":3}\n');
  });

  it('rotates an old file on its timer too, not only when a batch arrives', async () => {
    const w = writer({ rotateSeconds: 120, idleSeconds: 3600 });
    for (let i = 0; i < 4; i++) {
      await w.append(`{"a":${i}}\n`);
      t += 30_000;
    }
    await w.tick();
    expect((await names()).finished).toHaveLength(1);
    expect((await names()).current).toEqual([]);
  });

  it('keeps a quiet open file alive for other processes: the tick touches it', async () => {
    const w = writer({ idleSeconds: 3600 });
    await w.append('{"a":1}\n');
    t += STALE / 4;
    await w.tick();
    expect(Math.abs((await stat(w.currentPath)).mtimeMs - t)).toBeLessThan(1);
    // So a recovery elsewhere (same clock) leaves it alone.
    t += STALE / 2;
    expect(await recoverDirectory(root, { staleMs: STALE, fsync: false, now: () => t })).toMatchObject({
      finished: [],
      removed: [],
    });
  });

  it('a stalled writer whose file a recovery finished goes on in a new file and never writes to the finished one', async () => {
    const w = writer({ idleSeconds: 3600 });
    await w.append('{"a":1}\n');
    const first = w.currentPath;
    // The process stalls past the stale period; another process (here: a recovery outside
    // the writer's bookkeeping) finishes the file.
    t += STALE + 1_000;
    heldFiles.delete(first);
    const report = await recoverDirectory(root, { staleMs: STALE, fsync: false, now: () => t });
    expect(report.finished).toHaveLength(1);
    await w.append('{"a":2}\n');
    expect(w.currentPath).not.toBe(first);
    expect(await readFile(path.join(root, report.finished[0]!), 'utf8')).toBe('{"a":1}\n');
    expect(await readFile(w.currentPath, 'utf8')).toBe('{"a":2}\n');
    await w.close();
    const { finished, current } = await names();
    expect(current).toEqual([]);
    expect(finished).toHaveLength(2);
  });

  it('a stalled writer that kept its file proves it and goes on in it', async () => {
    const w = writer({ idleSeconds: 3600 });
    await w.append('{"a":1}\n');
    const first = w.currentPath;
    t += STALE; // no recovery ran meanwhile
    await w.append('{"a":2}\n');
    expect(w.currentPath).toBe(first);
    expect(await readFile(first, 'utf8')).toBe('{"a":1}\n{"a":2}\n');
  });

  it('closing an unused writer leaves nothing behind', async () => {
    const w = writer();
    await w.close();
    expect(await readdir(root)).toEqual([]);
  });
});
