// The file sink's writer: appends whole batches to this writer's own current file and
// finishes it (renames it to `*.ndjson`) by size, by age, after an idle period and at
// close; a partial append is undone so a line is never split. Every writer (one per sink,
// so one per destination per dispatcher process) names its files with its own id: two
// processes writing one destination never share a file.
//
// Other processes finish a current file nobody touched for `staleMs` as left by a dead
// writer (recover.ts, decision 0026). So a live writer keeps its file's mtime fresh (every
// append does; a timer touches a quiet one) and, before appending after a stall of half
// that period (an event loop blocked, a suspended machine), proves the file is still its
// own; if a recovery took it meanwhile, it goes on in a new file and never writes to the
// finished one.
import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { lstat, mkdir, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../../platform/logger.js';
import { DeliveryError } from '../types.js';
import {
  checkRealPath,
  CURRENT_SUFFIX,
  DEFAULT_STALE_MS,
  fileError,
  fileTimestamp,
  heldFiles,
  syncDir,
} from './disk.js';

export interface WriterOptions {
  /** Absolute directory, already checked to be under the owner's directory. */
  dir: string;
  /** The owner's (organization's) directory the real path must stay under. */
  owner: string;
  /** The administrator's root, which the owner's directory must stay under. */
  root: string;
  prefix: string;
  rotateBytes: number;
  rotateSeconds: number;
  /** Finish the file when nothing was appended for this long. */
  idleSeconds: number;
  fsync: boolean;
  /** How long others wait before treating an untouched current file as orphaned (default 60 s). */
  staleMs?: number;
  now?: () => number;
  /** Period of tick() (idle and age checks, heartbeat); 0: only when called. Default from idle and stale. */
  tickMs?: number;
  logger?: Logger;
}

export interface FileWriter {
  /** This writer's current file (absolute); changes when the writer has to start afresh. */
  readonly currentPath: string;
  /** Appends complete lines (text or their UTF-8 bytes), each ending in a newline. */
  append(text: string | Buffer): Promise<void>;
  /** Renames the current file to its final name now (nothing when it is empty). */
  rotate(): Promise<void>;
  /** Finishes an idle or old file and keeps an open one alive; runs on the writer's timer. */
  tick(): Promise<void>;
  /** Checks the directory can be created and written, without touching the current file. */
  probe(): Promise<void>;
  close(): Promise<void>;
}

export { fileError, fileTimestamp } from './disk.js';

function newWriterId(): string {
  return `${process.pid}-${randomBytes(3).toString('hex')}`;
}

export function createFileWriter(options: WriterOptions): FileWriter {
  const now = options.now ?? Date.now;
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const idleMs = options.idleSeconds * 1000;
  const ageMs = options.rotateSeconds * 1000;
  // Ownership proven at t holds for others until t + staleMs; using half leaves room for
  // clocks of hosts sharing the directory being apart.
  const sureForMs = staleMs / 2;
  const beatMs = staleMs / 4;
  const tickMs = options.tickMs ?? Math.max(250, Math.min(beatMs, idleMs / 4, 15_000));
  let writerId = newWriterId();
  let currentPath = '';
  let handle: FileHandle | null = null;
  let size = 0;
  let openedAt = 0;
  let lastWriteAt = 0;
  let sureAt = 0;
  let sequence = 0;
  let dirChecked = false;
  let closed = false;
  const named = () => (currentPath = path.join(options.dir, `${options.prefix}-${writerId}${CURRENT_SUFFIX}`));
  named();
  // Batches may arrive concurrently (lane concurrency): appends, rotations and ticks run one at a time.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  };

  /** A fresh id and file name: the old file, wherever it is, is no longer this writer's. */
  function renew(): void {
    heldFiles.delete(currentPath);
    writerId = newWriterId();
    sequence = 0;
    named();
  }

  async function ensureDir(): Promise<void> {
    if (dirChecked) return;
    try {
      await mkdir(options.dir, { recursive: true });
    } catch (err) {
      throw fileError(err, `create directory ${path.relative(options.owner, options.dir) || '.'}`);
    }
    await checkRealPath(options.dir, options.owner, options.root);
    dirChecked = true;
  }

  async function openCurrent(): Promise<FileHandle> {
    if (handle) return handle;
    await ensureDir();
    for (let attempt = 0; ; attempt++) {
      const t = now();
      try {
        // O_EXCL: a file of this name can only be a leftover, never continued.
        handle = await open(
          currentPath,
          fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | fsConstants.O_EXCL,
          0o640,
        );
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 3) {
          renew();
          continue;
        }
        throw fileError(err, 'open the current file');
      }
      heldFiles.add(currentPath);
      size = 0;
      openedAt = lastWriteAt = sureAt = t;
      return handle;
    }
  }

  /** Touches the file, then checks its name still leads to it: true while no recovery took it. */
  async function stillMine(h: FileHandle): Promise<boolean> {
    const t = now();
    try {
      await h.utimes(t / 1000, t / 1000);
      const [mine, there] = await Promise.all([h.stat(), lstat(currentPath)]);
      if (mine.ino !== there.ino || mine.dev !== there.dev) return false;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw fileError(err, 'check the current file');
    }
    sureAt = t;
    return true;
  }

  async function abandon(h: FileHandle): Promise<void> {
    handle = null;
    size = 0;
    await h.close().catch(() => undefined);
    options.logger?.warn(
      { file: path.basename(currentPath) },
      'this writer stalled and its file was finished by a recovery; it goes on in a new file',
    );
    renew();
  }

  /** Unique by construction (writer id + sequence); names sort in rotation order for one writer. */
  function finalName(): string {
    sequence++;
    return path.join(
      options.dir,
      `${options.prefix}-${fileTimestamp(now())}-${writerId}-${String(sequence).padStart(6, '0')}.ndjson`,
    );
  }

  async function rotateNow(): Promise<void> {
    const h = handle;
    if (!h) return;
    handle = null;
    const file = currentPath;
    const empty = size === 0;
    size = 0;
    await h.close().catch(() => undefined);
    try {
      if (empty) await unlink(file);
      else await rename(file, finalName());
      if (options.fsync) await syncDir(options.dir);
      heldFiles.delete(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        // A recovery took the file while this writer stalled: it finishes it.
        if (!empty)
          options.logger?.warn(
            { file: path.basename(file) },
            'this writer stalled and its file was finished by a recovery',
          );
        renew();
        return;
      }
      // Left where it is: a recovery finishes it once stale; this writer goes on in a new file.
      renew();
      throw fileError(err, 'rotate the current file');
    }
  }

  async function maintain(): Promise<void> {
    const h = handle;
    if (!h) return;
    const t = now();
    if (size === 0 || t - lastWriteAt >= idleMs || t - openedAt >= ageMs) await rotateNow();
    else if (t - sureAt >= beatMs && !(await stillMine(h))) await abandon(h);
  }

  const timer =
    tickMs > 0
      ? setInterval(
          () =>
            void serial(maintain).catch((err: unknown) =>
              options.logger?.warn({ err }, 'finishing an idle file failed'),
            ),
          tickMs,
        )
      : null;
  timer?.unref();

  return {
    get currentPath() {
      return currentPath;
    },
    append(text) {
      return serial(async () => {
        if (closed) throw new DeliveryError('connection', 'the file writer is closed', { retryable: true });
        const length = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
        const t0 = now();
        if (handle && size > 0 && (size + length > options.rotateBytes || t0 - openedAt >= ageMs)) await rotateNow();
        if (handle && t0 - sureAt >= sureForMs && !(await stillMine(handle))) await abandon(handle);
        const h = await openCurrent();
        const before = size;
        const started = now();
        try {
          // appendFile loops until every byte is written (a single write(2) may be partial).
          await h.appendFile(text);
          if (options.fsync) await h.datasync();
          size = before + length;
          lastWriteAt = started;
          // The append refreshed the mtime while the file was surely this writer's.
          if (started - sureAt < sureForMs) sureAt = started;
        } catch (err) {
          // A partial append would leave a cut line that the next batch continues: cut it off.
          await h.truncate(before).catch(() => undefined);
          throw fileError(err, 'write the current file');
        }
      });
    },
    rotate() {
      return serial(rotateNow);
    },
    tick() {
      return serial(maintain);
    },
    probe() {
      return serial(async () => {
        await ensureDir();
        const probe = path.join(options.dir, `.weir-probe-${writerId}`);
        try {
          const h = await open(probe, 'w', 0o640);
          await h.write('ok\n');
          await h.close();
          await unlink(probe);
        } catch (err) {
          throw fileError(err, `write in ${path.relative(options.owner, options.dir) || '.'}`);
        }
      });
    },
    close() {
      closed = true;
      if (timer) clearInterval(timer);
      return serial(rotateNow);
    },
  };
}
