// The syslog sink's connections. TCP and TLS: one long-lived stream, opened on first use and
// again after any error. UDP: one connected datagram socket. Addresses come from the SSRF
// guard's resolve(), so literal IPs and names are checked alike, at every (re)connect.
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import { transportError } from '../http-common.js';
import type { Redactor } from '../../../core/redaction.js';
import { DeliveryError } from '../types.js';
import type { NetPolicy } from '../../../platform/net/policy.js';

export interface Endpoint {
  host: string;
  port: number;
  protocol: 'tcp' | 'tls' | 'udp';
  tls?: { ca?: string; rejectUnauthorized: boolean; servername?: string; cert?: string; key?: string };
}

export interface Transport {
  /** Resolves once every frame was handed to the kernel (write callbacks fired). */
  write(frames: Buffer[], signal: AbortSignal): Promise<void>;
  /** Opens a fresh connection (handshake included for TLS) and closes it; returns what was checked. */
  probe(signal: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

function aborted(): DeliveryError {
  return new DeliveryError('timeout', 'syslog delivery timed out');
}

/** Network failures in words that never carry a credential (the client key is the only secret). */
function failure(err: unknown, signal: AbortSignal, redact: Redactor): DeliveryError {
  if (signal.aborted) return aborted();
  const e = transportError(err, signal);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const detail = e.kind === 'connection' && code ? `syslog connection failed (${code})` : e.message;
  return new DeliveryError(e.kind, redact(detail), { cause: err, retryable: e.retryable });
}

/** Runs `start` until it settles or the signal aborts; `cancel` undoes a start that lost the race. */
function untilAborted<T>(
  signal: AbortSignal,
  start: (done: (err: unknown, value?: T) => void) => void,
  cancel: () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(aborted());
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      cancel();
      reject(aborted());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    start((err, value) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(value as T);
    });
  });
}

export function createStreamTransport(endpoint: Endpoint, netPolicy: NetPolicy, redact: Redactor): Transport {
  let socket: net.Socket | null = null;
  let connecting: Promise<net.Socket> | null = null;

  async function open(signal: AbortSignal): Promise<net.Socket> {
    const { address } = await netPolicy.resolve(endpoint.host);
    let s: net.Socket | undefined;
    return untilAborted<net.Socket>(
      signal,
      (done) => {
        const ready = () => {
          s!.off('error', onError);
          done(null, s);
        };
        const onError = (err: Error) => done(err);
        if (endpoint.protocol === 'tls') {
          const t = endpoint.tls ?? { rejectUnauthorized: true };
          // Certificate names are checked against servername (the configured host name), the
          // connection goes to the address the guard approved.
          const servername = t.servername ?? (net.isIP(endpoint.host) ? undefined : endpoint.host);
          s = tls.connect(
            {
              host: address,
              port: endpoint.port,
              servername,
              ca: t.ca,
              rejectUnauthorized: t.rejectUnauthorized,
              cert: t.cert,
              key: t.key,
            },
            ready,
          );
        } else {
          s = net.connect({ host: address, port: endpoint.port }, ready);
        }
        s.once('error', onError);
      },
      () => s?.destroy(),
    );
  }

  function forget(s: net.Socket): void {
    if (socket === s) socket = null;
    s.destroy();
  }

  async function connected(signal: AbortSignal): Promise<net.Socket> {
    if (socket && !socket.destroyed && socket.writable) return socket;
    connecting ??= open(signal).finally(() => {
      connecting = null;
    });
    const s = await connecting;
    if (socket !== s) {
      socket = s;
      s.setKeepAlive(true, 30_000);
      s.setNoDelay(true);
      // Syslog receivers never answer; anything they send (TLS alerts aside) is ignored. A FIN
      // or an error means the next batch needs a new connection.
      s.on('data', () => undefined);
      s.on('end', () => forget(s));
      s.on('error', () => forget(s));
      s.on('close', () => forget(s));
    }
    return s;
  }

  return {
    async write(frames, signal) {
      let s: net.Socket;
      try {
        s = await connected(signal);
      } catch (err) {
        throw failure(err, signal, redact);
      }
      const body = frames.length === 1 ? (frames[0] as Buffer) : Buffer.concat(frames);
      try {
        await untilAborted<void>(
          signal,
          (done) => {
            const onClose = () =>
              done(new DeliveryError('connection', 'syslog connection closed before the batch was written'));
            s.once('close', onClose);
            s.write(body, (err) => {
              s.off('close', onClose);
              done(err ?? null);
            });
          },
          // A half-written frame must not be followed by the next batch on the same stream.
          () => forget(s),
        );
      } catch (err) {
        forget(s);
        throw err instanceof DeliveryError ? err : failure(err, signal, redact);
      }
    },
    async probe(signal) {
      try {
        const s = await open(signal);
        const what =
          s instanceof tls.TLSSocket
            ? `TLS handshake with ${endpoint.host}:${endpoint.port} completed (${s.authorized ? 'certificate verified' : 'certificate not verified'})`
            : `TCP connection to ${endpoint.host}:${endpoint.port} established`;
        s.destroy();
        return what;
      } catch (err) {
        throw err instanceof DeliveryError ? err : failure(err, signal, redact);
      }
    },
    async close() {
      const s = socket;
      socket = null;
      if (!s || s.destroyed) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          s.destroy();
          resolve();
        }, 1000);
        s.end(() => {
          clearTimeout(timer);
          s.destroy();
          resolve();
        });
      });
    },
  };
}

