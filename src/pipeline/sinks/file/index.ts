// Destination type `file`: NDJSON files on a local or mounted disk, only under the
// administrator's root (WEIR_FILE_SINK_ROOT), in a directory of the destination's owner
// (`org-<id>/`, `global/` for global destinations) so two organizations never share a file.
// A batch counts delivered once appended (and fsynced, by default). The open file ends in
// `.current`; it is finished (renamed to `*.ndjson`, complete lines only) by size, age,
// idle time and shutdown, and after a crash by a recovery (recover.ts), so a shipper that
// picks up `*.ndjson` sees every delivered event, promptly.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Type } from 'typebox';
import { ndjsonBytes } from '../../../core/lines.js';
import { timedTest } from '../http-common.js';
import { DeliveryError, type Sink, type SinkContext, type SinkHost, type SinkType } from '../types.js';
import { DEFAULT_STALE_MS, isInside } from './disk.js';
import { recoverDirectory, recoverTree } from './recover.js';
import { createFileWriter, type FileWriter } from './writer.js';

/** Relative, no `..` segment, no backslash or NUL, no drive letter. */
const RELATIVE_PATH = /^(?!\/)(?![A-Za-z]:)(?!(?:.*\/)?\.\.(?:\/|$))[^\\\0]+$/;
const PREFIX = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const PATH_RULE =
  'must be a relative directory such as "siem/okta" or ".": names separated by "/", not starting with "/" or a drive letter (C:), without a ".." segment, a backslash or a NUL character';
const PREFIX_RULE = 'must be 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or a digit';
const IDLE_DEFAULT = 60;

export const FileConfigSchema = Type.Object(
  {
    path: Type.String({
      minLength: 1,
      maxLength: 1024,
      pattern: RELATIVE_PATH.source,
      errorMessage: { pattern: PATH_RULE },
      description:
        'Directory for the files, relative to the owner\'s directory under the file destinations root set by the administrator: <WEIR_FILE_SINK_ROOT>/org-<organization id>/<path> (global destinations: <WEIR_FILE_SINK_ROOT>/global/<path>); "." is the owner\'s directory itself. Absolute paths and ".." are refused.',
    }),
    prefix: Type.Optional(
      Type.String({
        pattern: PREFIX.source,
        errorMessage: { pattern: PREFIX_RULE },
        description:
          'Start of every file name (default: the destination id). Finished files: <prefix>-<UTC time>-<writer>-<sequence>.ndjson (after a crash: ...-<writer>-recovered.ndjson); the one being written: <prefix>-<writer>.ndjson.current',
      }),
    ),
    rotate_bytes: Type.Integer({
      default: 100 * 1_048_576,
      minimum: 1024,
      maximum: 64 * 1_073_741_824,
      description:
        'Start a new file once the current one would grow past this size (a batch is never split across files)',
    }),
    rotate_seconds: Type.Integer({
      default: 3600,
      minimum: 1,
      maximum: 7 * 86_400,
      description: 'Start a new file when the current one is this old',
    }),
    idle_seconds: Type.Integer({
      default: IDLE_DEFAULT,
      minimum: 1,
      maximum: 7 * 86_400,
      description:
        'Finish the current file (rename it to *.ndjson) once no batch has arrived for this long, so a shipper sees the events of a quiet stream promptly (checked every few seconds)',
    }),
    fsync: Type.Boolean({
      default: true,
      description: 'Flush every batch to the disk before it counts as delivered (slower, survives a power cut)',
    }),
  },
  { additionalProperties: false },
);

/** Why a file config cannot work (the schema says the same; this also guards the runtime), or null. */
export function fileConfigProblem(config: Record<string, unknown>): string | null {
  const p = config.path;
  if (typeof p !== 'string' || p === '') return 'path is required';
  if (!RELATIVE_PATH.test(p)) return `path ${PATH_RULE}`;
  if (config.prefix !== undefined && (typeof config.prefix !== 'string' || !PREFIX.test(config.prefix)))
    return `prefix ${PREFIX_RULE}`;
  return null;
}

/** The owner's directory under the root: `org-<id>`, or `global` for a global destination. */
export function ownerDirectoryName(organizationId: number | null): string {
  if (organizationId === null) return 'global';
  if (!Number.isSafeInteger(organizationId) || organizationId < 0)
    throw new DeliveryError('config', 'the destination has no valid organization');
  return `org-${organizationId}`;
}

export interface FilePlace {
  /** The administrator's root (absolute). */
  root: string;
  /** The owner's directory (absolute). */
  owner: string;
  /** The destination's directory (absolute). */
  dir: string;
}

