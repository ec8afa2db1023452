// The file sink's writer: appends whole batches to this writer's own current file, rotates it
// by size and age, and undoes a partial append so a line is never split. Every writer (one per
// sink, so one per destination per dispatcher process) names its files with its own id: two
// processes writing one destination never share a file.
import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { mkdir, open, realpath, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { DeliveryError } from '../types.js';

export interface WriterOptions {
  /** Absolute directory, already checked to be under the root. */
  dir: string;
  /** The root the directory must stay under once symbolic links are resolved. */
  root: string;
  prefix: string;
  rotateBytes: number;
  rotateSeconds: number;
  fsync: boolean;
  now?: () => number;
}

export interface FileWriter {
  /** This writer's current file (absolute). */
  readonly currentPath: string;
  append(text: string): Promise<void>;
  /** Renames the current file to its final name now (nothing when it is empty). */
  rotate(): Promise<void>;
  /** Checks the directory can be created and written, without touching the current file. */
  probe(): Promise<void>;
  close(): Promise<void>;
}

const PERMANENT = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EISDIR', 'ELOOP', 'ENAMETOOLONG']);

/** Disk errors: permissions and path shapes are the destination's settings, the rest may pass. */
export function fileError(err: unknown, what: string): DeliveryError {
  if (err instanceof DeliveryError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? 'unknown';
  if (PERMANENT.has(code)) return new DeliveryError('config', `cannot ${what} (${code})`, { cause: err });
  return new DeliveryError('connection', `cannot ${what} (${code})`, { cause: err, retryable: true });
}

/** 20240115T120000.123Z: sorts in time order, no characters file systems dislike. */
export function fileTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '');
}

export function createFileWriter(options: WriterOptions): FileWriter {
  const now = options.now ?? Date.now;
  const writerId = `${process.pid}-${randomBytes(3).toString('hex')}`;
  const currentPath = path.join(options.dir, `${options.prefix}-${writerId}.ndjson.current`);
  let handle: FileHandle | null = null;
  let size = 0;
  let openedAt = 0;
  let dirChecked = false;
  let sequence = 0;
  // Batches may arrive concurrently (lane concurrency): appends and rotations run one at a time.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  };

  async function ensureDir(): Promise<void> {
    if (dirChecked) return;
    try {
      await mkdir(options.dir, { recursive: true });
    } catch (err) {
      throw fileError(err, `create directory ${path.relative(options.root, options.dir) || '.'}`);
    }
    // A symbolic link inside the root could point anywhere: the real path must stay inside.
    const [realDir, realRoot] = await Promise.all([realpath(options.dir), realpath(options.root)]);
    if (realDir !== realRoot && !realDir.startsWith(realRoot + path.sep)) {
      throw new DeliveryError('config', 'the directory leads outside the file destinations root (symbolic link)');
    }
    dirChecked = true;
  }

  async function openCurrent(): Promise<FileHandle> {
    if (handle) return handle;
    await ensureDir();
    try {
      handle = await open(currentPath, fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT, 0o640);
      size = (await handle.stat()).size;
      openedAt = now();
      return handle;
    } catch (err) {
      throw fileError(err, 'open the current file');
    }
  }

  /** Unique by construction (writer id + sequence); names sort in rotation order for one writer. */
  function finalName(): string {
    sequence++;
    return path.join(options.dir, `${options.prefix}-${fileTimestamp(now())}-${writerId}-${String(sequence).padStart(6, '0')}.ndjson`);
  }

  async function rotateNow(): Promise<void> {
    const h = handle;
    handle = null;
    if (!h) return;
    await h.close();
    if (size === 0) {
      await unlink(currentPath).catch(() => undefined);
      return;
    }
    try {
      await rename(currentPath, finalName());
      size = 0;
      if (options.fsync) await syncDir();
    } catch (err) {
      throw fileError(err, 'rotate the current file');
    }
  }

  async function syncDir(): Promise<void> {
    const d = await open(options.dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  }

  return {
    currentPath,
    append(text) {
      return serial(async () => {
        const length = Buffer.byteLength(text);
        if (handle && size > 0 && (size + length > options.rotateBytes || now() - openedAt >= options.rotateSeconds * 1000)) await rotateNow();
        const h = await openCurrent();
        const before = size;
        try {
          // appendFile loops until every byte is written (a single write(2) may be partial).
          await h.appendFile(text);
          if (options.fsync) await h.datasync();
          size = before + length;
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
          throw fileError(err, `write in ${path.relative(options.root, options.dir) || '.'}`);
        }
      });
    },
    close() {
      return serial(rotateNow);
    },
  };
}