export function createDatagramTransport(endpoint: Endpoint, netPolicy: NetPolicy, redact: Redactor): Transport {
  let socket: dgram.Socket | null = null;
  let opening: Promise<dgram.Socket> | null = null;

  async function open(signal: AbortSignal): Promise<dgram.Socket> {
    const { address, family } = await netPolicy.resolve(endpoint.host);
    const s = dgram.createSocket(family === 6 ? 'udp6' : 'udp4');
    return untilAborted<dgram.Socket>(
      signal,
      (done) => {
        const onError = (err: Error) => done(err);
        s.once('error', onError);
        s.connect(endpoint.port, address, () => {
          s.off('error', onError);
          done(null, s);
        });
      },
      () => s.close(),
    ).catch((err: unknown) => {
      try {
        s.close();
      } catch {
        // already closed
      }
      throw err;
    });
  }

  async function connected(signal: AbortSignal): Promise<dgram.Socket> {
    if (socket) return socket;
    opening ??= open(signal).finally(() => {
      opening = null;
    });
    const s = await opening;
    if (socket !== s) {
      socket = s;
      // ICMP port unreachable surfaces here on a connected socket: drop it, the next send reconnects.
      s.on('error', () => {
        if (socket === s) socket = null;
        s.close();
      });
    }
    return s;
  }

  return {
    async write(frames, signal) {
      try {
        const s = await connected(signal);
        await untilAborted<void>(
          signal,
          (done) => {
            let left = frames.length;
            let failed = false;
            if (left === 0) return done(null);
            for (const frame of frames) {
              s.send(frame, (err) => {
                if (failed) return;
                if (err) {
                  failed = true;
                  return done(err);
                }
                if (--left === 0) done(null);
              });
            }
          },
          () => undefined,
        );
      } catch (err) {
        throw err instanceof DeliveryError ? err : failure(err, signal, redact);
      }
    },
    async probe(signal) {
      try {
        const s = await open(signal);
        const remote = s.remoteAddress();
        s.close();
        return `UDP socket connected to ${remote.address}:${remote.port} (UDP has no handshake: the receiver itself is not checked)`;
      } catch (err) {
        throw err instanceof DeliveryError ? err : failure(err, signal, redact);
      }
    },
    async close() {
      const s = socket;
      socket = null;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}
