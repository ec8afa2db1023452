import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BodyLog, BodyLogError, isBodyRef, refSegment } from './log.js';

const dirs: string[] = [];
const logs: BodyLog[] = [];
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function fresh(options: { dir?: string; segmentBytes?: number; live?: Set<number> } = {}): BodyLog {
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'weir-bodylog-'));
  if (!options.dir) dirs.push(dir);
  const live = options.live;
  const log = new BodyLog({
    dir,
    segmentBytes: options.segmentBytes,
    collectEveryMs: 0,
    ...(live ? { live: async () => live } : {}),
  });
  logs.push(log);
  return log;
}

const body = (text: string) => Buffer.from(text, 'utf8');
const segmentFiles = (log: BodyLog) => readdirSync(log.dir).sort();

describe('body log', () => {
  it('gives back each body as appended, by its reference', async () => {
    const log = fresh();
    const refs = await log.append([body('one'), body(''), body('x'.repeat(100_000))]);
    expect(refs.every(isBodyRef)).toBe(true);
    expect((await log.read(refs[0]!)).toString()).toBe('one');
    expect((await log.read(refs[1]!)).toString()).toBe('');
    expect((await log.read(refs[2]!)).toString()).toBe('x'.repeat(100_000));
  });

  it('writes appends that arrive together with one sync', async () => {
    const log = fresh();
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => log.append([body(`body ${i}`)])));
    expect(await Promise.all(all.map(async ([ref]) => (await log.read(ref!)).toString()))).toEqual(
      Array.from({ length: 20 }, (_, i) => `body ${i}`),
    );
    // The first append starts a write; the 19 behind it go together in the next.
    expect(log.stats().syncs).toBeLessThanOrEqual(2);
    expect(log.stats().appends).toBe(20);
  });

  it('refuses bytes that changed on disk, and a reference past the end', async () => {
    const log = fresh();
    const [ref] = await log.append([body('the original body')]);
    const file = path.join(log.dir, segmentFiles(log)[0]!);
    const bytes = readFileSync(file);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    writeFileSync(file, bytes);
    await expect(log.read(ref!)).rejects.toThrow(/checksum/);
    await expect(log.read(`log:${refSegment(ref!)}:0:999999`)).rejects.toThrow(BodyLogError);
    await expect(log.read('log:99:0:3')).rejects.toThrow(/segment 99/);
  });

  it('reads what it wrote before a restart, and appends to a new segment after a torn tail', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'weir-bodylog-'));
    dirs.push(dir);
    const first = fresh({ dir });
    const [kept] = await first.append([body('kept')]);
    const [torn] = await first.append([body('torn by a crash')]);
    await first.close();
    // A crash in the middle of the second write: its tail is gone.
    const file = path.join(dir, readdirSync(dir)[0]!);
    truncateSync(file, readFileSync(file).length - 5);
    const second = fresh({ dir });
    expect((await second.read(kept!)).toString()).toBe('kept');
    await expect(second.read(torn!)).rejects.toThrow(BodyLogError);
    const [next] = await second.append([body('after the restart')]);
    expect(refSegment(next!)).toBe(refSegment(kept!) + 1);
    expect((await second.read(next!)).toString()).toBe('after the restart');
  });

  it('closes a segment once it is full', async () => {
    const log = fresh({ segmentBytes: 500 });
    const refs: string[] = [];
    for (let i = 0; i < 5; i++) refs.push(...(await log.append([Buffer.alloc(600, i)])));
    expect(new Set(refs.map(refSegment)).size).toBe(5);
    expect(segmentFiles(log)).toHaveLength(5);
  });

  it('deletes the segments no row names and no writer pins, and keeps the rest', async () => {
    const live = new Set<number>();
    const log = fresh({ segmentBytes: 100, live });
    const [a] = await log.append([Buffer.alloc(200, 1)]);
    const [b] = await log.append([Buffer.alloc(200, 2)]);
    const [c] = await log.append([Buffer.alloc(200, 3)]);
    const [d] = await log.append([Buffer.alloc(200, 4)]);
    // a: committed and still named by a row; b: committed, its row delivered and deleted;
    // c: its writer's transaction has not ended; d: the same, in the active segment.
    live.add(refSegment(a!));
    log.release([a!, b!]);
    expect(await log.collect()).toBe(1);
    expect(segmentFiles(log)).toHaveLength(3);
    await expect(log.read(b!)).rejects.toThrow(/not in/);
    expect((await log.read(a!))[0]).toBe(1);
    expect((await log.read(c!))[0]).toBe(3);
    expect((await log.read(d!))[0]).toBe(4);
    // The row of a is deleted, the transactions of c and d ended: all go, the active segment too.
    live.clear();
    log.release([c!, d!]);
    expect(await log.collect()).toBe(3);
    expect(segmentFiles(log)).toEqual([]);
    expect(log.stats()).toMatchObject({ segments: 0, bytes: 0, collected: 4 });
    // The next append starts a new segment.
    const [e] = await log.append([body('after')]);
    expect(refSegment(e!)).toBe(refSegment(d!) + 1);
    expect((await log.read(e!)).toString()).toBe('after');
  });
});
