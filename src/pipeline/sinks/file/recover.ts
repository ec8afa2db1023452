// Finishing current files left by dead writers (decision 0026). A writer killed between two
// rotations leaves `<prefix>-<writer>.ndjson.current`, possibly ending in a torn line (the
// part of an append the kill interrupted; its batch was not acknowledged, so it is sent
// again). A shipper reads `*.ndjson` only: until someone finishes the file, its acknowledged
// events are invisible.
//
// Orphaned means untouched for staleMs: a live writer refreshes its file's mtime well within
// that (writer.ts). A recovery claims a file by renaming it (atomic: of several recoveries,
// on this host or another sharing the directory, one wins), looks at the mtime again in case
// a stalled writer came back meanwhile (then the file goes back), cuts the bytes after the
// last newline, and renames it to `*.ndjson` (or removes it when nothing complete is left).
import { randomBytes } from 'node:crypto';
import { constants as fsConstants, type Dirent } from 'node:fs';
import { lstat, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../../platform/logger.js';
import { CLAIM_MARK, CURRENT_SUFFIX, fileTimestamp, heldFiles, syncDir, WRITER_ID } from './disk.js';

export interface RecoverOptions {
  /** A current file untouched for this long belongs to a dead writer. */
  staleMs: number;
  /** Flush the cut and the rename to the disk (the destination's fsync; true when unknown). */
  fsync: boolean;
  now?: () => number;
  logger?: Logger;
  /** Names in log lines are relative to this (default the directory itself). */
  shownFrom?: string;
}

export interface RecoveryReport {
  /** Finished files (names relative to shownFrom). */
  finished: string[];
  /** Leftovers with no complete line, removed. */
  removed: string[];
  /** Bytes of torn last lines cut off. */
  cutBytes: number;
}

const RECOVERER_ID = `${process.pid}-${randomBytes(3).toString('hex')}`;
const CLAIM_ID = /^[0-9a-z-]{1,40}$/;
const CHUNK = 64 * 1024;
// Files a recovery of this process is finishing right now (a start-up pass and a
// destination's own sweep may meet in one directory).
const inProgress = new Set<string>();

/** The part of a leftover's name before `.ndjson.current`, or null when the name is not one. */
export function leftoverStem(name: string): string | null {
  const i = name.lastIndexOf(CURRENT_SUFFIX);
  if (i <= 0) return null;
  const rest = name.slice(i + CURRENT_SUFFIX.length);
  if (rest === '' || (rest.startsWith(CLAIM_MARK) && CLAIM_ID.test(rest.slice(CLAIM_MARK.length))))
    return name.slice(0, i);
  return null;
}

/** `<prefix>-<time of the last write>-<writer>-recovered.ndjson`: sorts after the writer's earlier files. */
export function recoveredName(stem: string, lastWriteMs: number): string {
  const m = WRITER_ID.exec(stem);
  const ts = fileTimestamp(lastWriteMs);
  return m ? `${m[1]}-${ts}-${m[2]}-recovered.ndjson` : `${stem}-${ts}-recovered.ndjson`;
}

/** Length of the file up to and including its last newline (UTF-8 never has 0x0A inside a character). */
export async function completeLength(h: FileHandle, size: number): Promise<number> {
  const buf = Buffer.allocUnsafe(CHUNK);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - CHUNK);
    const { bytesRead } = await h.read(buf, 0, end - start, start);
    const nl = buf.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (nl >= 0) return start + nl + 1;
    end = start;
  }
  return 0;
}

type Outcome = { kind: 'finished'; name: string; cut: number } | { kind: 'removed'; cut: number } | { kind: 'skipped' };

