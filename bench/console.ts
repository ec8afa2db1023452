// The console's first load in headless Chromium (Debian's, through playwright-core): bytes
// transferred (compressed, as sent) by kind, and the time until the screen can be used, for
// the sign-in screen with an empty cache, the dashboard right after signing in, and the
// heaviest lazy screen (the data-flow map). Runs a real `weir all` (tsx) on a fresh data
// directory with the built console (dist/web: `npm run build:console` first).
//   npx tsx bench/console.ts [--runs 7]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium, type Page } from 'playwright-core';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const RUNS = Number(values.runs);
const ROOT = path.resolve(import.meta.dirname, '..');
const WEB = path.join(ROOT, 'dist/web');
if (!existsSync(path.join(WEB, 'index.html')))
  throw new Error('dist/web is missing: run `npm run build:console` first');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

interface Load {
  ms: number;
  bytes: Record<string, number>;
}

/** Counts the encoded (as transferred) bytes of every response until `until` resolves. */
async function measure(page: Page, action: () => Promise<void>, ready: () => Promise<unknown>): Promise<Load> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  const kinds = new Map<string, string>();
  const bytes: Record<string, number> = {};
  cdp.on('Network.responseReceived', (e) => kinds.set(e.requestId, e.type));
  cdp.on('Network.loadingFinished', (e) => {
    const kind = (kinds.get(e.requestId) ?? 'Other').toLowerCase();
    bytes[kind] = (bytes[kind] ?? 0) + e.encodedDataLength;
  });
  const t0 = Date.now();
  await action();
  await ready();
  const ms = Date.now() - t0;
  await page.waitForLoadState('networkidle');
  await cdp.detach();
  return { ms, bytes };
}

const port = await freePort();
const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-bench-console-'));
const weir = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts'), 'all'], {
  env: {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    WEIR_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    WEIR_CONSOLE_DIR: WEB,
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
try {
  for (let i = 0; ; i++) {
    if (
      await fetch(`${base}/livez`)
        .then((r) => r.ok)
        .catch(() => false)
    )
      break;
    if (i > 600) throw new Error('weir did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const admin = { username: 'bench', password: 'bench password 1', email: 'bench@example.com' };
  await fetch(`${base}/api/auth/bootstrap`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(admin),
  });

  const browser = await chromium.launch({
    executablePath: process.env.WEIR_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  const rows: Record<string, Load[]> = {
    'sign-in (empty cache)': [],
    'dashboard after sign-in': [],
    'data-flow map (lazy screen)': [],
  };
  for (let run = 0; run < RUNS; run++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    rows['sign-in (empty cache)']!.push(
      await measure(
        page,
        async () => void (await page.goto(`${base}/`)),
        () => page.getByRole('button', { name: 'Sign in' }).waitFor(),
      ),
    );
    await page.getByLabel('Username').fill(admin.username);
    await page.getByLabel('Password').fill(admin.password);
    rows['dashboard after sign-in']!.push(
      await measure(
        page,
        () => page.getByRole('button', { name: 'Sign in' }).click(),
        () => page.getByRole('heading', { name: 'Last hour' }).waitFor(),
      ),
    );
    rows['data-flow map (lazy screen)']!.push(
      await measure(
        page,
        () => page.getByRole('link', { name: 'Data flow' }).click(),
        () =>
          page
            .getByRole('heading', { name: 'Data flow' })
            .waitFor()
            .then(() => page.getByTestId('flow-map').waitFor()),
      ),
    );
    await context.close();
  }
  await browser.close();

  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log(`runs: ${RUNS}, medians\n`);
  console.log('| load | time to usable | JS | CSS | document + fetch/XHR | all |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, loads] of Object.entries(rows)) {
    const of = (kind: string) => median(loads.map((l) => l.bytes[kind] ?? 0));
    const total = median(loads.map((l) => Object.values(l.bytes).reduce((a, b) => a + b, 0)));
    console.log(
      `| ${name} | ${median(loads.map((l) => l.ms))} ms | ${kb(of('script'))} | ${kb(of('stylesheet'))} | ${kb(of('document') + of('fetch') + of('xhr'))} | ${kb(total)} |`,
    );
  }
  const first = median(
    rows['sign-in (empty cache)']!.map(
      (l, i) => (l.bytes.script ?? 0) + (rows['dashboard after sign-in']![i]?.bytes.script ?? 0),
    ),
  );
  console.log(`\ncompressed JavaScript to the first screen (sign-in, then the dashboard): ${kb(first)}`);
} finally {
  weir.kill('SIGTERM');
  await new Promise((r) => weir.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
