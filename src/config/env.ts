// Readers of environment variables: each returns a typed value or throws a ConfigError
// naming the variable, so that a bad setting stops the process before anything starts.
import { readFileSync } from 'node:fs';

export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

export const MiB = 1_048_576;
export const GiB = 1_073_741_824;

export function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

export function optional(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

export function ratio(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new ConfigError(`${name} must be a number from 0 to 1, got "${raw}"`);
  return n;
}

export function url(env: Env, name: string, schemes: string[]): string | undefined {
  const v = optional(env, name);
  if (v === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(v);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!schemes.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use one of ${schemes.join(', ')}`);
  }
  return v;
}

/** A secret given inline (NAME) or in a file (NAME_FILE), never both; the file's content is trimmed. */
export function secret(env: Env, name: string): string | undefined {
  const inline = optional(env, name);
  const file = optional(env, `${name}_FILE`);
  if (inline !== undefined && file !== undefined) throw new ConfigError(`set ${name} or ${name}_FILE, not both`);
  if (file === undefined) return inline;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${name}_FILE cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const value = text.trim();
  if (!value) throw new ConfigError(`${name}_FILE is empty`);
  return value;
}

export function list(env: Env, name: string): string[] {
  const v = optional(env, name);
  return v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}

/** A memory size as PostgreSQL reads it: digits and kB, MB or GB. */
export function pgSize(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  if (!v) return undefined;
  if (!/^\d+(kB|MB|GB)$/.test(v))
    throw new ConfigError(`${name} must be a size such as 16MB or 128MB (kB, MB or GB), not ${JSON.stringify(v)}`);
  return v;
}

/** A memory size as DuckDB reads it: digits and a unit (KB, MB, GB; KiB, MiB, GiB). */
export function memorySize(env: Env, name: string, fallback: string): string {
  const v = env[name]?.trim() || fallback;
  if (!/^\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)$/i.test(v))
    throw new ConfigError(`${name} must be a size such as 256MB or 1GB, not ${JSON.stringify(v)}`);
  return v;
}

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** A number of bytes: digits, or digits and a unit (KB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers of 1024). */
export function byteSize(env: Env, name: string, fallback: number): number {
  const v = env[name]?.trim();
  if (v === undefined || v === '') return fallback;
  const m = /^(\d+)\s*([kmgt]i?b)?$/i.exec(v);
  const n = m ? Number(m[1]) * BYTE_UNITS[(m[2] ?? '').toLowerCase()]! : NaN;
  if (!Number.isSafeInteger(n))
    throw new ConfigError(
      `${name} must be a number of bytes such as 0 (none), 50000000000 or 50GB (KB, MB, GB, TB; KiB, MiB, GiB, TiB), not ${JSON.stringify(v)}`,
    );
  return n;
}