async function recoverFile(dir: string, name: string, stem: string, o: RecoverOptions): Promise<Outcome> {
  const now = o.now ?? Date.now;
  const from = path.join(dir, name);
  const seen = await lstat(from).catch(() => null);
  if (!seen?.isFile() || now() - seen.mtimeMs < o.staleMs) return { kind: 'skipped' };
  const claimed = path.join(dir, `${stem}${CURRENT_SUFFIX}${CLAIM_MARK}${RECOVERER_ID}`);
  if (inProgress.has(claimed)) return { kind: 'skipped' };
  inProgress.add(claimed);
  try {
    try {
      await rename(from, claimed);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'skipped' }; // another recovery took it
      throw err;
    }
    // O_NOFOLLOW: the claim is a regular file of this directory, never a link out of it.
    const h = await open(claimed, fsConstants.O_RDWR | fsConstants.O_NOFOLLOW);
    let size: number;
    let keep: number;
    let lastWrite: number;
    try {
      const st = await h.stat();
      if (now() - st.mtimeMs < o.staleMs) {
        // A stalled writer touched it between the look and the claim: it is alive, give it back.
        await h.close();
        await rename(claimed, from);
        return { kind: 'skipped' };
      }
      size = st.size;
      lastWrite = st.mtimeMs;
      keep = await completeLength(h, size);
      if (keep > 0 && keep < size) {
        await h.truncate(keep);
        if (o.fsync) await h.datasync();
      }
    } finally {
      await h.close().catch(() => undefined);
    }
    if (keep === 0) {
      await unlink(claimed);
      if (o.fsync) await syncDir(dir);
      return { kind: 'removed', cut: size };
    }
    const finished = recoveredName(stem, lastWrite);
    await rename(claimed, path.join(dir, finished));
    if (o.fsync) await syncDir(dir);
    return { kind: 'finished', name: finished, cut: size - keep };
  } finally {
    inProgress.delete(claimed);
  }
}

/** Finishes every orphaned current file of one directory (not below it). */
export async function recoverDirectory(dir: string, o: RecoverOptions): Promise<RecoveryReport> {
  return (await sweep(dir, o)).report;
}

/** recoverDirectory over a whole tree; symbolic links to directories are not entered. */
export async function recoverTree(root: string, o: RecoverOptions): Promise<RecoveryReport> {
  const total: RecoveryReport = { finished: [], removed: [], cutBytes: 0 };
  const pending = [root];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    const { report, subdirectories } = await sweep(dir, { ...o, shownFrom: o.shownFrom ?? root });
    total.finished.push(...report.finished);
    total.removed.push(...report.removed);
    total.cutBytes += report.cutBytes;
    pending.push(...subdirectories);
  }
  return total;
}

async function sweep(dir: string, o: RecoverOptions): Promise<{ report: RecoveryReport; subdirectories: string[] }> {
  const report: RecoveryReport = { finished: [], removed: [], cutBytes: 0 };
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { report, subdirectories: [] };
    throw err;
  }
  const shown = (name: string) => path.relative(o.shownFrom ?? dir, path.join(dir, name));
  for (const entry of entries) {
    // Symbolic links are never followed nor renamed: only regular files are leftovers.
    if (!entry.isFile()) continue;
    const stem = leftoverStem(entry.name);
    if (stem === null || heldFiles.has(path.join(dir, entry.name))) continue;
    try {
      const out = await recoverFile(dir, entry.name, stem, o);
      if (out.kind === 'skipped') continue;
      report.cutBytes += out.cut;
      if (out.kind === 'finished') report.finished.push(shown(out.name));
      else report.removed.push(shown(entry.name));
      o.logger?.warn(
        {
          file: shown(entry.name),
          finished_as: out.kind === 'finished' ? shown(out.name) : null,
          torn_bytes_cut: out.cut,
        },
        out.kind === 'finished'
          ? 'finished a file left by a stopped writer'
          : 'removed a file left by a stopped writer (no complete line)',
      );
    } catch (err) {
      o.logger?.error({ err, file: shown(entry.name) }, 'cannot finish a file left by a stopped writer');
    }
  }
  return { report, subdirectories: entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name)) };
}
