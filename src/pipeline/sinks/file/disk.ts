// What the file sink's writer and its recovery share: file names, the directory checks, the
// disk error kinds, and the open files held by writers of this process.
import { open, realpath } from 'node:fs/promises';
import path from 'node:path';
import { DeliveryError } from '../types.js';

/** The file a writer appends to ends in this; a shipper reading `*.ndjson` never sees it. */
export const CURRENT_SUFFIX = '.ndjson.current';
/** A recovery renames an orphaned current file to `<stem>.ndjson.current.claim-<its id>` while it finishes it. */
export const CLAIM_MARK = '.claim-';
/** Another process treats a current file nobody touched for this long as left by a dead writer. */
export const DEFAULT_STALE_MS = 60_000;

/** 20240115T120000.123Z: sorts in time order, no characters file systems dislike. */
export function fileTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '');
}

/** A writer's id: `<pid>-<6 hex>`; names end `-<writer id>.ndjson.current` or `-<writer id>-<sequence>.ndjson`. */
export const WRITER_ID = /^(.*)-(\d+-[0-9a-f]{6})$/;

// Current files open in this process: a recovery running here never claims them, whatever
// their age (a sweep and the writer's own maintenance may run at once).
const held = new Set<string>();
export const heldFiles = {
  add: (file: string) => void held.add(file),
  delete: (file: string) => void held.delete(file),
  has: (file: string) => held.has(file),
};

const PERMANENT = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EISDIR', 'ELOOP', 'ENAMETOOLONG']);

/** Disk errors: permissions and path shapes are the destination's settings, the rest may pass. */
export function fileError(err: unknown, what: string): DeliveryError {
  if (err instanceof DeliveryError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? 'unknown';
  if (PERMANENT.has(code)) return new DeliveryError('config', `cannot ${what} (${code})`, { cause: err });
  return new DeliveryError('connection', `cannot ${what} (${code})`, { cause: err, retryable: true });
}

/** Makes a rename or an unlink durable: the directory entry is flushed too. */
export async function syncDir(dir: string): Promise<void> {
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}

function inside(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent + path.sep);
}

/**
 * Symbolic links could point anywhere: once resolved, the owner's directory must still be
 * under the administrator's root and the destination's directory under its owner's.
 */
export async function checkRealPath(dir: string, owner: string, root: string): Promise<void> {
  const [realDir, realOwner, realRoot] = await Promise.all([realpath(dir), realpath(owner), realpath(root)]);
  if (!inside(realOwner, realRoot) || !inside(realDir, realOwner)) {
    throw new DeliveryError(
      'config',
      "the directory leads outside the owner's directory under the file destinations root (symbolic link)",
    );
  }
}

export { inside as isInside };
