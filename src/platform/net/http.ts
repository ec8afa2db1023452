// The one way out to an HTTP server whose address a user configured (destinations,
// enrichment sources and feeds, vendor APIs, the identity provider, S3 stores): every
// connection passes the SSRF guard (policy.ts). A name is resolved through the guard's
// lookup at connect time and the socket goes to the address it approved (no rebinding
// between check and use); a literal address never reaches a lookup, so it is checked here.
// Retry-After, backoff and the retry policy are in retry.ts, failures in errors.ts.
import { Agent as NodeHttpAgent, type AgentOptions, type ClientRequestArgs } from 'node:http';
import { Agent as NodeHttpsAgent } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { Agent, buildConnector, fetch as undiciFetch, Pool } from 'undici';
import type { NetPolicy } from './policy.js';

/** The guard's parts a connection needs; without checkAddress a literal address is judged by lookup. */
export type Guard = Pick<NetPolicy, 'lookup'> & Partial<Pick<NetPolicy, 'checkAddress'>>;

export interface GuardedOptions {
  /** Longest wait for the TCP and TLS handshakes (default 10 s). */
  connectTimeoutMs?: number;
  /** Verify the server certificate (default true). */
  rejectUnauthorized?: boolean;
  /** PEM authority for a server certificate no public authority signed. */
  ca?: string;
  /** Most sockets per origin (undici's default: unlimited). */
  connections?: number;
  /** How long an idle keep-alive socket is kept (default 4 s, under most servers' own limit). */
  keepAliveTimeoutMs?: number;
}

const CONNECT_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_MS = 4_000;

function bareHost(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Calls back with the guard's error when the literal address `host` is refused. */
function judgeLiteral(guard: Guard, host: string, done: (err: Error | null) => void): void {
  if (guard.checkAddress) {
    try {
      guard.checkAddress(host);
    } catch (err) {
      return done(err as Error);
    }
    return done(null);
  }
  guard.lookup(host, {}, (err) => done(err ?? null));
}

/** undici's connector with the guard in front. */
export function guardedConnector(guard: Guard, o: GuardedOptions = {}): buildConnector.connector {
  const base = buildConnector({
    lookup: guard.lookup,
    timeout: o.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    ...(o.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
    ...(o.ca ? { ca: o.ca } : {}),
  });
  return (opts, callback) => {
    const host = bareHost(opts.hostname);
    if (!isIP(host)) return base(opts, callback);
    judgeLiteral(guard, host, (err) => (err ? callback(err, null) : base(opts, callback)));
  };
}

function dispatcherOptions(guard: Guard, o: GuardedOptions) {
  return {
    connect: guardedConnector(guard, o),
    keepAliveTimeout: o.keepAliveTimeoutMs ?? KEEP_ALIVE_MS,
    ...(o.connections ? { connections: o.connections } : {}),
  };
}

/** A dispatcher for any origin (a client that follows configured URLs to several hosts). */
export function createGuardedAgent(guard: Guard, o: GuardedOptions = {}): Agent {
  return new Agent(dispatcherOptions(guard, o));
}

/** A keep-alive pool to one origin (a destination, a lookup source). */
export function createGuardedPool(origin: string, guard: Guard, o: GuardedOptions = {}): Pool {
  return new Pool(origin, dispatcherOptions(guard, o));
}

export type GuardedFetch = (url: string, init?: RequestInit & { timeoutMs?: number }) => Promise<Response>;

/**
 * WHATWG fetch through a guarded agent, for libraries that take a fetch (openid-client).
 * Redirects are not followed: every hop would have to be judged again.
 */
export function createGuardedFetch(
  guard: Guard,
  o: GuardedOptions & { timeoutMs?: number } = {},
): { fetch: GuardedFetch; close(): Promise<void> } {
  const agent = createGuardedAgent(guard, o);
  const defaultTimeout = o.timeoutMs ?? CONNECT_TIMEOUT_MS;
  return {
    fetch: async (url, init = {}) => {
      const { timeoutMs, ...rest } = init;
      const signal = rest.signal ?? AbortSignal.timeout(timeoutMs ?? defaultTimeout);
      return (await undiciFetch(url, {
        ...(rest as object),
        signal,
        redirect: 'manual',
        dispatcher: agent,
      } as never)) as unknown as Response;
    },
    close: () => agent.close(),
  };
}

/**
 * node:http and node:https agents behind the guard, for SDKs built on them (the AWS SDK's
 * NodeHttpHandler): names go through the guard's lookup, literal addresses are judged
 * before the socket is made.
 */
export function createGuardedNodeAgents(
  guard: Guard,
  o: { maxSockets?: number; ca?: string; keepAlive?: boolean } = {},
): { httpAgent: NodeHttpAgent; httpsAgent: NodeHttpsAgent } {
  const options: AgentOptions = { keepAlive: o.keepAlive ?? true, maxSockets: o.maxSockets ?? 64 };
  type Done = (err: Error | null, stream: Duplex) => void;
  const guarded = (
    args: ClientRequestArgs,
    done: Done | undefined,
    make: (args: ClientRequestArgs, done?: Done) => Duplex | null | undefined,
  ) => {
    const host = bareHost(args.host ?? args.hostname ?? '');
    if (!isIP(host) || !done) return make({ ...args, lookup: guard.lookup }, done);
    judgeLiteral(guard, host, (err) => {
      if (err) return done(err, undefined as unknown as Duplex);
      const socket = make({ ...args, lookup: guard.lookup }, done);
      if (socket) done(null, socket);
    });
    return undefined;
  };
  class GuardedHttpAgent extends NodeHttpAgent {
    override createConnection(args: ClientRequestArgs, done?: Done) {
      return guarded(args, done, (a, d) => super.createConnection(a, d));
    }
  }
  class GuardedHttpsAgent extends NodeHttpsAgent {
    override createConnection(args: ClientRequestArgs, done?: Done) {
      return guarded(args, done, (a, d) => super.createConnection(a, d));
    }
  }
  return {
    httpAgent: new GuardedHttpAgent({ ...options, lookup: guard.lookup } as AgentOptions),
    httpsAgent: new GuardedHttpsAgent({ ...options, lookup: guard.lookup, ...(o.ca ? { ca: o.ca } : {}) }),
  };
}

/** The answer went past the reader's byte cap; the rest was not read. */
export class BodyTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the answer is larger than the limit of ${maxBytes} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/**
 * Reads a response body up to maxBytes. `overflow: 'fail'` stops the download at the cap
 * (BodyTooLargeError, also when Content-Length announces more); `'cut'` keeps the first
 * maxBytes and drains the rest so the keep-alive socket can be reused.
 */
export async function readBody(
  body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown },
  o: { maxBytes: number; overflow: 'fail' | 'cut'; contentLength?: string | string[] },
): Promise<{ bytes: Buffer; size: number }> {
  const declared = Number(Array.isArray(o.contentLength) ? o.contentLength[0] : o.contentLength);
  if (o.overflow === 'fail' && o.contentLength !== undefined && declared > o.maxBytes) {
    body.destroy();
    throw new BodyTooLargeError(o.maxBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (o.overflow === 'fail' && size + chunk.length > o.maxBytes) {
      body.destroy();
      throw new BodyTooLargeError(o.maxBytes);
    }
    if (size < o.maxBytes) chunks.push(chunk);
    size += chunk.length;
  }
  const bytes = Buffer.concat(chunks);
  return { bytes: bytes.length > o.maxBytes ? bytes.subarray(0, o.maxBytes) : bytes, size };
}
