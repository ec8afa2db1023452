// Detections (docs/detections.md): rules evaluated in the one pass (the pass's hook: live rules,
// and what it found settled in the batch's transaction), vendor findings, scheduled alerts,
// triage, the grouped e-mail and case opening.
import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { Logger } from '../../platform/logger.js';
import type { QueuePort } from '../../platform/queue/port.js';
import type { EmailNotifier } from '../email/jobs.js';
import type { PassDetection } from '../normalization/service.js';
import type { OrgDataStep } from '../organizations/jobs.js';
import { createScheduleAlerts } from './alerts.js';
import { detectionBeatTasks, detectionJobs } from './jobs.js';
import { createLiveRules } from './live.js';
import { createNotifications, type NotifyDeps } from './notify.js';
import { createRecorder } from './recorder.js';
import { detectionRoutes } from './routes.js';
import { createRulesService } from './rules.js';
import { createDetectionService } from './service.js';
import { createDetectionStore } from './store.js';
import { triageQueries } from './store-triage.js';
import { createTriage, type EvidenceEvents } from './triage.js';

/** Threshold windows are kept this long past their start (the longest window is 7 days). */
const WINDOW_KEEP_MS = 8 * 86_400_000;

export interface DetectionsDeps {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  queue: QueuePort;
  email: EmailNotifier;
  /** How often a process reads an organization's live rules (WEIR_MAPPING_REFRESH_MS). */
  refreshMs: number;
  notifyIntervalMs: number;
  publicUrl: string | undefined;
  weirVersion: string;
  cases?: NotifyDeps['cases'];
  organization: NotifyDeps['organization'];
  dataDeletion: { addStep(step: OrgDataStep): void };
  /** The event store, where the evidence events' fields are read (docs/detections.md, Evidence). */
  events?: EvidenceEvents;
}

export function wireDetections(deps: DetectionsDeps) {
  const { db, clock } = deps;
  const store = createDetectionStore(db);
  const live = createLiveRules({ store, refreshMs: deps.refreshMs });
  const recorder = createRecorder({ store, weirVersion: deps.weirVersion });
  const rules = createRulesService({ store, clock, invalidate: (org) => live.invalidate(org) });
  const detections = createDetectionService({ store, clock });
  const triage = createTriage({ store, triage: triageQueries(db), clock, events: deps.events });
  const notifications = createNotifications({
    store,
    clock,
    logger: deps.logger,
    email: deps.email,
    intervalMs: deps.notifyIntervalMs,
    publicUrl: deps.publicUrl,
    organization: deps.organization,
    ...(deps.cases ? { cases: deps.cases } : {}),
  });
  const alerts = createScheduleAlerts({ store, now: () => clock.now(), weirVersion: deps.weirVersion });
  const pass: PassDetection = {
    job: (org) => live.job(org),
    record: (batch, detect, job, at, emit) => recorder.record(batch, detect, job, at, emit),
  };

  for (const table of ['detections', 'detection_windows', 'detection_suppressions', 'detection_rules'] as const) {
    deps.dataDeletion.addStep({
      name: table,
      run: async (organizationId) => ({ rows: await store.deleteOrgRows(table, organizationId) }),
    });
  }
  const expire = () => store.expireState(new Date(clock.now().getTime() - WINDOW_KEEP_MS), clock.now());

  return {
    pass,
    alerts,
    rules,
    openCount: store.openCount,
    notifications,
    jobs: [detectionJobs({ digest: () => notifications.digest(), expire })],
    beatTasks: detectionBeatTasks(deps.queue),
    routes: (app: Api) => detectionRoutes(app, { detections, rules, notifications, triage }),
  };
}

export type Detections = ReturnType<typeof wireDetections>;
