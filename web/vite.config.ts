// The console's build: web/ -> dist/web, served by the api role at / (src/platform/http/console.ts).
// Screens are lazy chunks; the graph (elkjs, @xyflow/react) and chart (uPlot) libraries
// load only with the screens that use them.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

// Brotli and gzip variants beside each text file, served as they are (@fastify/static
// preCompressed): the browser gets compressed bytes and the server spends no CPU on it.
function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'weir-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      const walk = (dir: string): string[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)],
        );
      for (const file of walk(outDir).filter((f) => /\.(js|css|html|svg|json)$/.test(f))) {
        const body = readFileSync(file);
        if (body.length < 1024) continue;
        writeFileSync(`${file}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
        writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  root,
  base: '/',
  plugins: [react(), precompress()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or data: modules: the console's CSP allows 'self' only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    // The pre-compression step is slow on purpose (Brotli 11, once per build): no timing warning.
    rolldownOptions: { checks: { bundlerTimings: false } },
    // elkjs alone is about 1.4 MB minified; it loads only with the data-flow map.
    chunkSizeWarningLimit: 1800,
  },
  server: {
    // `npx vite --config web/vite.config.ts` during development: the API of a local `npm run dev`.
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
});
