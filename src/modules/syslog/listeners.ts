// The syslog listeners: sockets in, text events out through the intake (intake.ts).
//   udp   one message per datagram; dropped (and counted) when the intake is overloaded
//   tcp   RFC 6587 frames (syslog-frames.ts); the connection stops being read while more than
//         256 KiB it sent wait for durable acceptance, so a slow pipeline slows the sender
//         instead of filling memory
//   tls   the same over TLS (a client certificate required when tls.client_ca is set)
//   relp  rsyslog's RELP: each message answered `200 OK` only once durably accepted
// What a kill -9 can lose on each is in docs/decisions/0040-syslog-receiver.md.
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import net from 'node:net';
import tls from 'node:tls';
import {
  RELP_SERVER_CLOSE,
  RelpDecoder,
  relpOpenResponse,
  relpResponse,
  type RelpFrame,
} from '../../pipeline/sources/relp.js';
import { SyslogFrameDecoder } from '../../pipeline/sources/syslog-frames.js';
import { MAX_TEXT_LINE_BYTES } from '../../pipeline/sources/text.js';
import type { ListenerSpec } from './config.js';
import type { Intake } from './intake.js';

export interface ListenerCounters {
  /** Messages received. */
  received: number;
  /** Messages durably accepted. */
  accepted: number;
  /** UDP datagrams dropped because the pipeline was saturated or the intake full. */
  dropped: number;
  /** UDP datagrams the kernel dropped before Weir read them (its receive buffer was full): the socket's own drop counter. */
  dropped_kernel: number;
  /** Messages refused: longer than the limit, or a broken frame (the connection is closed). */
  refused: number;
  connections: number;
  /** When the last message was received (epoch ms), 0 before the first. */
  last_message_ms: number;
}

export interface RunningListener {
  spec: ListenerSpec;
  counters: ListenerCounters;
  /** The socket's receive buffer as the kernel set it (UDP), null otherwise. */
  receiveBufferBytes: number | null;
  /** Reads what only the kernel counts (UDP drops) into the counters. */
  sample(): void;
  /** Stops accepting connections, lets what was read be accepted, closes connections. */
  close(): Promise<void>;
}

/** RELP messages a connection may have unanswered before it is no longer read. */
const RELP_WINDOW = 1024;
/**
 * Bytes a TCP or TLS connection may have read and not yet durably accepted before it is no
 * longer read: enough to keep batches full, small enough to bound what a kill -9 loses of
 * what was read (docs/decisions/0040-syslog-receiver.md).
 */
export const TCP_UNACCEPTED_BYTES = 256 * 1024;

/** A peer address as people write it (IPv4-mapped IPv6 addresses as IPv4). */
function peerIp(address: string | undefined): string {
  if (!address) return '';
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return isIPv4(v4) ? v4 : address;
}

/** The queued text of one syslog message: the line, and the sender's address. */
function eventText(message: Buffer, peer: string): string {
  // Senders are not all UTF-8 and NUL cannot be stored: both become U+FFFD rather than a lost message.
  let text = message.toString('utf8');
  if (text.includes('\u0000')) text = text.replaceAll('\u0000', '\ufffd');
  return JSON.stringify({ message: text, peer_ip: peer });
}

function stripTrailer(msg: Buffer): Buffer {
  let end = msg.length;
  while (end > 0 && (msg[end - 1] === 0x0a || msg[end - 1] === 0x0d || msg[end - 1] === 0x00)) end--;
  return msg.subarray(0, end);
}

/** Groups messages by the stream their route names and hands each group to the intake. */
function offer(spec: ListenerSpec, intake: Intake, messages: Buffer[], peer: string): Promise<void> {
  const byStream = new Map<string, { texts: string[]; bytes: number }>();
  for (const raw of messages) {
    // Some senders end even an octet-counted frame with LF (rsyslog's RFC 5424 templates).
    const m = stripTrailer(raw);
    if (m.length === 0) continue;
    const stream = spec.route(m.toString('utf8'), peer);
    let g = byStream.get(stream);
    if (!g) byStream.set(stream, (g = { texts: [], bytes: 0 }));
    g.texts.push(eventText(m, peer));
    g.bytes += m.length;
  }
  const target = { integrationId: spec.integrationId, organizationId: spec.organizationId, platform: 'syslog' };
  return Promise.all([...byStream].map(([stream, g]) => intake.add({ ...target, stream }, g.texts, g.bytes))).then(
    () => undefined,
  );
}

