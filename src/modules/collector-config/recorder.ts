// The live-capture tap of the normalization input: called for every stored ingest batch
// (push and pull), it copies the raw events into the capture sessions that want them. It
// must cost next to nothing when nobody captures, so the active sessions are held in memory
// per integration and refreshed with one query every REFRESH_MS; a batch that no session
// wants returns without touching the database. When one does, its capacity is reserved
// atomically (events_captured stays exact with any number of workers) and the events of
// all its sessions are written with one insert, in one transaction.
import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import { inTransaction } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { Logger } from '../../platform/logger.js';
import type { IngestBatch } from '../../pipeline/envelope.js';
import { createCollectorConfigStore, type ActiveSession, type NewCaptureEvent } from './store.js';

/** How stale a process's view of the active sessions may get: a new session starts capturing within this. */
export const REFRESH_MS = 2_000;

export interface CaptureRecorderDeps {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  refreshMs?: number;
}

export interface CaptureRecorder {
  record(batch: IngestBatch): Promise<void>;
  /** The next record() reloads the active sessions (after a change made in this process). */
  invalidate(): void;
}

export function createCaptureRecorder(deps: CaptureRecorderDeps): CaptureRecorder {
  const { clock, logger } = deps;
  const store = createCollectorConfigStore(deps.db);
  const refreshMs = deps.refreshMs ?? REFRESH_MS;
  let byIntegration = new Map<number, ActiveSession[]>();
  let loadedAt = Number.NEGATIVE_INFINITY;
  let loading: Promise<void> | undefined;

  async function load(): Promise<void> {
    const now = clock.now();
    const rows = await store.activeSessions();
    const next = new Map<number, ActiveSession[]>();
    for (const row of rows) {
      const list = next.get(row.integration_id);
      if (list) list.push(row);
      else next.set(row.integration_id, [row]);
    }
    byIntegration = next;
    loadedAt = now.getTime();
  }

  async function fresh(): Promise<void> {
    if (clock.now().getTime() - loadedAt < refreshMs) return;
    // One query per process however many batches arrive meanwhile.
    loading ??= load().finally(() => {
      loading = undefined;
    });
    await loading;
  }

  function forget(ids: Set<string>): void {
    for (const [integrationId, list] of byIntegration) {
      const kept = list.filter((s) => !ids.has(s.id));
      if (kept.length === 0) byIntegration.delete(integrationId);
      else if (kept.length !== list.length) byIntegration.set(integrationId, kept);
    }
  }

  return {
    async record(batch) {
      if (batch.events.length === 0) return;
      await fresh();
      const candidates = byIntegration.get(batch.integration_id);
      if (!candidates) return;
      const wanted = candidates.filter((s) => s.stream === null || s.stream === batch.stream);
      if (wanted.length === 0) return;

      const now = clock.now();
      const ended = new Set<string>();
      const expired = wanted.filter((s) => s.expires_at.getTime() <= now.getTime()).map((s) => s.id);
      if (expired.length > 0) {
        await store.expireSessions(now, expired);
        for (const id of expired) ended.add(id);
      }
      const open = wanted.filter((s) => !ended.has(s.id));
      if (open.length > 0) {
        // Pushed events are the texts they were accepted as; collected ones are serialized once per batch, shared by every session.
        const texts = batch.events.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
        await inTransaction(deps.db, async () => {
          const rows: NewCaptureEvent[] = [];
          for (const session of open) {
            const grant = await store.reserve(session.id, batch.events.length, now);
            if (!grant || grant.status !== 'active') ended.add(session.id);
            for (let i = 0; i < (grant?.granted ?? 0); i++) {
              const raw = texts[i]!;
              rows.push({
                id: newId(),
                session_id: session.id,
                organization_id: batch.organization_id,
                integration_id: batch.integration_id,
                stream: batch.stream,
                source: batch.source,
                raw,
                bytes: Buffer.byteLength(raw),
                captured_at: now,
              });
            }
          }
          await store.insertEvents(rows);
        });
      }
      if (ended.size > 0) {
        forget(ended);
        logger.debug({ sessions: [...ended], integration_id: batch.integration_id }, 'capture sessions ended');
      }
    },

    invalidate() {
      loadedAt = Number.NEGATIVE_INFINITY;
    },
  };
}
