// Summarises V8 CPU profiles (.cpuprofile, from `node --cpu-prof` or the inspector) as self
// time by category: which part of Weir, which library, or the engine itself (GC, JSON).
// Samples can be restricted to time windows in the monotonic clock (microseconds, the clock
// of process.hrtime.bigint() / 1000n), so a benchmark counts only its measured part. A
// profile covers the JavaScript thread only: work on the libuv thread pool (zlib, file
// system) is in the process's CPU time but not in its profile.
// JSON.parse and JSON.stringify have no frame of their own (V8 counts builtins in their
// caller's self time): the per-line ticks of a JavaScript file (.js, as built in dist/) whose
// source line calls one of them are counted as JSON instead of the caller's category.
// A thread blocked in Atomics.wait (piscina's workers between tasks) is sampled as running its
// caller: the ticks of a line that calls Atomics.wait are idle, not CPU, and are left out.
// --skip <s> leaves out each profile's first seconds (the start of a process profiled idle).
//   npx tsx bench/profile-summary.ts <file.cpuprofile | dir>... [--top 25] [--skip 0]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  positionTicks?: { line: number; ticks: number }[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** [from, to] in monotonic microseconds. */
export type Window = [number, number];

const JSON_CATEGORY = 'JSON (parse, stringify)';

