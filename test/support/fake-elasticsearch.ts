// An Elasticsearch/OpenSearch `_bulk` endpoint that behaves like the real one (from the
// public REST API documentation): basic or ApiKey authentication with security_exception
// answers, Content-Type checks, NDJSON action/source pairs terminated by a newline, documents
// stored by index and _id, 409 version_conflict_engine_exception on a duplicate create, the
// real response shape, filter_path, gzip bodies, and injected failures:
// - a document with a field `force_mapping_error` fails with document_parsing_exception (400);
// - a document with `force_item_status: 429 | 503` fails that item only;
// - failNext(status) makes whole requests fail.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { TEST_TLS } from './webhook-receiver.js';

export interface StoredDoc {
  source: Record<string, unknown>;
  version: number;
  pipeline?: string;
}

export interface FakeEsOptions {
  /** Basic users (name → password). With neither users nor apiKeys, security is off. */
  users?: Record<string, string>;
  /** API keys as {id, key}; clients send ApiKey base64(id:key). */
  apiKeys?: { id: string; key: string }[];
  flavor?: 'elasticsearch' | 'opensearch';
  tls?: boolean;
}

export interface FakeEs {
  url: string;
  /** index → _id → document. */
  indices: Map<string, Map<string, StoredDoc>>;
  /** Composable index templates put with PUT /_index_template/{name}, by name. */
  templates: Map<string, Record<string, unknown>>;
  requests: { method: string; path: string; headers: IncomingMessage['headers']; status: number; body: string }[];
  /** The next n requests to _bulk answer this status with an Elasticsearch error body. */
  failNext(status: number, n?: number, headers?: Record<string, string>): void;
  docs(index: string): StoredDoc[];
  close(): Promise<void>;
}

const ACTIONS = new Set(['index', 'create', 'update', 'delete']);

function esError(
  type: string,
  reason: string,
  status: number,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { error: { root_cause: [{ type, reason, ...extra }], type, reason, ...extra }, status };
}

