// Destination type `file`: NDJSON files on a local or mounted disk, only under the
// administrator's root (WEIR_FILE_SINK_ROOT). A batch counts delivered once appended (and
// fsynced, by default). Files rotate by size and age; the open one ends in `.current`, so a
// shipper that picks up `*.ndjson` only ever sees finished files.
import path from 'node:path';
import { Type } from 'typebox';
import { timedTest } from '../http-common.js';
import { DeliveryError, type Sink, type SinkContext, type SinkType } from '../types.js';
import { createFileWriter, type FileWriter } from './writer.js';

/** Relative, no `..` segment, no backslash or NUL, no drive letter. */
const RELATIVE_PATH = /^(?!\/)(?![A-Za-z]:)(?!(?:.*\/)?\.\.(?:\/|$))[^\\\0]+$/;
const PREFIX = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const PATH_RULE = 'must be a relative directory such as "siem/okta" or ".": names separated by "/", not starting with "/" or a drive letter (C:), without a ".." segment, a backslash or a NUL character';
const PREFIX_RULE = 'must be 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or a digit';

export const FileConfigSchema = Type.Object(
  {
    path: Type.String({
      minLength: 1,
      maxLength: 1024,
      pattern: RELATIVE_PATH.source,
      errorMessage: { pattern: PATH_RULE },
      description: 'Directory for the files, relative to the file destinations root set by the administrator (WEIR_FILE_SINK_ROOT); "." is the root itself. Absolute paths and ".." are refused.',
    }),
    prefix: Type.Optional(
      Type.String({ pattern: PREFIX.source, errorMessage: { pattern: PREFIX_RULE }, description: 'Start of every file name (default: the destination id). Finished files: <prefix>-<UTC time>-<writer>-<sequence>.ndjson; the one being written: <prefix>-<writer>.ndjson.current' }),
    ),
    rotate_bytes: Type.Integer({ default: 100 * 1_048_576, minimum: 1024, maximum: 64 * 1_073_741_824, description: 'Start a new file once the current one would grow past this size (a batch is never split across files)' }),
    rotate_seconds: Type.Integer({ default: 3600, minimum: 1, maximum: 7 * 86_400, description: 'Start a new file when the current one is this old (checked when a batch arrives)' }),
    fsync: Type.Boolean({ default: true, description: 'Flush every batch to the disk before it counts as delivered (slower, survives a power cut)' }),
  },
  { additionalProperties: false },
);

/** Why a file config cannot work (the schema says the same; this also guards the runtime), or null. */
export function fileConfigProblem(config: Record<string, unknown>): string | null {
  const p = config.path;
  if (typeof p !== 'string' || p === '') return 'path is required';
  if (!RELATIVE_PATH.test(p)) return `path ${PATH_RULE}`;
  if (config.prefix !== undefined && (typeof config.prefix !== 'string' || !PREFIX.test(config.prefix))) return `prefix ${PREFIX_RULE}`;
  return null;
}

/** The absolute directory of a destination; DeliveryError('config') when it would leave the root. */
export function fileDirectory(root: string, config: Record<string, unknown>): string {
  const problem = fileConfigProblem(config);
  if (problem) throw new DeliveryError('config', problem);
  const absRoot = path.resolve(root);
  const dir = path.resolve(absRoot, config.path as string);
  if (dir !== absRoot && !dir.startsWith(absRoot + path.sep)) throw new DeliveryError('config', 'path leads outside the file destinations root');
  return dir;
}

function num(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

export function createFileSink(ctx: SinkContext): Sink {
  const c = ctx.config;
  let writer: FileWriter | undefined;
  const get = (): FileWriter =>
    (writer ??= createFileWriter({
      dir: fileDirectory(ctx.fileRoot, c),
      root: path.resolve(ctx.fileRoot),
      prefix: typeof c.prefix === 'string' ? c.prefix : ctx.destinationId,
      rotateBytes: num(c.rotate_bytes, 100 * 1_048_576),
      rotateSeconds: num(c.rotate_seconds, 3600),
      fsync: c.fsync !== false,
    }));
  const shown = typeof c.path === 'string' ? c.path : '';

  return {
    async send(batch, signal) {
      const w = get();
      if (batch.lines.length === 0) return {};
      // Once an append has started it runs to its end: stopping half way would cut a line.
      if (signal.aborted) throw new DeliveryError('timeout', 'file delivery timed out before writing');
      await w.append(`${batch.lines.join('\n')}\n`);
      return {};
    },
    test(signal) {
      return timedTest(async () => {
        await get().probe();
        return { ok: true, detail: `directory "${shown}" under the file destinations root is writable` };
      }, signal);
    },
    async close() {
      await writer?.close();
    },
  };
}

export const fileSink: SinkType = {
  type: 'file',
  title: 'Files (NDJSON)',
  description:
    'Appends each batch to NDJSON files (one OCSF event per line) in a directory under the administrator\'s file destinations root. A batch counts delivered once written and, with fsync, flushed to the disk. ' +
    'Each dispatcher process writes its own files (no two writers share one); files rotate by size and age and are renamed to *.ndjson when finished, never splitting a line.',
  configSchema: FileConfigSchema,
  credentialSchema: null,
  credentialRequired: false,
  create: createFileSink,
};
