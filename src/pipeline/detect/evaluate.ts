// One batch through an organization's detection rules, in the one pass (on the pass's thread):
// which rules each normalized event matches, gathered into hits the main thread settles in the
// batch's transaction (threshold windows, suppression, findings: modules/detections). Also
// picks out the findings vendors sent (events a mapping put in a finding class), which become
// detections keyed by the vendor's finding uid. Pure.
import type { NormalizedRecord } from '../envelope.js';
import { compileRule, type CompiledRule, type RuleSpec } from './rules.js';

/** OCSF finding classes whose events are detections: Security (2001), Detection (2004), Incident (2005), Data Security (2006). */
export const ALERT_FINDING_CLASSES: ReadonlySet<number> = new Set([2001, 2004, 2005, 2006]);
/** A rule without suppression makes one finding per matching event, at most this many per batch (the last gathers the rest). */
export const MAX_FINDINGS_PER_RULE_BATCH = 100;
/** Event ids a hit carries as evidence. */
export const MAX_EVIDENCE = 50;

export interface RuleHit {
  rule_id: string;
  version: number;
  /** JSON of the group's values ('' for a rule without group_by; the event id for a per-event finding). */
  group_key: string;
  group: Record<string, unknown>;
  /** Threshold rules: the window's start (epoch ms); null otherwise. */
  window_start: number | null;
  count: number;
  event_ids: string[];
  first_time: number;
  last_time: number;
  /** The first matching event (OCSF), the finding's evidence. */
  sample: Record<string, unknown>;
}

export interface VendorFinding {
  event_id: string;
  /** finding_info.uid, else metadata.uid, else the event id. */
  uid: string;
  class_uid: number;
  title: string;
  severity_id: number;
  time: number;
  ocsf: Record<string, unknown>;
}

export interface DetectOutput {
  hits: RuleHit[];
  findings: VendorFinding[];
  /** Events tested and rule tests made (the bench's and the metrics' figures). */
  tested: number;
}

/** An organization's live rules as the pass receives them. */
export interface DetectionJob {
  fingerprint: string;
  rules: RuleSpec[];
}

export interface CompiledDetection {
  evaluate(records: readonly NormalizedRecord[]): DetectOutput;
}

function eventTime(r: NormalizedRecord): number {
  const t = r.ocsf.time;
  return typeof t === 'number' && Number.isFinite(t) ? t : Date.parse(r.received_at);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The vendor finding an event is, when a mapping put it in an alert finding class. */
export function vendorFinding(r: NormalizedRecord): VendorFinding | undefined {
  const e = r.ocsf;
  const cls = e.class_uid;
  if (typeof cls !== 'number' || !ALERT_FINDING_CLASSES.has(cls)) return undefined;
  const info = (e.finding_info ?? {}) as Record<string, unknown>;
  const meta = (e.metadata ?? {}) as Record<string, unknown>;
  return {
    event_id: r.id,
    uid: str(info.uid) ?? str(meta.uid) ?? r.id,
    class_uid: cls,
    title: str(info.title) ?? str(e.message) ?? str(e.class_name) ?? 'Finding',
    severity_id: typeof e.severity_id === 'number' ? e.severity_id : 0,
    time: eventTime(r),
    ocsf: e,
  };
}

export function compileDetection(job: DetectionJob): CompiledDetection {
  const rules: CompiledRule[] = job.rules.map(compileRule);
  const byClass = new Map<number, CompiledRule[]>();
  const anyClass: CompiledRule[] = [];
  for (const rule of rules) {
    if (!rule.classes) {
      anyClass.push(rule);
      continue;
    }
    for (const c of rule.classes) {
      const list = byClass.get(c);
      if (list) list.push(rule);
      else byClass.set(c, [rule]);
    }
  }

  return {
    evaluate(records) {
      const hits = new Map<string, RuleHit>();
      const perEvent = new Map<string, number>();
      const findings: VendorFinding[] = [];
      let tested = 0;
      for (const r of records) {
        const f = vendorFinding(r);
        if (f) findings.push(f);
        const cls = r.ocsf.class_uid;
        const candidates = typeof cls === 'number' ? byClass.get(cls) : undefined;
        for (const list of candidates ? [candidates, anyClass] : [anyClass]) {
          for (const rule of list) {
            tested++;
            if (!rule.predicate(r)) continue;
            const time = eventTime(r);
            const group: Record<string, unknown> = {};
            for (const g of rule.group) group[g.path] = g.get(r) ?? null;
            const groupKey = rule.group.length ? JSON.stringify(rule.group.map((g) => group[g.path])) : '';
            const windowStart = rule.windowMs ? Math.floor(time / rule.windowMs) * rule.windowMs : null;
            // One finding per event unless the rule counts (threshold) or suppresses per group; past
            // the cap, the batch's remaining matches gather in one more finding.
            let key: string;
            let hitKey = groupKey;
            if (windowStart === null && rule.suppressionMs === 0) {
              const n = perEvent.get(rule.spec.id) ?? 0;
              perEvent.set(rule.spec.id, n + 1);
              key =
                n < MAX_FINDINGS_PER_RULE_BATCH ? `${rule.spec.id}\u0000e\u0000${r.id}` : `${rule.spec.id}\u0000rest`;
              hitKey = r.id;
            } else key = `${rule.spec.id}\u0000${groupKey}\u0000${windowStart ?? ''}`;
            const hit = hits.get(key);
            if (hit) {
              hit.count++;
              if (hit.event_ids.length < MAX_EVIDENCE) hit.event_ids.push(r.id);
              hit.first_time = Math.min(hit.first_time, time);
              hit.last_time = Math.max(hit.last_time, time);
            } else {
              hits.set(key, {
                rule_id: rule.spec.id,
                version: rule.spec.version,
                group_key: hitKey,
                group,
                window_start: windowStart,
                count: 1,
                event_ids: [r.id],
                first_time: time,
                last_time: time,
                sample: r.ocsf,
              });
            }
          }
        }
      }
      return { hits: [...hits.values()], findings, tested };
    },
  };
}
