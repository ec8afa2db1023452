// A local OTLP/HTTP (JSON) receiver on a real socket, for tests of exported telemetry.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// It records every POST body by path.
export interface Receiver {
  url: string;
  posts: { path: string; body: OtlpBody }[];
  close(): Promise<void>;
}
export type KeyValue = { key: string; value: { stringValue?: string; intValue?: string | number } };
export type DataPoint = { attributes: KeyValue[]; asInt?: string | number; asDouble?: number };
export type Metric = { name: string; gauge?: { dataPoints: DataPoint[] }; sum?: { dataPoints: DataPoint[] } };
export type OtlpBody = {
  resourceMetrics?: { resource: { attributes: KeyValue[] }; scopeMetrics: { metrics: Metric[] }[] }[];
  resourceSpans?: { scopeSpans: { spans: { name: string; traceId: string; spanId: string }[] }[] }[];
};

export async function startReceiver(): Promise<Receiver> {
  const posts: Receiver['posts'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString()) as OtlpBody });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections(); // the exporter keeps its connections alive
        server.close(() => resolve());
      }),
  };
}

export const attrs = (list: KeyValue[]) =>
  Object.fromEntries(list.map((kv) => [kv.key, kv.value.stringValue ?? kv.value.intValue]));
export const value = (dp: DataPoint) => Number(dp.asInt ?? dp.asDouble);
export const metricsIn = (r: Receiver) =>
  r.posts
    .filter((p) => p.path === '/v1/metrics')
    .flatMap((p) => p.body.resourceMetrics ?? [])
    .flatMap((rm) =>
      rm.scopeMetrics.flatMap((sm) =>
        sm.metrics.map((metric) => ({ resource: attrs(rm.resource.attributes), metric })),
      ),
    );
export const spansIn = (r: Receiver) =>
  r.posts
    .filter((p) => p.path === '/v1/traces')
    .flatMap((p) => p.body.resourceSpans ?? [])
    .flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
