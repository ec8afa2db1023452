// Global collector settings and live capture sessions. Settings are platform-wide (written
// with global scope only, every change audited with its old and new values). A capture
// session records the raw events one integration (optionally one stream) hands the
// normalization stage, within the limits of the settings; its events are personal data,
// so the export is masked unless the caller asks otherwise, and that request is audited.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { isUuid, newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import { connectorFor } from '../../connectors/index.js';
import { BUILTIN_MAPPINGS } from '../../pipeline/normalize/builtin/index.js';
import { maskEvent } from '../../pipeline/mask.js';
import { afterCommit } from '../../platform/db/ambient.js';
import { setAuditTarget } from '../audit/service.js';
import type { PlatformDefinition } from '../../connectors/platform-definition.js';
import {
  COLLECTOR_SETTING_FIELDS,
  DEFAULT_COLLECTOR_SETTINGS,
  type CollectorSettings,
  type SettingsReader,
} from './settings.js';
import type { CaptureEventRow, CollectorConfigStore, SessionFilter, SessionRow } from './store.js';

/** Active sessions one integration may have at once: each one is a reservation per batch. */
export const MAX_ACTIVE_SESSIONS_PER_INTEGRATION = 5;
/** Defaults of a session that does not say, capped by the settings. */
export const DEFAULT_CAPTURE_SECONDS = 900;
export const DEFAULT_CAPTURE_EVENTS = 1_000;
/** Ended sessions are removed with their events after this. */
export const CAPTURE_RETENTION_MS = 7 * 86_400_000;

export interface CreateSessionInput {
  integration_id: number;
  stream?: string | null;
  duration_seconds?: number;
  max_events?: number;
}

export interface CollectorConfigDeps {
  store: CollectorConfigStore;
  clock: Clock;
  settings: SettingsReader;
  /** The integration platforms (integrations registry). */
  platforms: () => PlatformDefinition[];
  /** The capture recorder of this process: told when a session starts or ends here. */
  onSessionsChanged?: () => void;
}

const sessionNotFound = () => errors.notFound('Capture session');

