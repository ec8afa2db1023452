// Live tap of a destination (docs/delivery.md, Tap). Opening one writes a tap_sessions row;
// the dispatchers, which look for open sessions on every poll, append masked copies of
// what they send to tap_samples; this side reads the session's new samples every poll and
// hands them on as NDJSON lines until the limit, the time or the client ends it, then
// removes the session and its samples (delivery housekeeping removes those a killed API
// process left). The two sides share only the database, so the API and the dispatcher may
// be different processes.
//
// A global destination carries every organization's events and a sample does not say whose
// it is, so only a platform-scope caller may tap one (403 destination.tap_needs_platform_scope).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Scope } from '../../core/scope.js';
import { maskEvent } from '../../pipeline/mask.js';
import type { DeliveryStatusStore } from './store.js';

export const TAP_POLL_MS = 250;

export interface TapOptions {
  seconds: number;
  limit: number;
  /** Who opened it (a user id), for the record; null for service accounts. */
  createdBy: number | null;
}

export interface TapSession {
  id: string;
  expiresAt: Date;
  /** The NDJSON lines, one per sampled event; ends the session when done or when signal aborts. */
  lines(signal: AbortSignal): AsyncGenerator<string>;
}

export interface TapDeps {
  store: DeliveryStatusStore;
  clock: Clock;
  pollMs?: number;
  onError?: (err: unknown) => void;
  /** A session was opened (the dispatcher of this process starts sampling without waiting for its poll). */
  onOpened?: () => void;
}

function line(at: Date, text: string): string {
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    event = { unparsed: '***' };
  }
  // The dispatcher masks what it samples; masking again costs little and keeps a slip there from leaking here.
  const masked =
    event !== null && typeof event === 'object' && !Array.isArray(event)
      ? maskEvent(event as Record<string, unknown>)
      : event;
  return `${JSON.stringify({ at: at.toISOString(), event: masked })}\n`;
}

export function createTapService(deps: TapDeps) {
  const { store, clock } = deps;
  const pollMs = deps.pollMs ?? TAP_POLL_MS;
  const onError = deps.onError ?? (() => undefined);

  return {
    async open(scope: Scope, destinationId: string, options: TapOptions): Promise<TapSession> {
      const dest = await store.destination(scope, destinationId);
      if (!dest) throw errors.notFound('Destination');
      if (dest.organization_id === null && !scope.global) {
        throw new AppError('destination.tap_needs_platform_scope', {
          detail: "A global destination carries every organization's events: tapping it needs platform (global) scope",
        });
      }
      const now = clock.now();
      const id = newId();
      const expiresAt = new Date(now.getTime() + options.seconds * 1000);
      await store.openTapSession({
        id,
        destination_id: dest.id,
        expires_at: expiresAt,
        max_events: options.limit,
        created_by: options.createdBy,
        created_at: now,
      });
      deps.onOpened?.();

      async function* lines(signal: AbortSignal): AsyncGenerator<string> {
        let sent = 0;
        let after = 0;
        try {
          while (!signal.aborted) {
            // Read once more after the time is up: samples written just before it count.
            const left = expiresAt.getTime() - clock.now().getTime();
            const samples = await store.tapSamples(id, after, options.limit - sent);
            for (const s of samples) {
              after = s.id;
              sent += 1;
              yield line(s.at, s.event);
            }
            if (sent >= options.limit || left <= 0) break;
            await sleep(Math.min(pollMs, left), undefined, { signal }).catch(() => undefined);
          }
        } finally {
          await store.closeTapSession(id).catch(onError);
        }
      }

      return { id, expiresAt, lines };
    },
  };
}

export type TapService = ReturnType<typeof createTapService>;
