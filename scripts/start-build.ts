// `npm start`'s build: only what changed since the last one. The server is compiled by tsc
// in incremental mode (dist/.tsbuildinfo); the console is rebuilt by Vite only when a file
// it is built from changed (web/, the Vite config, the lockfile), judged by a hash of their
// contents kept beside the build in dist/web/.inputs. `npm run build` still builds everything.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const consoleOut = path.join(root, 'dist/web');
const stamp = path.join(consoleOut, '.inputs');
// Generated for the type-check only (scripts/console-api.ts): Vite does not read it.
const notInputs = new Set([path.join(root, 'web/src/api/schema.d.ts')]);

function run(what: string, command: string, args: string[]): void {
  const started = Date.now();
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  console.log(`${what} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .filter((f) => !notInputs.has(f));
}

function consoleInputsHash(): string {
  const hash = createHash('sha256');
  const inputs = [...files(path.join(root, 'web')), path.join(root, 'package-lock.json')].sort();
  for (const file of inputs)
    hash.update(path.relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

const bin = (name: string): string => path.join(root, 'node_modules/.bin', name);

run('server compiled (incremental)', bin('tsc'), [
  '-p',
  'tsconfig.build.json',
  '--incremental',
  '--tsBuildInfoFile',
  'dist/.tsbuildinfo',
]);

const wanted = consoleInputsHash();
const built = existsSync(path.join(consoleOut, 'index.html')) && existsSync(stamp) && readFileSync(stamp, 'utf8');
if (built === wanted) console.log('console unchanged since its last build: not rebuilt');
else {
  run('console built', bin('vite'), ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn']);
  writeFileSync(stamp, wanted);
}
