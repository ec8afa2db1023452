// Receivers that refuse every request and echo its credentials back in the error, the way
// misconfigured proxies, debug endpoints and some SIEM front ends do: each header the sink
// sent, whole and cut at 35 characters, a Basic value decoded, URL-encoded and JSON-escaped
// (slashes too), plus the query string. Redaction tests read what Weir kept of that answer.
//   - startEchoReceiver: HTTP. JSON error bodies shaped so the http, elasticsearch and
//     splunk_hec sinks quote them (error.reason, text + code), or an S3 XML <Error>.
//   - startEchoPostgres: a PostgreSQL server that asks for a cleartext password and refuses
//     it, quoting it in the error message.
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';

/** Headers the sinks always send that carry nothing secret. */
const PLAIN = new Set([
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'accept',
  'accept-encoding',
  'user-agent',
  'connection',
  'x-amz-content-sha256',
  'x-amz-date',
  'x-amz-user-agent',
  'amz-sdk-invocation-id',
  'amz-sdk-request',
  'expect',
]);

/** Every echo of a header value a careless server could produce. */
export function echoesOf(name: string, value: string): string[] {
  const out = [
    `${name}: ${value}`,
    `${name}: ${value.slice(0, 35)}`,
    `${name}=${encodeURIComponent(value).slice(0, 48)}`,
    `${name} ${JSON.stringify(value).replace(/\//g, '\\/')}`,
  ];
  const scheme = /^(Basic|ApiKey)\s+(\S+)$/i.exec(value);
  if (scheme) {
    const decoded = Buffer.from(scheme[2]!, 'base64').toString('utf8');
    out.push(`decoded ${decoded}`, `decoded ${decoded.slice(0, 34)}`);
  }
  return out;
}

export function echoText(headers: IncomingHttpHeaders, url: string, extra: readonly string[]): string {
  const parts: string[] = [];
  for (const [name, raw] of Object.entries(headers)) {
    if (PLAIN.has(name) || raw === undefined) continue;
    for (const value of Array.isArray(raw) ? raw : [raw]) parts.push(...echoesOf(name, value));
  }
  const query = url.indexOf('?');
  if (query >= 0) parts.push(`query ${url.slice(query + 1)}`);
  return [...parts, ...extra].join(' | ');
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export interface EchoReceiver {
  url: string;
  /** Every echo sent back, in order. */
  echoes: string[];
  close(): Promise<void>;
}

export interface EchoOptions {
  /** json (http, elasticsearch, splunk_hec) or s3 (XML <Error>). */
  format: 'json' | 's3';
  status?: number;
  /** More text the server "knows" and quotes (a proxy that logged a secret). */
  extra?: readonly string[];
}

export async function startEchoReceiver(options: EchoOptions): Promise<EchoReceiver> {
  const echoes: string[] = [];
  const status = options.status ?? (options.format === 's3' ? 403 : 401);
  const server: Server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      // HEC's unauthenticated health check must pass for its test to reach the token check.
      if (req.url?.endsWith('/services/collector/health/1.0')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"HEC is healthy","code":17}');
        return;
      }
      const echo = echoText(req.headers, req.url ?? '', options.extra ?? []);
      echoes.push(echo);
      if (options.format === 's3') {
        res.writeHead(status, { 'content-type': 'application/xml' });
        res.end(
          req.method === 'HEAD'
            ? undefined
            : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>${xml(echo)}</Message><RequestId>1</RequestId></Error>`,
        );
        return;
      }
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { type: 'security_exception', reason: echo }, text: echo, code: 3, message: echo }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    echoes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface EchoPostgres {
  port: number;
  /** Passwords received, in order. */
  passwords: string[];
  close(): Promise<void>;
}

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function errorResponse(code: string, text: string): Buffer {
  const field = (t: string, v: string) =>
    Buffer.concat([Buffer.from(t, 'latin1'), Buffer.from(v, 'utf8'), Buffer.from([0])]);
  return message(
    'E',
    Buffer.concat([field('S', 'FATAL'), field('V', 'FATAL'), field('C', code), field('M', text), Buffer.from([0])]),
  );
}

/** Speaks just enough of the protocol (no TLS: use ssl "disable") to get a password and refuse it. */
export async function startEchoPostgres(): Promise<EchoPostgres> {
  const passwords: string[] = [];
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    let started = false;
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!started) {
        if (buffer.length < 4 || buffer.length < buffer.readInt32BE(0)) return;
        buffer = buffer.subarray(buffer.readInt32BE(0));
        started = true;
        socket.write(message('R', Buffer.from([0, 0, 0, 3]))); // AuthenticationCleartextPassword
      }
      if (buffer.length < 5 || buffer.length < 1 + buffer.readInt32BE(1)) return;
      const password = buffer.subarray(5, 1 + buffer.readInt32BE(1) - 1).toString('utf8');
      passwords.push(password);
      const said = `password authentication failed: got "${password}" (${password.slice(0, 20)}...) ${Buffer.from(password).toString('base64')} ${encodeURIComponent(password)}`;
      socket.end(errorResponse('28P01', said));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    passwords,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
