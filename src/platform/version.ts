import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The package version, found from src/ or dist/src/ alike. */
export function packageVersion(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'weir' && pkg.version) return (cached = pkg.version);
    } catch {
      // not here; look one level up
    }
    dir = path.dirname(dir);
  }
  return (cached = '0.0.0');
}
