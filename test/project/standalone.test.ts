// The repository stands alone: a clone with nothing beside it installs, builds and passes its
// tests. No tracked file may read or link outside the tree (CI also runs the suite from a
// fresh clone in an empty directory, which proves the rest), and every relative link in the
// documentation names a file of the repository.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TEXT = /\.(ts|tsx|js|mjs|cjs|json|md|ya?ml|sh|py|txt|toml)$|(^|\/)(\.ci\/run|\.npmrc|\.gitignore)$/;
// Big generated data the scan need not read (nothing in them is a path).
const SKIP = new Set(['package-lock.json', 'third_party/ocsf-schema/schema-1.8.0.json', 'src/ocsf/definitions.json']);

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return out.split('\0').filter((f) => f && TEXT.test(f) && !SKIP.has(f) && existsSync(path.join(ROOT, f)));
}

const OUTSIDE = [
  { pattern: /\.\.\/shared\b/, what: 'the reference directory beside the checkout' },
  { pattern: /(^|[\s'"`(])\/work\//, what: 'an absolute path of the development machine (/work/...)' },
];

describe('the repository stands alone', () => {
  const files = trackedFiles();

  it('has files to check', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files).toContain('README.md');
  });

  it('reads and links nothing outside its own tree', () => {
    const found: string[] = [];
    for (const file of files) {
      if (file === 'test/project/standalone.test.ts') continue;
      const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
      lines.forEach((line, i) => {
        for (const { pattern, what } of OUTSIDE) if (pattern.test(line)) found.push(`${file}:${i + 1} names ${what}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('links, in every Markdown file, only to files of the repository that exist', () => {
    const broken: string[] = [];
    for (const file of files.filter((f) => f.endsWith('.md'))) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!.split('#')[0]!;
        if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const resolved = path.resolve(ROOT, path.dirname(file), target);
        if (!resolved.startsWith(ROOT + path.sep)) broken.push(`${file}: ${target} leaves the repository`);
        else if (!existsSync(resolved)) broken.push(`${file}: ${target} does not exist`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('carries the official OCSF schema with its licence and NOTICE, and the operation list', () => {
    for (const f of [
      'third_party/ocsf-schema/schema-1.8.0.json',
      'third_party/ocsf-schema/LICENSE',
      'third_party/ocsf-schema/NOTICE',
      'NOTICE',
      'test/fixtures/operations.json',
    ]) {
      expect(existsSync(path.join(ROOT, f)), f).toBe(true);
    }
    expect(readFileSync(path.join(ROOT, 'third_party/ocsf-schema/LICENSE'), 'utf8')).toMatch(
      /Apache License\s+Version 2\.0/,
    );
  });

  it('installs on every Node.js version the README promises (engine-strict, no dependency asks for more)', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(readFileSync(path.join(ROOT, '.npmrc'), 'utf8')).toMatch(/^engine-strict=true$/m);
    expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toContain('Node.js (20.19+, 22.12+ or 24)');
    expect(pkg.engines.node).toBe('>=20.19.0 <21 || >=22.12.0');
    // Every installed package's engines range admits the lowest version promised.
    expect(semver.minVersion(pkg.engines.node)?.version).toBe('20.19.0');
    const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean }>;
    };
    const refuses20: string[] = [];
    for (const [where, entry] of Object.entries(lock.packages)) {
      const range = entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined;
      if (range && !semver.satisfies('20.19.0', range)) refuses20.push(`${where}: ${range}`);
    }
    expect(refuses20).toEqual([]);
  });
});