/**
 * The kernel's drop counter of the UDP socket bound to the port (Linux: the last column of
 * /proc/net/udp and udp6); null where it cannot be read.
 */
export function udpKernelDrops(port: number, family: 'udp4' | 'udp6'): number | null {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let table: string;
  try {
    table = readFileSync(family === 'udp6' ? '/proc/net/udp6' : '/proc/net/udp', 'utf8');
  } catch {
    return null;
  }
  for (const line of table.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 13 || !cols[1]!.endsWith(`:${hexPort}`)) continue;
    const drops = Number(cols[cols.length - 1]);
    return Number.isFinite(drops) ? drops : null;
  }
  return null;
}

export interface ListenerOptions {
  /** SO_RCVBUF asked for UDP sockets; the kernel caps it (net.core.rmem_max) and doubles it. */
  udpReceiveBufferBytes?: number;
}

function listenUdp(
  spec: ListenerSpec,
  host: string,
  intake: Intake,
  counters: ListenerCounters,
  onError: (err: unknown) => void,
  options: ListenerOptions,
): Promise<RunningListener> {
  const family = host.includes(':') ? 'udp6' : 'udp4';
  const socket = dgram.createSocket({
    type: family,
    reuseAddr: false,
    ...(options.udpReceiveBufferBytes ? { recvBufferSize: options.udpReceiveBufferBytes } : {}),
  });
  const pending = new Set<Promise<void>>();
  socket.on('message', (msg, rinfo) => {
    counters.received++;
    counters.last_message_ms = Date.now();
    if (msg.length > MAX_TEXT_LINE_BYTES) {
      counters.refused++;
      return;
    }
    if (intake.overloaded(spec.integrationId)) {
      counters.dropped++;
      return;
    }
    const p = offer(spec, intake, [msg], peerIp(rinfo.address)).then(
      () => void counters.accepted++,
      () => void counters.dropped++,
    );
    pending.add(p);
    void p.finally(() => pending.delete(p));
  });
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(spec.port, host, () => {
      socket.off('error', reject);
      socket.on('error', onError);
      resolve({
        spec,
        counters,
        receiveBufferBytes: socket.getRecvBufferSize(),
        sample() {
          const drops = udpKernelDrops(spec.port, family);
          // The socket's own counter, from 0 when it was created.
          if (drops !== null) counters.dropped_kernel = drops;
        },
        async close() {
          await new Promise<void>((r) => socket.close(() => r()));
          await Promise.allSettled([...pending]);
        },
      });
    });
  });
}

/** Stops reading a connection and resolves once what it sent was accepted (or failed). */
type Drain = () => Promise<void>;

/** A TCP or TLS connection carrying RFC 6587 frames. */
function frameConnection(spec: ListenerSpec, socket: net.Socket, intake: Intake, counters: ListenerCounters): Drain {
  const decoder = new SyslogFrameDecoder();
  const peer = peerIp(socket.remoteAddress);
  let inflight = Promise.resolve();
  let stopping = false;
  let held = 0;
  const take = (messages: Buffer[]) => {
    if (messages.length === 0) return;
    counters.received += messages.length;
    counters.last_message_ms = Date.now();
    let bytes = 0;
    for (const m of messages) bytes += m.length;
    held += bytes;
    if (held >= TCP_UNACCEPTED_BYTES) socket.pause();
    const done = offer(spec, intake, messages, peer).then(
      () => {
        counters.accepted += messages.length;
        held -= bytes;
        if (held < TCP_UNACCEPTED_BYTES && socket.isPaused() && !socket.destroyed && !stopping) socket.resume();
      },
      () => {
        socket.destroy();
      },
    );
    inflight = inflight.then(() => done);
  };
  socket.on('data', (chunk: Buffer) => {
    const out = decoder.push(chunk);
    counters.refused += out.refused;
    take(out.messages);
    if (out.fatal) {
      counters.refused++;
      socket.destroy();
    }
  });
  socket.on('end', () => {
    take(decoder.end());
    void inflight.finally(() => socket.end());
  });
  return async () => {
    stopping = true;
    socket.pause();
    await inflight;
  };
}

