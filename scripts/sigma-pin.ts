// Pins the SigmaHQ rules the Sigma tests and bench/sigma.ts measure Weir's Sigma import against:
// copies the `.yml` rules of the directories below, as committed at the checkout's HEAD (or
// --ref), into third_party/sigma/rules/ and rewrites third_party/sigma/README.md with the commit.
//   npx tsx scripts/sigma-pin.ts <SigmaHQ checkout> [--ref <commit or tag>]
// The checkout may be a clone or a bare repository of https://github.com/SigmaHQ/sigma. The
// files are read from git objects, not the work tree, so that what is pinned is exactly the
// commit the README names. third_party/sigma/LICENSE.md (the DRL 1.1 text) is not rewritten:
// the script stops if the checkout's LICENSE no longer names the DRL 1.1.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

/** The rule directories pinned: the logsources Weir maps (docs/sigma.md). */
const DIRS = ['windows', 'cloud', 'network', 'web', 'category', 'identity', 'application/github'] as const;
const ORIGIN = 'https://github.com/SigmaHQ/sigma';

const { values, positionals } = parseArgs({ options: { ref: { type: 'string' } }, allowPositionals: true });
if (positionals.length !== 1) {
  console.error('usage: npx tsx scripts/sigma-pin.ts <SigmaHQ checkout> [--ref <commit or tag>]');
  process.exit(2);
}
const checkout = path.resolve(positionals[0]!);
const ref = values.ref ?? 'HEAD';
const outDir = fileURLToPath(new URL('../third_party/sigma/', import.meta.url));

const git = (args: string[], input?: string): Buffer =>
  execFileSync('git', ['-C', checkout, ...args], { input, maxBuffer: 1 << 30 });
const gitText = (args: string[]): string => git(args).toString('utf8').trim();

const commit = gitText(['rev-parse', '--verify', `${ref}^{commit}`]);
const date = gitText(['log', '-1', '--format=%cs', commit]);

const licence = gitText(['show', `${commit}:LICENSE`]);
if (!licence.includes('Detection Rule License (DRL) 1.1')) {
  console.error(
    `${commit}:LICENSE no longer names the Detection Rule License (DRL) 1.1: read it, and update third_party/sigma/LICENSE.md and README.md by hand`,
  );
  process.exit(1);
}

// `ls-tree -z` lines: "<mode> blob <sha>\t<path>".
const entries = git(['ls-tree', '-r', '-z', commit, '--', ...DIRS.map((d) => `rules/${d}`)])
  .toString('utf8')
  .split('\0')
  .filter(Boolean)
  .map((line) => {
    const tab = line.indexOf('\t');
    const [, type, sha] = line.slice(0, tab).split(' ');
    return { type, sha: sha!, file: line.slice(tab + 1) };
  })
  .filter((e) => e.type === 'blob' && e.file.endsWith('.yml'));
for (const e of entries) {
  // A path leaving rules/ (never in SigmaHQ) would write outside the pinned directory.
  if (e.file.split('/').some((part) => part === '..' || part === ''))
    throw new Error(`unexpected path in the tree: ${e.file}`);
}

// One `cat-file --batch` reads every blob: "<sha> blob <size>\n<content>\n" per request.
const batch = git(['cat-file', '--batch'], `${entries.map((e) => e.sha).join('\n')}\n`);
const contents: Buffer[] = [];
let at = 0;
for (const e of entries) {
  const nl = batch.indexOf(0x0a, at);
  const header = batch.subarray(at, nl).toString('utf8').split(' ');
  if (header[0] !== e.sha || header[1] !== 'blob')
    throw new Error(`git cat-file answered "${header.join(' ')}" for ${e.file}`);
  const size = Number(header[2]);
  contents.push(batch.subarray(nl + 1, nl + 1 + size));
  at = nl + 1 + size + 1;
}

rmSync(path.join(outDir, 'rules'), { recursive: true, force: true });
const counts = new Map<string, number>(DIRS.map((d) => [d, 0]));
entries.forEach((e, i) => {
  const target = path.join(outDir, e.file);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, contents[i]!);
  const dir = DIRS.find((d) => e.file.startsWith(`rules/${d}/`))!;
  counts.set(dir, (counts.get(dir) ?? 0) + 1);
});

const rows = DIRS.map((d) => `| \`rules/${d}\` | ${counts.get(d)} |`).join('\n');
writeFileSync(
  path.join(outDir, 'README.md'),
  `# SigmaHQ rules, pinned

Sigma rules by SigmaHQ and its contributors, licensed under the Detection Rule License (DRL) 1.1
(\`LICENSE.md\`; https://github.com/SigmaHQ/Detection-Rule-License). Each rule names its authors
in its \`author\` field and keeps it; the files are copied unchanged.

| | |
|---|---|
| Source | ${ORIGIN} |
| Commit | \`${commit}\` |
| Commit date | ${date} |
| Licence | Detection Rule License (DRL) 1.1 (SPDX \`DRL-1.1\`) |
| Attribution | Sigma rules by SigmaHQ and its contributors |

The \`.yml\` files of these directories of the repository's \`rules/\` are kept, with their paths:

| Directory | Rules |
|---|---|
${rows}
| Total | ${entries.length} |

They are test data: the Sigma acceptance test (\`test/sigma/acceptance.test.ts\`) and
\`bench/sigma.ts\` compile every rule to measure which rules Weir's Sigma import accepts and why
it refuses the others. They are not shipped inside Weir's runtime: nothing under \`src/\` reads
them, and Weir imports only the Sigma rules its users send.

## Re-pinning

\`\`\`sh
git clone ${ORIGIN} sigma
npx tsx scripts/sigma-pin.ts sigma            # HEAD of the clone; or --ref <commit or tag>
\`\`\`

The script replaces \`rules/\` here with the rules of that commit and rewrites this README (the
commit, its date and the counts). It stops if the repository's \`LICENSE\` no longer names the
DRL 1.1. Then run \`npx vitest run test/sigma/acceptance.test.ts\` and \`npx tsx bench/sigma.ts\`
to see what the new rules change.
`,
);

console.log(`pinned ${entries.length} rules of ${ORIGIN} at ${commit} (${date}) into ${outDir}`);
