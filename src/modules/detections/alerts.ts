// Scheduled alerts (docs/detections.md): a schedule with an alert makes a detection when its run
// completes and its condition holds, with the run's result attached (search_id) and its first
// rows' events as evidence. Keyed by the run, so a slot alerts once.
import { newId } from '../../core/ids.js';
import { ruleFinding } from '../../pipeline/detect/finding.js';
import type { DetectionStore } from './store.js';

export interface ScheduleAlert {
  organization_id: number;
  schedule: { id: string; name: string };
  alert: {
    severity_id: number;
    title?: string;
    description?: string;
    mitre?: { tactics?: string[]; techniques?: string[] };
  };
  run: { id: string; matched: number; event_ids: string[]; from: Date; to: Date };
  query: unknown;
}

export function createScheduleAlerts(deps: { store: DetectionStore; now: () => Date; weirVersion: string }) {
  return {
    /** The detection's id, or undefined when this run had already alerted. */
    async raise(a: ScheduleAlert): Promise<string | undefined> {
      const at = deps.now();
      const id = newId();
      const title = a.alert.title ?? `Scheduled search: ${a.schedule.name}`;
      const definition = {
        title,
        description:
          a.alert.description ??
          `Schedule "${a.schedule.name}" found ${a.run.matched} matching events between ${a.run.from.toISOString()} and ${a.run.to.toISOString()}.`,
        condition: { all: [] },
        severity_id: a.alert.severity_id,
        ...(a.alert.mitre ? { mitre: a.alert.mitre } : {}),
      };
      const finding = ruleFinding({
        uid: id,
        rule: { id: a.schedule.id, name: a.schedule.name, version: 1, definition: definition as never },
        count: a.run.matched,
        event_ids: a.run.event_ids.slice(0, 50),
        first_time: a.run.from.getTime(),
        last_time: a.run.to.getTime(),
        group: {},
        sample: { search_id: a.run.id, query: a.query },
        at: at.getTime(),
        weirVersion: deps.weirVersion,
      });
      const inserted = await deps.store.insertDetections(
        [
          {
            id,
            organization_id: a.organization_id,
            source: 'schedule',
            uid: a.run.id,
            rule_id: null,
            rule_version: null,
            schedule_id: a.schedule.id,
            search_id: a.run.id,
            integration_id: null,
            stream: null,
            title: title.slice(0, 500),
            description: definition.description,
            severity_id: a.alert.severity_id,
            mitre: { tactics: a.alert.mitre?.tactics ?? [], techniques: a.alert.mitre?.techniques ?? [] },
            event_ids: a.run.event_ids.slice(0, 50),
            event_count: a.run.matched,
            finding,
            first_seen_at: a.run.from,
            last_seen_at: a.run.to,
          },
        ],
        at,
      );
      if (inserted.length === 0) return undefined;
      await deps.store.addHistory([
        {
          id: newId(),
          detection_id: id,
          at,
          actor: 'schedule',
          kind: 'created',
          change: { source: 'schedule', schedule_id: a.schedule.id, search_id: a.run.id, matched: a.run.matched },
          comment: null,
        },
      ]);
      return id;
    },
  };
}

export type ScheduleAlerts = ReturnType<typeof createScheduleAlerts>;
