// For the enrichment tests: a local HTTP server (node:http on 127.0.0.1, a free port), the SSRF
// guard with and without loopback, and a worker thread holding its own answer cache.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { createNetPolicy } from '../../src/platform/net/ssrf.js';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

export interface TestServer {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

export async function startTestServer(handle: (req: SeenRequest, res: ServerResponse) => void): Promise<TestServer> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      seen.push(r);
      handle(r, res);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The SSRF guard with loopback allowed, as WEIR_OUTBOUND_ALLOW_CIDRS=127.0.0.0/8 would. */
export const loopbackAllowed = createNetPolicy({ allowCidrs: ['127.0.0.0/8'] });
/** The SSRF guard as shipped: loopback refused. */
export const guarded = createNetPolicy({ allowCidrs: [] });

/** A worker thread holding its own httpCache(), answering what it has for a key. */
export function cacheWorker(): {
  ask(sourceId: string, key: string): Promise<unknown>;
  ready: Promise<void>;
  close(): Promise<number>;
} {
  const url = new URL('../../src/pipeline/enrich/http-cache.ts', import.meta.url).href;
  const code = `
    const { parentPort } = require('node:worker_threads');
    // An eval worker does not get the --import hooks: register tsx here to load the TypeScript source.
    import('tsx/esm/api').then(({ register }) => register()).then(() => import(${JSON.stringify(url)})).then(({ httpCache }) => {
      const cache = httpCache();
      parentPort.on('message', (m) => parentPort.postMessage({ answer: cache.get(m.sourceId, m.key) ?? null }));
      parentPort.postMessage('ready');
    });`;
  const worker = new Worker(code, { eval: true });
  const ready = new Promise<void>((ok, fail) => {
    worker.once('error', fail);
    worker.once('message', () => ok());
  });
  return {
    ready,
    ask: (sourceId, key) =>
      new Promise((ok) => {
        worker.once('message', (m: { answer: unknown }) => ok(m.answer));
        worker.postMessage({ sourceId, key });
      }),
    close: () => worker.terminate(),
  };
}