/** A RELP session: open, syslog (answered once accepted), close. */
function relpConnection(spec: ListenerSpec, socket: net.Socket, intake: Intake, counters: ListenerCounters): Drain {
  const decoder = new RelpDecoder();
  const peer = peerIp(socket.remoteAddress);
  let answers = Promise.resolve();
  let unanswered = 0;
  let stopping = false;
  const answer = (_frame: RelpFrame, after: Promise<unknown>, ok: () => Buffer) => {
    unanswered++;
    if (unanswered >= RELP_WINDOW) socket.pause();
    answers = Promise.all([answers, after]).then(
      () => {
        unanswered--;
        if (!socket.destroyed) socket.write(ok());
        if (unanswered < RELP_WINDOW && !socket.destroyed && !stopping) socket.resume();
      },
      () => {
        socket.destroy();
      },
    );
  };
  socket.on('data', (chunk: Buffer) => {
    let frames: RelpFrame[];
    try {
      frames = decoder.push(chunk);
    } catch {
      counters.refused++;
      socket.destroy();
      return;
    }
    for (const f of frames) {
      if (f.command === 'open') answer(f, Promise.resolve(), () => relpOpenResponse(f.txnr, f.data));
      else if (f.command === 'syslog') {
        const msg = f.data;
        counters.received++;
        counters.last_message_ms = Date.now();
        if (msg.length > MAX_TEXT_LINE_BYTES) {
          counters.refused++;
          answer(f, Promise.resolve(), () => relpResponse(f.txnr, 500, 'message too long'));
          continue;
        }
        const accepted = offer(spec, intake, [msg], peer).then(() => void counters.accepted++);
        answer(f, accepted, () => relpResponse(f.txnr, 200, 'OK'));
      } else if (f.command === 'close') {
        answer(f, Promise.resolve(), () => Buffer.concat([Buffer.from(`${f.txnr} rsp 0\n`), RELP_SERVER_CLOSE]));
        void answers.finally(() => socket.end());
      } else answer(f, Promise.resolve(), () => relpResponse(f.txnr, 500, `unknown command ${f.command}`));
    }
  });
  return async () => {
    stopping = true;
    socket.pause();
    await answers;
  };
}

function listenStream(
  spec: ListenerSpec,
  host: string,
  intake: Intake,
  counters: ListenerCounters,
  onError: (err: unknown) => void,
): Promise<RunningListener> {
  const sockets = new Map<net.Socket, Drain>();
  const handle = (socket: net.Socket) => {
    counters.connections++;
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      sockets.delete(socket);
      counters.connections--;
    });
    sockets.set(
      socket,
      spec.protocol === 'relp'
        ? relpConnection(spec, socket, intake, counters)
        : frameConnection(spec, socket, intake, counters),
    );
  };
  const server =
    spec.protocol === 'tls' && spec.tls
      ? tls.createServer(
          {
            cert: spec.tls.cert,
            key: spec.tls.key,
            ...(spec.tls.ca ? { ca: spec.tls.ca, requestCert: true, rejectUnauthorized: true } : {}),
          },
          handle,
        )
      : net.createServer(handle);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(spec.port, host, () => {
      server.off('error', reject);
      server.on('error', onError);
      server.on('tlsClientError', () => counters.refused++);
      resolve({
        spec,
        counters,
        receiveBufferBytes: null,
        sample() {},
        async close() {
          const closed = new Promise<void>((r) => server.close(() => r()));
          // Each connection stops being read; once what it sent is accepted (RELP: answered) it is closed.
          await Promise.allSettled(
            [...sockets].map(async ([socket, drain]) => {
              await drain();
              socket.destroy();
            }),
          );
          await closed;
        },
      });
    });
  });
}

export function startListener(
  spec: ListenerSpec,
  host: string,
  intake: Intake,
  onError: (err: unknown) => void,
  options: ListenerOptions = {},
): Promise<RunningListener> {
  const counters: ListenerCounters = {
    received: 0,
    accepted: 0,
    dropped: 0,
    dropped_kernel: 0,
    refused: 0,
    connections: 0,
    last_message_ms: 0,
  };
  return spec.protocol === 'udp'
    ? listenUdp(spec, host, intake, counters, onError, options)
    : listenStream(spec, host, intake, counters, onError);
}
