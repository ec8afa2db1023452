// What an idle Weir costs: `weir all` on its embedded default (a fresh data directory, no
// integration, nothing arriving), its RSS and the CPU it burns, sampled from /proc over a
// window after it settled, for every process it starts (the pass's threads are in its own
// process). Issue 27's aims: idle RSS under 250 MiB 60 s after start, idle CPU under 1% of a
// core.
//   npm run build && npx tsx bench/idle.ts [--settle 60] [--window 60] [--root <another checkout, built>]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cpuOf, statusKb } from './proc.js';

const { values } = parseArgs({
  options: {
    settle: { type: 'string', default: '60' },
    window: { type: 'string', default: '60' },
    root: { type: 'string' },
  },
});
const settleS = Number(values.settle);
const windowS = Number(values.window);
/** The checkout whose dist/ runs (--root: another build, for an A/B). */
const root = path.resolve(values.root ?? path.join(import.meta.dirname, '..'));
const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-idle-'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The process and every descendant (a child database, a worker process). */
function tree(pid: number): number[] {
  const out = [pid];
  try {
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean))
      out.push(...tree(Number(child)));
  } catch {
    // gone, or no children file
  }
  return out;
}

const proc = spawn(process.execPath, ['dist/src/main.js', 'all'], {
  cwd: root,
  env: { PATH: process.env.PATH, WEIR_DATA_DIR: dataDir, PORT: '18093', LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
try {
  await sleep(settleS * 1000);
  const pids = tree(proc.pid!);
  const cpu0 = pids.reduce((s, p) => s + cpuOf(p), 0);
  await sleep(windowS * 1000);
  const cpu1 = pids.reduce((s, p) => s + cpuOf(p), 0);
  const rssMiB = pids.reduce((s, p) => s + statusKb(p, 'VmRSS'), 0) / 1024;
  const hwmMiB = pids.reduce((s, p) => s + statusKb(p, 'VmHWM'), 0) / 1024;
  console.log(
    `weir all, idle (node ${process.version}; ${pids.length} process${pids.length > 1 ? 'es' : ''}): settled ${settleS} s, window ${windowS} s`,
  );
  console.log(`  CPU: ${(((cpu1 - cpu0) / windowS) * 100).toFixed(1)}% of a core (${(cpu1 - cpu0).toFixed(2)} s)`);
  console.log(`  RSS: ${rssMiB.toFixed(0)} MiB now, ${hwmMiB.toFixed(0)} MiB at most`);
} finally {
  proc.kill('SIGTERM');
  await new Promise((resolve) => proc.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
