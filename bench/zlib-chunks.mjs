// An experiment for bench/pipeline.ts, not a fix: preloaded into Weir's processes
// (--node-options="--import ./bench/zlib-chunks.mjs"), it gives zlib's one-shot async calls
// (gzip, gunzip) 1 MiB chunks instead of the default 16 KiB. A multi-megabyte batch then
// costs a few thread-pool round trips instead of hundreds, each of which runs a callback on
// the JavaScript thread. The measured difference is in bench/README.md (pipeline section).
import zlib from 'node:zlib';
import { syncBuiltinESMExports } from 'node:module';

for (const name of ['gzip', 'gunzip']) {
  const original = zlib[name];
  zlib[name] = function (buffer, options, callback) {
    if (typeof options === 'function') return original.call(this, buffer, { chunkSize: 1 << 20 }, options);
    return original.call(this, buffer, { chunkSize: 1 << 20, ...options }, callback);
  };
}
// Named imports (import { gzip } from 'node:zlib') see the replacement too.
syncBuiltinESMExports();
