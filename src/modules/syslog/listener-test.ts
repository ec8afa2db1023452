// The connection test of a syslog integration (POST .../test-connection): not an ingestion
// token (syslog senders have none) but its listeners. Each declared listener is judged from
// what the receiver processes last reported (state, error, counters) and, for the stream
// protocols on a listener this host runs, a real TCP connection to the port. UDP cannot be
// probed without sending a message into the pipeline, so its report is the process's word.
import net from 'node:net';
import { hostname } from 'node:os';
import type { ListenerStateRow } from './store.js';

export interface ListenerTest {
  protocol: string;
  port: number;
  ok: boolean;
  /** listening, error, stopped, or missing (no process reported it). */
  state: string;
  detail: string;
}

const CONNECT_TIMEOUT_MS = 2_000;

/** The address to connect to for a listener bound to `host` (a wildcard means this host). */
function connectAddress(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

function connect(host: string, port: number): Promise<{ ok: true; ms: number } | { ok: false; error: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect({ host: connectAddress(host), port });
    const done = (r: { ok: true; ms: number } | { ok: false; error: string }) => {
      socket.destroy();
      resolve(r);
    };
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => done({ ok: false, error: `no answer in ${CONNECT_TIMEOUT_MS} ms` }));
    socket.once('connect', () => {
      const ms = Math.round(performance.now() - started);
      // A clean close: the listener sees a connection that sent nothing (no message, no refusal).
      socket.end(() => done({ ok: true, ms }));
    });
    socket.once('error', (err: NodeJS.ErrnoException) => done({ ok: false, error: err.code ?? err.message }));
  });
}

function counts(r: Omit<ListenerStateRow, 'integration_id'>): string {
  const parts = [`received ${r.received}`, `accepted ${r.accepted}`];
  if (r.dropped + r.dropped_kernel > 0) parts.push(`dropped ${r.dropped + r.dropped_kernel}`);
  if (r.refused > 0) parts.push(`refused ${r.refused}`);
  parts.push(r.last_message_at ? `last message ${r.last_message_at.toISOString()}` : 'no message yet');
  return parts.join(', ');
}

export async function testListeners(input: {
  config: Record<string, unknown>;
  active: boolean;
  /** Address the listeners bind to (WEIR_SYSLOG_HOST). */
  host: string;
  states: Omit<ListenerStateRow, 'integration_id'>[];
}): Promise<{ ok: boolean; detail: string; listeners: ListenerTest[] }> {
  const declared = Array.isArray(input.config.listeners)
    ? (input.config.listeners as { protocol: string; port: number }[])
    : [];
  const here = hostname();
  const listeners: ListenerTest[] = [];
  for (const l of declared) {
    const rows = input.states.filter((r) => r.protocol === l.protocol && r.port === l.port);
    const name = `${l.protocol}/${l.port}`;
    const failed = rows.find((r) => r.state === 'error');
    const listening = rows.filter((r) => r.state === 'listening');
    if (failed) {
      listeners.push({ ...l, ok: false, state: 'error', detail: `${name}: error: ${failed.error ?? 'unknown'}` });
      continue;
    }
    if (listening.length === 0) {
      const stopped = rows.length > 0;
      listeners.push({
        ...l,
        ok: false,
        state: stopped ? 'stopped' : 'missing',
        detail: stopped
          ? `${name}: stopped (its process is shutting down or restarting)`
          : `${name}: no syslog receiver reported this listener in the last 5 minutes (is a process with the syslog role, or weir all, running?)`,
      });
      continue;
    }
    const total = {
      ...listening[0]!,
      received: listening.reduce((n, r) => n + r.received, 0),
      accepted: listening.reduce((n, r) => n + r.accepted, 0),
      dropped: listening.reduce((n, r) => n + r.dropped, 0),
      dropped_kernel: listening.reduce((n, r) => n + r.dropped_kernel, 0),
      refused: listening.reduce((n, r) => n + r.refused, 0),
      last_message_at:
        listening
          .map((r) => r.last_message_at)
          .filter((d): d is Date => d !== null)
          .sort((a, b) => b.getTime() - a.getTime())[0] ?? null,
    };
    const processes = listening.map((r) => r.process).join(', ');
    const local = listening.some((r) => r.process.slice(0, r.process.lastIndexOf(':')) === here);
    if (l.protocol !== 'udp' && local) {
      const c = await connect(input.host, l.port);
      listeners.push(
        c.ok
          ? {
              ...l,
              ok: true,
              state: 'listening',
              detail: `${name}: accepts connections (connected in ${c.ms} ms); ${counts(total)}`,
            }
          : {
              ...l,
              ok: false,
              state: 'listening',
              detail: `${name}: reported listening by ${processes} but a connection to ${connectAddress(input.host)}:${l.port} failed: ${c.error}`,
            },
      );
      continue;
    }
    const how =
      l.protocol === 'udp'
        ? 'bound (UDP: not probed, a probe would be a message)'
        : 'listening (on another host: not probed from here)';
    listeners.push({
      ...l,
      ok: true,
      state: 'listening',
      detail: `${name}: ${how}, reported by ${processes}; ${counts(total)}`,
    });
  }
  const ok = input.active && listeners.length > 0 && listeners.every((l) => l.ok);
  const lines = listeners.map((l) => l.detail);
  if (!input.active) lines.unshift('the integration is inactive: its listeners are closed');
  return { ok, detail: `syslog listeners: ${lines.join('; ')}`, listeners };
}