// First match wins: Weir's stages by folder, then libraries, then the engine.
const RULES: [string, (f: CallFrame) => boolean][] = [
  ['normalize (pipeline/normalize, ocsf)', (f) => /\/src\/(pipeline\/normalize|ocsf)\//.test(f.url)],
  ['route (pipeline/route)', (f) => f.url.includes('/src/pipeline/route/')],
  ['delivery (pipeline/delivery)', (f) => f.url.includes('/src/pipeline/delivery/')],
  ['sinks (pipeline/sinks)', (f) => f.url.includes('/src/pipeline/sinks/')],
  ['pglite (WASM + its JS)', (f) => f.url.startsWith('wasm://') || f.url.includes('/@electric-sql/pglite/')],
  ['zlib', (f) => f.url === 'node:zlib' || f.url.includes('/zlib')],
  [
    JSON_CATEGORY,
    (f) =>
      (f.url === '' && /^(parse|stringify|JSON\.\w+)$/.test(f.functionName)) || f.url.includes('/secure-json-parse/'),
  ],
  [
    'fastify (+ router, plugins)',
    (f) =>
      /\/node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|fast-json-stringify|fast-querystring|fast-uri|ajv)/.test(
        f.url,
      ),
  ],
  [
    'kysely + pg (query building, driver)',
    (f) => /\/node_modules\/(kysely|pg|pg-protocol|pg-types|pg-pool)\//.test(f.url),
  ],
  ['logging (pino)', (f) => /\/node_modules\/(pino|sonic-boom|thread-stream)/.test(f.url)],
  ['ingest (pipeline/sources, modules/ingest)', (f) => /\/src\/(pipeline\/sources|modules\/ingest)\//.test(f.url)],
  ['queue (platform/queue)', (f) => f.url.includes('/src/platform/queue/')],
  ['other Weir code', (f) => f.url.includes('/src/')],
  ['garbage collector', (f) => f.functionName === '(garbage collector)'],
  ['node internals (streams, fs, http, timers)', (f) => f.url.startsWith('node:')],
];
const IDLE = new Set(['(idle)']);

const sources = new Map<string, string[] | null>();
/** Whether line `line` (1-based) of a .js file calls what `call` matches. */
function lineCalls(url: string, line: number, call: RegExp): boolean {
  if (!url.startsWith('file://') || !url.endsWith('.js')) return false;
  let lines = sources.get(url);
  if (lines === undefined) {
    const file = fileURLToPath(url);
    lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n') : null;
    sources.set(url, lines);
  }
  return call.test(lines?.[line - 1] ?? '');
}
const JSON_CALL = /JSON\.(parse|stringify)\(/;
const WAIT_CALL = /Atomics\.wait\(/;

/** The share of a node's self time spent on lines that call what `call` matches (0 when unknown). */
function lineShare(node: ProfileNode, call: RegExp): number {
  const ticks = node.positionTicks;
  if (!ticks || ticks.length === 0) return 0;
  let hit = 0;
  let all = 0;
  for (const t of ticks) {
    all += t.ticks;
    if (lineCalls(node.callFrame.url, t.line, call)) hit += t.ticks;
  }
  return all > 0 ? hit / all : 0;
}

export function categoryOf(frame: CallFrame): string {
  for (const [name, test] of RULES) if (test(frame)) return name;
  return frame.functionName === '(program)'
    ? 'engine ((program): native code, compiler)'
    : 'other (native builtins, other libraries)';
}

export interface Summary {
  /** Time of the non-idle samples in the windows, seconds (wall clock: includes waiting for a core; blocking in Atomics.wait is idle). */
  cpuSeconds: number;
  categories: { name: string; seconds: number; share: number }[];
  top: { name: string; category: string; seconds: number; share: number }[];
}

export function summarise(profiles: CpuProfile[], windows: Window[] = [], topN = 20): Summary {
  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, { category: string; us: number }>();
  let total = 0;
  const inWindow = (t: number) => windows.length === 0 || windows.some(([a, b]) => t >= a && t <= b);
  for (const p of profiles) {
    const nodes = new Map(p.nodes.map((n) => [n.id, n]));
    const json = new Map(p.nodes.map((n) => [n.id, lineShare(n, JSON_CALL)]));
    const waiting = new Map(p.nodes.map((n) => [n.id, lineShare(n, WAIT_CALL)]));
    let t = p.startTime;
    for (let i = 0; i < p.samples.length; i++) {
      const delta = p.timeDeltas[i] ?? 0;
      t += delta;
      const frame = nodes.get(p.samples[i]!)?.callFrame;
      if (!frame || IDLE.has(frame.functionName) || !inWindow(t)) continue;
      // A sample stands for the time until the next one; the part blocked in Atomics.wait is idle.
      const us = (p.timeDeltas[i + 1] ?? delta) * (1 - (waiting.get(p.samples[i]!) ?? 0));
      if (us <= 0) continue;
      const category = categoryOf(frame);
      const jsonUs = us * (json.get(p.samples[i]!) ?? 0);
      total += us;
      byCategory.set(category, (byCategory.get(category) ?? 0) + us - jsonUs);
      if (jsonUs > 0) byCategory.set(JSON_CATEGORY, (byCategory.get(JSON_CATEGORY) ?? 0) + jsonUs);
      const where = frame.url
        ? `${frame.url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${frame.lineNumber + 1}`
        : '(native)';
      const key = `${frame.functionName || '(anonymous)'} ${where}`;
      const add = (k: string, c: string, n: number) => {
        const f = byFunction.get(k) ?? { category: c, us: 0 };
        f.us += n;
        byFunction.set(k, f);
      };
      add(key, category, us - jsonUs);
      if (jsonUs > 0) add(`JSON builtins called by ${key}`, JSON_CATEGORY, jsonUs);
    }
  }
  const share = (us: number) => (total > 0 ? us / total : 0);
  return {
    cpuSeconds: total / 1e6,
    categories: [...byCategory]
      .map(([name, us]) => ({ name, seconds: us / 1e6, share: share(us) }))
      .sort((a, b) => b.seconds - a.seconds),
    top: [...byFunction]
      .map(([name, f]) => ({ name, category: f.category, seconds: f.us / 1e6, share: share(f.us) }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, topN),
  };
}

/** Every .cpuprofile under the paths (files or directories), with the pid in its name (node --cpu-prof names them CPU.<date>.<time>.<pid>.<thread>.<seq>). */
export function readProfileFiles(paths: string[]): { file: string; pid: number | undefined; profile: CpuProfile }[] {
  const files = paths.flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p)
          .filter((f) => f.endsWith('.cpuprofile'))
          .map((f) => path.join(p, f))
      : [p],
  );
  return files.map((file) => {
    const pid = /^CPU\.\d+\.\d+\.(\d+)\./.exec(path.basename(file))?.[1];
    return { file, pid: pid ? Number(pid) : undefined, profile: JSON.parse(readFileSync(file, 'utf8')) as CpuProfile };
  });
}

export function readProfiles(paths: string[]): CpuProfile[] {
  return readProfileFiles(paths).map((f) => f.profile);
}

export function formatSummary(s: Summary, title: string): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  // Samples are taken on a wall-clock timer: on a busy machine a non-idle thread waiting for a core is counted too.
  const lines = [
    `${title}: ${s.cpuSeconds.toFixed(2)} s of non-idle samples on the JavaScript thread`,
    '',
    '| category | self time s | share |',
    '|---|---|---|',
  ];
  for (const c of s.categories) lines.push(`| ${c.name} | ${c.seconds.toFixed(2)} | ${pct(c.share)} |`);
  if (s.top.length > 0) {
    lines.push('', '| function (self time) | category | share |', '|---|---|---|');
    for (const f of s.top) lines.push(`| ${f.name} | ${f.category} | ${pct(f.share)} |`);
  }
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, skip: { type: 'string', default: '0' } },
  });
  if (positionals.length === 0)
    throw new Error('usage: profile-summary.ts <file.cpuprofile | dir>... [--top 25] [--skip 0]');
  const profiles = readProfiles(positionals);
  const skipUs = Number(values.skip) * 1e6;
  const windows: Window[] = skipUs > 0 ? profiles.map((p) => [p.startTime + skipUs, p.endTime]) : [];
  console.log(formatSummary(summarise(profiles, windows, Number(values.top)), positionals.join(', ')));
}
