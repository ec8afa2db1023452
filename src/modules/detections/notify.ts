// Telling people (docs/detections.md): new high and critical detections are e-mailed to the
// recipients of their organization, grouped (one message lists every detection since the last)
// and rate-limited (at most one message per organization per interval; what arrives meanwhile
// waits for the next). A detection can open a case in the case-management system, with a link
// back to it.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { scopeOf } from '../../core/scope.js';
import type { Logger } from '../../platform/logger.js';
import { setAuditTarget } from '../audit/service.js';
import type { EmailNotifier } from '../email/jobs.js';
import type { DetectionRow, DetectionStore } from './store.js';

const SEVERITY = ['Unknown', 'Informational', 'Low', 'Medium', 'High', 'Critical', 'Fatal'];
const LISTED = 50;

export interface NotifyDeps {
  store: DetectionStore;
  clock: Clock;
  logger: Logger;
  email: EmailNotifier;
  /** Least time between two messages to one organization. */
  intervalMs: number;
  publicUrl: string | undefined;
  /** The case-management system (undefined: not configured). */
  cases?: {
    openCase(
      org: { id: number; name: string; case_customer_id: string | null },
      input: { name: string; description: string; socId: string },
    ): Promise<{ case_id: string } | undefined>;
  };
  organization(id: number): Promise<{ id: number; name: string; case_customer_id: string | null } | undefined>;
}

export function detectionLink(publicUrl: string | undefined, id: string): string {
  return publicUrl ? `${publicUrl.replace(/\/$/, '')}/api/detections/${id}` : `GET /api/detections/${id}`;
}

export function createNotifications(deps: NotifyDeps) {
  const { store, clock, logger } = deps;

  return {
    /** One digest per organization whose last message is older than the interval; the number of detections told. */
    async digest(): Promise<number> {
      const pending = await store.unnotified(5_000);
      const byOrg = new Map<number, DetectionRow[]>();
      for (const d of pending) {
        const list = byOrg.get(d.organization_id);
        if (list) list.push(d);
        else byOrg.set(d.organization_id, [d]);
      }
      const last = await store.lastNotified([...byOrg.keys()]);
      const now = clock.now();
      let told = 0;
      for (const [org, list] of byOrg) {
        const previous = last.get(org);
        if (previous && now.getTime() - previous.getTime() < deps.intervalMs) continue;
        const lines = list
          .slice(0, LISTED)
          .map(
            (d) =>
              `- [${SEVERITY[d.severity_id] ?? d.severity_id}] ${d.title} (${d.source}${d.event_count > 1 ? `, ${d.event_count} events` : ''}): ${detectionLink(deps.publicUrl, d.id)}`,
          );
        if (list.length > LISTED)
          lines.push(`... and ${list.length - LISTED} more: GET /api/detections?status=new&severity_min=4`);
        const critical = list.filter((d) => d.severity_id >= 5).length;
        try {
          await deps.email.notify({
            organizationId: org,
            subject: `Weir: ${list.length} new ${critical ? `critical or high` : 'high'} detection${list.length > 1 ? 's' : ''}`,
            text: [`New detections since the last message:`, '', ...lines].join('\n'),
          });
        } catch (err) {
          logger.warn({ err, organization_id: org }, 'detection e-mail could not be queued');
          continue;
        }
        await store.markNotified(
          list.map((d) => d.id),
          now,
        );
        await store.addHistory(
          list.map((d) => ({
            id: newId(),
            detection_id: d.id,
            at: now,
            actor: 'weir',
            kind: 'notified' as const,
            change: { grouped_with: list.length },
            comment: null,
          })),
        );
        told += list.length;
      }
      return told;
    },

    /** Opens a case for a detection in the case-management system; 409 when it has one, 422 when none is configured. */
    async openCase(actor: Actor, id: string) {
      const d = await store.get(scopeOf(actor), id, true);
      if (!d) throw errors.notFound('Detection');
      if (d.case_id)
        throw new AppError('resource.conflict', {
          detail: `Detection ${id} already has case ${d.case_id}`,
          details: { case_id: d.case_id },
        });
      const org = await deps.organization(d.organization_id);
      const made =
        org && deps.cases
          ? await deps.cases.openCase(org, {
              name: d.title.slice(0, 200),
              socId: `weir-${d.id}`,
              description: caseDescription(d, deps.publicUrl),
            })
          : undefined;
      if (!made)
        throw new AppError('detection.invalid_change', {
          detail: 'Case management is not configured (WEIR_CASE_URL)',
          details: { errors: [{ location: 'case', message: 'not configured' }] },
        });
      const now = clock.now();
      await store.update(id, { case_id: made.case_id }, now);
      await store.addHistory([
        {
          id: newId(),
          detection_id: id,
          at: now,
          actor: `${actor.kind}:${actor.id}`,
          kind: 'case',
          change: { case_id: made.case_id, system: 'dfir-iris' },
          comment: null,
        },
      ]);
      setAuditTarget({ type: 'detection', id, organizationId: d.organization_id, details: { case_id: made.case_id } });
      return { detection_id: id, case_id: made.case_id };
    },
  };
}

function caseDescription(d: DetectionRow, publicUrl: string | undefined): string {
  return [
    d.description || d.title,
    '',
    `Severity: ${SEVERITY[d.severity_id] ?? d.severity_id}; source: ${d.source}; events: ${d.event_count}; first seen ${new Date(d.first_seen_at).toISOString()}, last seen ${new Date(d.last_seen_at).toISOString()}.`,
    d.mitre.techniques.length ? `ATT&CK: ${[...d.mitre.tactics, ...d.mitre.techniques].join(', ')}` : '',
    `In Weir: ${detectionLink(publicUrl, d.id)}`,
  ]
    .filter(Boolean)
    .join('\n');
}

export type Notifications = ReturnType<typeof createNotifications>;