export function createCollectorConfigService(deps: CollectorConfigDeps) {
  const { store, clock, settings } = deps;
  const changed = () => afterCommit(async () => deps.onSessionsChanged?.());

  /** The row as clients see it: an active session past expires_at reads as expired. */
  function present(row: SessionRow) {
    const expired = row.status === 'active' && row.expires_at.getTime() <= clock.now().getTime();
    return {
      ...row,
      status: expired ? ('expired' as const) : row.status,
      stopped_at: expired ? row.expires_at : row.stopped_at,
    };
  }

  function presentEvent(row: CaptureEventRow, mask: boolean) {
    return { ...row, raw: mask ? maskEvent(row.raw) : row.raw };
  }

  async function sessionInScope(scope: Scope, id: string): Promise<SessionRow> {
    const row = isUuid(id) ? await store.session(scope, id.toLowerCase()) : undefined;
    if (!row) throw sessionNotFound();
    return row;
  }

  async function config() {
    const row = await store.settingsRow();
    const stored = (row?.settings ?? {}) as Partial<CollectorSettings>;
    return {
      settings: { ...DEFAULT_COLLECTOR_SETTINGS, ...stored },
      fields: COLLECTOR_SETTING_FIELDS.map((f) => ({
        ...f,
        default: DEFAULT_COLLECTOR_SETTINGS[f.name],
        customized: f.name in stored,
      })),
      updated_at: row?.updated_at ?? null,
      updated_by: row?.updated_by ?? null,
    };
  }

  return {
    config,

    /** Partial update (ranges checked by the route schema); the audit entry carries every change as {from, to}. */
    async updateConfig(actor: Actor, patch: Partial<CollectorSettings>) {
      const now = clock.now();
      const row = await store.lockSettings(now);
      const stored = (row.settings ?? {}) as Record<string, unknown>;
      const before = { ...DEFAULT_COLLECTOR_SETTINGS, ...stored } as CollectorSettings;
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      for (const [name, value] of Object.entries(patch)) {
        if (value === undefined) continue;
        const from = before[name as keyof CollectorSettings];
        if (from !== value) changes[name] = { from, to: value };
      }
      await store.writeSettings({ ...stored, ...patch }, actor.kind === 'user' ? actor.id : null, now);
      setAuditTarget({ type: 'collector_settings', id: 1, organizationId: null, details: { changes } });
      await afterCommit(async () => settings.invalidate());
      return config();
    },

    async createSession(actor: Actor, input: CreateSessionInput) {
      const scope = scopeOf(actor);
      const integration = await store.integration(scope, input.integration_id);
      if (!integration) throw errors.notFound('Integration');
      const limits = await settings.current();
      const maxSeconds = limits.capture_max_minutes * 60;
      const duration = input.duration_seconds ?? Math.min(DEFAULT_CAPTURE_SECONDS, maxSeconds);
      const maxEvents = input.max_events ?? Math.min(DEFAULT_CAPTURE_EVENTS, limits.capture_max_events);
      if (duration > maxSeconds) {
        throw new AppError('capture.limit_exceeded', {
          detail: `duration_seconds is at most ${maxSeconds} (collector setting capture_max_minutes = ${limits.capture_max_minutes})`,
          details: { field: 'duration_seconds', maximum: maxSeconds },
        });
      }
      if (maxEvents > limits.capture_max_events) {
        throw new AppError('capture.limit_exceeded', {
          detail: `max_events is at most ${limits.capture_max_events} (collector setting capture_max_events)`,
          details: { field: 'max_events', maximum: limits.capture_max_events },
        });
      }
      const now = clock.now();
      if ((await store.countActive(integration.id, now)) >= MAX_ACTIVE_SESSIONS_PER_INTEGRATION) {
        throw new AppError('capture.limit_exceeded', {
          detail: `An integration has at most ${MAX_ACTIVE_SESSIONS_PER_INTEGRATION} active capture sessions; stop one first`,
          details: { field: 'integration_id', maximum: MAX_ACTIVE_SESSIONS_PER_INTEGRATION },
        });
      }
      const row = await store.insertSession({
        id: newId(),
        organization_id: integration.organization_id,
        integration_id: integration.id,
        stream: input.stream ?? null,
        status: 'active',
        max_events: maxEvents,
        created_by: actor.kind === 'user' ? actor.id : null,
        created_at: now,
        expires_at: new Date(now.getTime() + duration * 1000),
        stopped_at: null,
      });
      setAuditTarget({
        type: 'capture_session',
        id: row.id,
        organizationId: row.organization_id,
        details: {
          integration_id: row.integration_id,
          stream: row.stream,
          max_events: maxEvents,
          duration_seconds: duration,
        },
      });
      await changed();
      return present(row);
    },

    async listSessions(scope: Scope, filter: SessionFilter, page: OffsetPage) {
      const { items, total } = await store.listSessions(scope, filter, page, clock.now());
      return { items: items.map(present), total };
    },

    async stopSession(scope: Scope, id: string) {
      const row = await sessionInScope(scope, id);
      const stopped = await store.stopSession(scope, row.id, clock.now());
      if (!stopped) {
        throw new AppError('capture.not_active', {
          detail: `The capture session is ${present(row).status}, not active`,
          details: { status: present(row).status },
        });
      }
      setAuditTarget({ type: 'capture_session', id: row.id, organizationId: row.organization_id });
      await changed();
      return present(stopped);
    },

    async deleteSession(scope: Scope, id: string): Promise<void> {
      const row = await sessionInScope(scope, id);
      if (!(await store.deleteSession(scope, row.id))) throw sessionNotFound();
      setAuditTarget({
        type: 'capture_session',
        id: row.id,
        organizationId: row.organization_id,
        details: { events_captured: row.events_captured },
      });
      await changed();
    },

    async listEvents(scope: Scope, sessionId: string, page: OffsetPage, mask: boolean) {
      const session = await sessionInScope(scope, sessionId);
      const { items, total } = await store.listEvents(session.id, page);
      return { items: items.map((e) => presentEvent(e, mask)), total };
    },

    async event(scope: Scope, sessionId: string, eventId: string, mask: boolean) {
      const session = await sessionInScope(scope, sessionId);
      const row = isUuid(eventId) ? await store.event(session.id, eventId.toLowerCase()) : undefined;
      if (!row) throw errors.notFound('Captured event');
      return presentEvent(row, mask);
    },

    /** NDJSON lines of the session's raw events, oldest first; the route audits the call with `mask`. */
    async export(scope: Scope, sessionId: string, mask: boolean) {
      const session = await sessionInScope(scope, sessionId);
      setAuditTarget({
        type: 'capture_session',
        id: session.id,
        organizationId: session.organization_id,
        details: {
          mask,
          events: session.events_captured,
          ...(mask ? {} : { warning: 'raw (unmasked) events exported' }),
        },
      });
      async function* lines(): AsyncGenerator<string> {
        for await (const chunk of store.scanEvents(session.id)) {
          yield chunk.map((raw) => `${JSON.stringify(mask ? maskEvent(raw) : raw)}\n`).join('');
        }
      }
      return { session: present(session), lines: lines() };
    },

    /** Every platform's streams that can be captured: capture taps the normalization input, so push platforms too. */
    vendors() {
      return deps.platforms().map((p) => {
        const connector = connectorFor(p.name);
        const streams = new Map<
          string,
          { name: string; display_name: string; description: string; collected: boolean }
        >();
        for (const s of connector?.streams ?? [])
          streams.set(s.name, {
            name: s.name,
            display_name: s.display_name,
            description: s.description,
            collected: true,
          });
        for (const m of BUILTIN_MAPPINGS) {
          if (m.platform !== p.name || streams.has(m.stream)) continue;
          streams.set(m.stream, { name: m.stream, display_name: m.name, description: m.description, collected: false });
        }
        return { platform: p.name, display_name: p.display_name, kind: p.kind, streams: [...streams.values()] };
      });
    },

    /** Beat housekeeping: marks expired sessions, removes sessions (with their events) ended over 7 days ago. */
    async housekeeping(chunk = 5_000): Promise<{ expired: number; removed: number }> {
      const now = clock.now();
      const expired = (await store.expireSessions(now)).length;
      let removed = 0;
      for (;;) {
        const ids = await store.endedBefore(new Date(now.getTime() - CAPTURE_RETENTION_MS), 100);
        for (const id of ids) {
          // Bounded deletes: one session may hold many events.
          while ((await store.deleteEventsOf(id, chunk)) === chunk);
          await store.deleteSessionRow(id);
          removed++;
        }
        if (ids.length < 100) break;
      }
      if (expired > 0 || removed > 0) deps.onSessionsChanged?.();
      return { expired, removed };
    },
  };
}

export type CollectorConfigService = ReturnType<typeof createCollectorConfigService>;