/** Where a destination's files go; DeliveryError('config') when it would leave its owner's directory. */
export function filePlace(root: string, organizationId: number | null, config: Record<string, unknown>): FilePlace {
  const problem = fileConfigProblem(config);
  if (problem) throw new DeliveryError('config', problem);
  const absRoot = path.resolve(root);
  const owner = path.join(absRoot, ownerDirectoryName(organizationId));
  const dir = path.resolve(owner, config.path as string);
  if (!isInside(dir, owner))
    throw new DeliveryError('config', "path leads outside the owner's directory under the file destinations root");
  return { root: absRoot, owner, dir };
}

function num(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

export function createFileSink(ctx: SinkContext): Sink {
  const c = ctx.config;
  const staleMs = ctx.fileStaleMs ?? DEFAULT_STALE_MS;
  const fsync = c.fsync !== false;
  const place = () => filePlace(ctx.fileRoot, ctx.organizationId, c);
  let writer: FileWriter | undefined;
  const get = (): FileWriter =>
    (writer ??= createFileWriter({
      ...place(),
      prefix: typeof c.prefix === 'string' ? c.prefix : ctx.destinationId,
      rotateBytes: num(c.rotate_bytes, 100 * 1_048_576),
      rotateSeconds: num(c.rotate_seconds, 3600),
      idleSeconds: num(c.idle_seconds, IDLE_DEFAULT),
      fsync,
      staleMs,
      logger: ctx.logger,
    }));

  // A writer of another process that dies while this one runs leaves a file here too.
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweep = setInterval(() => {
    sweeping = sweeping
      .then(async () => {
        let where: FilePlace;
        try {
          where = place();
        } catch {
          return; // a config error is reported by send
        }
        await recoverDirectory(where.dir, { staleMs, fsync, logger: ctx.logger, shownFrom: where.root });
      })
      .catch((err: unknown) => ctx.logger.warn({ err }, 'looking for files left by stopped writers failed'));
  }, staleMs);
  sweep.unref();

  return {
    async send(batch, signal) {
      const w = get();
      if (batch.lines.length === 0) return {};
      // Once an append has started it runs to its end: stopping half way would cut a line.
      if (signal.aborted) throw new DeliveryError('timeout', 'file delivery timed out before writing');
      // Written as bytes line by line: joining a batch into one string cost more than the write.
      await w.append(ndjsonBytes([...batch.lines, '']));
      return {};
    },
    test(signal) {
      return timedTest(
        async () => {
          await get().probe();
          const where = place();
          return {
            ok: true,
            detail: `directory "${path.relative(where.root, where.dir) || '.'}" under the file destinations root is writable`,
          };
        },
        signal,
        ctx.redact,
      );
    },
    async close() {
      clearInterval(sweep);
      await sweeping;
      await writer?.close();
    },
  };
}

/** Entries at the root that are no owner's directory: files written before per-owner directories. */
async function legacyEntries(root: string): Promise<string[]> {
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => !(e.isDirectory() && /^(org-\d+|global)$/.test(e.name))).map((e) => e.name);
}

/**
 * At dispatcher start: finishes every orphaned current file under the root, then once more
 * when files of writers that died just before this start have gone stale.
 */
function recoverAtStart(host: SinkHost): { stop(): Promise<void> } {
  const logger = host.logger;
  const options = { staleMs: host.fileStaleMs, fsync: true, logger };
  const pass = async () => {
    const report = await recoverTree(host.fileRoot, options);
    if (report.finished.length || report.removed.length)
      logger.info(
        { finished: report.finished.length, removed: report.removed.length, torn_bytes_cut: report.cutBytes },
        'finished files left by stopped file destination writers',
      );
  };
  let running = legacyEntries(host.fileRoot)
    .then((legacy) => {
      if (legacy.length)
        logger.warn(
          { entries: legacy.slice(0, 20) },
          'the file destinations root holds entries outside the org-<id>/ and global/ directories (written before files were kept per organization): move them, see docs/destinations-file.md',
        );
    })
    .then(pass)
    .catch((err: unknown) => logger.error({ err }, 'finishing files left by stopped writers failed'));
  const timer = setTimeout(() => {
    running = running
      .then(pass)
      .catch((err: unknown) => logger.error({ err }, 'finishing files left by stopped writers failed'));
  }, host.fileStaleMs + 1_000);
  timer.unref();
  return {
    async stop() {
      clearTimeout(timer);
      await running;
    },
  };
}

export const fileSink: SinkType = {
  type: 'file',
  title: 'Files (NDJSON)',
  description:
    "Appends each batch to NDJSON files (one OCSF event per line) in a directory of the organization under the administrator's file destinations root. A batch counts delivered once written and, with fsync, flushed to the disk. " +
    'Each dispatcher process writes its own files (no two writers share one); files are finished (renamed to *.ndjson, complete lines only) by size, age, idle time and shutdown, and after a crash at the next start.',
  configSchema: FileConfigSchema,
  credentialSchema: null,
  credentialRequired: false,
  create: createFileSink,
  recover: recoverAtStart,
};