export function invalidIndexName(name: string): string | null {
  if (name === '' || name === '.' || name === '..') return 'must not be empty, "." or ".."';
  if (name !== name.toLowerCase()) return 'must be lowercase';
  if (/[\\/*?"<>| ,#:]/.test(name)) return 'must not contain \\, /, *, ?, ", <, >, |, space, comma, # or :';
  if (/^[-_+]/.test(name)) return 'must not start with -, _ or +';
  if (Buffer.byteLength(name) > 255) return 'is longer than 255 bytes';
  return null;
}

/** filter_path with names and * wildcards, comma separated, as Elasticsearch applies it. */
export function filterPath(value: unknown, patterns: string[][]): unknown {
  if (patterns.some((p) => p.length === 0)) return value;
  if (Array.isArray(value)) return value.map((v) => filterPath(v, patterns));
  if (!value || typeof value !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const rest = patterns.filter((p) => p[0] === '*' || p[0] === k).map((p) => p.slice(1));
    if (rest.length === 0) continue;
    const kept = filterPath(v, rest);
    if (kept !== undefined) out[k] = kept;
  }
  return Object.keys(out).length ? out : undefined;
}

export async function startFakeElasticsearch(options: FakeEsOptions = {}): Promise<FakeEs> {
  const indices = new Map<string, Map<string, StoredDoc>>();
  const templates = new Map<string, Record<string, unknown>>();
  const requests: FakeEs['requests'] = [];
  const sockets = new Set<Socket>();
  let failures: { status: number; n: number; headers: Record<string, string> } | null = null;
  let seq = 0;
  const secured = Boolean(options.users || options.apiKeys);

  function send(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
    rawBody = '',
  ): void {
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, status, body: rawBody });
    res.writeHead(status, {
      'content-type': 'application/json',
      ...(options.flavor === 'opensearch' ? {} : { 'x-elastic-product': 'Elasticsearch' }),
      ...headers,
    });
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
  }

  /** null when authenticated, else the 401 reason. */
  function authFailure(req: IncomingMessage, path: string): string | null {
    if (!secured) return null;
    const auth = req.headers.authorization ?? '';
    const [scheme, value = ''] = auth.split(' ', 2);
    if (scheme === 'Basic') {
      const [user, ...pw] = Buffer.from(value, 'base64').toString('utf8').split(':');
      if (user && options.users?.[user] !== undefined && options.users[user] === pw.join(':')) return null;
      return `unable to authenticate user [${user ?? ''}] for REST request [${path}]`;
    }
    if (scheme === 'ApiKey') {
      const [id, key] = Buffer.from(value, 'base64').toString('utf8').split(':');
      if (options.apiKeys?.some((k) => k.id === id && k.key === key)) return null;
      return `unable to authenticate with provided credentials and anonymous access is not allowed for this request`;
    }
    return `missing authentication credentials for REST request [${path}]`;
  }

  function bulk(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, raw: Buffer): void {
    const ctype = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (ctype !== 'application/x-ndjson' && ctype !== 'application/json') {
      return send(req, res, 406, {
        error: `Content-Type header [${req.headers['content-type'] ?? ''}] is not supported`,
        status: 406,
      });
    }
    if (failures && failures.n > 0) {
      const { status, headers } = failures;
      if (--failures.n === 0) failures = null;
      const type =
        status === 429
          ? 'es_rejected_execution_exception'
          : status === 413
            ? 'content_too_long_exception'
            : 'cluster_block_exception';
      return send(req, res, status, esError(type, `injected failure ${status}`, status), headers);
    }
    let text: string;
    try {
      text =
        (req.headers['content-encoding'] ?? '').toLowerCase() === 'gzip'
          ? gunzipSync(raw).toString('utf8')
          : raw.toString('utf8');
    } catch {
      return send(req, res, 400, esError('parse_exception', 'failed to decompress the request body', 400));
    }
    if (text.length > 0 && !text.endsWith('\n')) {
      return send(
        req,
        res,
        400,
        esError('illegal_argument_exception', 'The bulk request must be terminated by a newline [\\n]', 400),
        {},
        text,
      );
    }
    const lines = text.split('\n');
    lines.pop();
    const pathIndex = /^\/([^/_][^/]*)\/_bulk$/.exec(path)?.[1];
    const pipeline = query.get('pipeline') ?? undefined;
    const items: Record<string, unknown>[] = [];
    const writes: (() => void)[] = [];
    const pending = new Map<string, StoredDoc>(); // documents created earlier in this same request
    let errors = false;
    for (let i = 0; i < lines.length; i++) {
      let action: Record<string, Record<string, unknown>>;
      try {
        action = JSON.parse(lines[i]!) as typeof action;
      } catch {
        return send(
          req,
          res,
          400,
          esError('x_content_parse_exception', `[1:1] Malformed action/metadata line [${i + 1}]`, 400),
          {},
          text,
        );
      }
      const keys = Object.keys(action ?? {});
      if (keys.length !== 1 || !ACTIONS.has(keys[0]!)) {
        return send(
          req,
          res,
          400,
          esError(
            'illegal_argument_exception',
            `Malformed action/metadata line [${i + 1}], expected one of [create, delete, index, update] but found [${keys[0] ?? ''}]`,
            400,
          ),
          {},
          text,
        );
      }
      const op = keys[0]!;
      const meta = action[op] ?? {};
      const index = (meta._index as string | undefined) ?? pathIndex;
      if (!index)
        return send(
          req,
          res,
          400,
          esError('action_request_validation_exception', 'Validation Failed: 1: index is missing;', 400),
          {},
          text,
        );
      let source: Record<string, unknown> | undefined;
      if (op !== 'delete') {
        const srcLine = lines[++i];
        try {
          source = JSON.parse(srcLine ?? '') as Record<string, unknown>;
          if (!source || typeof source !== 'object' || Array.isArray(source)) throw new Error('not an object');
        } catch {
          return send(
            req,
            res,
            400,
            esError('x_content_parse_exception', `[1:1] failed to parse the source of line [${i + 1}]`, 400),
            {},
            text,
          );
        }
      }
      const id = (meta._id as string | undefined) ?? `gen-${++seq}`;
      const key = `${index}\u0000${id}`;
      const store = indices.get(index);
      const existing = pending.get(key) ?? store?.get(id);
      const item = (status: number, extra: Record<string, unknown>) => {
        if (status >= 300) errors = true;
        items.push({ [op]: { _index: index, _id: id, ...extra, status } });
      };
      const badName = invalidIndexName(index);
      const forced = source?.force_item_status;
      if (badName)
        item(400, {
          error: { type: 'invalid_index_name_exception', reason: `Invalid index name [${index}], ${badName}`, index },
        });
      else if (source && 'force_mapping_error' in source) {
        item(400, {
          error: {
            type: 'document_parsing_exception',
            reason: `[1:2] failed to parse field [force_mapping_error] of type [long] in document with id '${id}'. Preview of field's value: '${String(source.force_mapping_error)}'`,
          },
        });
      } else if (forced === 429)
        item(429, {
          error: { type: 'es_rejected_execution_exception', reason: 'rejected execution of coordinating operation' },
        });
      else if (forced === 503)
        item(503, {
          error: { type: 'unavailable_shards_exception', reason: `[${index}][0] primary shard is not active` },
        });
      else if (op === 'create' && existing) {
        item(409, {
          error: {
            type: 'version_conflict_engine_exception',
            reason: `[${id}]: version conflict, document already exists (current version [${existing.version}])`,
            index,
            shard: '0',
          },
        });
      } else if (op === 'index' || op === 'create') {
        const doc: StoredDoc = { source: source!, version: (existing?.version ?? 0) + 1, pipeline };
        pending.set(key, doc);
        writes.push(() => {
          if (!indices.has(index)) indices.set(index, new Map());
          indices.get(index)!.set(id, doc);
        });
        item(existing ? 200 : 201, {
          _version: doc.version,
          result: existing ? 'updated' : 'created',
          _shards: { total: 2, successful: 1, failed: 0 },
          _seq_no: seq++,
          _primary_term: 1,
        });
      } else
        item(400, {
          error: { type: 'illegal_argument_exception', reason: `the fake supports index and create, not ${op}` },
        });
    }
    if (items.length === 0)
      return send(
        req,
        res,
        400,
        esError('action_request_validation_exception', 'Validation Failed: 1: no requests added;', 400),
        {},
        text,
      );
    for (const w of writes) w();
    let body: unknown = { took: 3, errors, items };
    const fp = query.get('filter_path');
    if (fp)
      body =
        filterPath(
          body,
          fp.split(',').map((p) => p.trim().split('.')),
        ) ?? {};
    send(req, res, 200, body, {}, text);
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://x');
      const path = u.pathname.replace(/\/+$/, '') || '/';
      const denied = authFailure(req, path);
      if (denied) {
        return send(
          req,
          res,
          401,
          esError('security_exception', denied, 401, {
            header: { 'WWW-Authenticate': ['Basic realm="security" charset="UTF-8"', 'ApiKey'] },
          }),
          {
            'www-authenticate': 'Basic realm="security" charset="UTF-8"',
          },
        );
      }
      if ((req.method === 'GET' || req.method === 'HEAD') && path === '/') {
        const os = options.flavor === 'opensearch';
        return send(req, res, 200, {
          name: 'node-1',
          cluster_name: 'weir-test',
          cluster_uuid: 'nVJ3qDf6QcGmM6f7Vg3u0Q',
          version: os
            ? { distribution: 'opensearch', number: '2.15.0' }
            : { number: '8.15.0', build_flavor: 'default' },
          tagline: os ? 'The OpenSearch Project: https://opensearch.org/' : 'You Know, for Search',
        });
      }
      const tpl = /^\/_index_template\/([^/]+)$/.exec(path);
      if (tpl && req.method === 'PUT') {
        // As Elasticsearch validates a composable template: index_patterns and an object template.
        let body: Record<string, unknown> | undefined;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        } catch {
          body = undefined;
        }
        if (!body || !Array.isArray(body.index_patterns) || typeof body.template !== 'object')
          return send(req, res, 400, esError('action_request_validation_exception', 'index patterns are missing', 400));
        templates.set(decodeURIComponent(tpl[1]!), body);
        return send(req, res, 200, { acknowledged: true });
      }
      if ((req.method === 'POST' || req.method === 'PUT') && /^(\/[^/]+)?\/_bulk$/.test(path))
        return bulk(req, res, path, u.searchParams, Buffer.concat(chunks));
      send(
        req,
        res,
        404,
        esError('resource_not_found_exception', `no handler found for uri [${path}] and method [${req.method}]`, 404),
      );
    });
  }

  const server: Server = options.tls
    ? createHttpsServer({ cert: TEST_TLS.cert, key: TEST_TLS.key }, handle)
    : createHttpServer(handle);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    indices,
    templates,
    requests,
    failNext(status, n = 1, headers = {}) {
      failures = { status, n, headers };
    },
    docs(index) {
      return [...(indices.get(index)?.values() ?? [])];
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
