// The OCSF Detection Finding (2004) a rule's match emits: what the rule is (analytic), what it
// saw (the group, the count, the evidence events by id, the first of them whole), when, how
// severe, with the ATT&CK tactics and techniques of the rule. It flows through routing like any
// event and is the detection's `finding`. Pure.
import type { RuleDefinition } from './rules.js';

export const DETECTION_FINDING = 2004;
const ACTIVITY_CREATE = 1;
const OCSF_VERSION = '1.8.0';

export interface FindingInput {
  /** The detection's id in Weir: the finding's uid. */
  uid: string;
  rule: { id: string; name: string; version: number; definition: RuleDefinition };
  count: number;
  event_ids: string[];
  first_time: number;
  last_time: number;
  group: Record<string, unknown>;
  sample: Record<string, unknown>;
  /** When it fired (epoch ms). */
  at: number;
  weirVersion: string;
}

const SEVERITY: Record<number, string> = {
  1: 'Informational',
  2: 'Low',
  3: 'Medium',
  4: 'High',
  5: 'Critical',
  6: 'Fatal',
};

export function ruleFinding(f: FindingInput): Record<string, unknown> {
  const d = f.rule.definition;
  const title = d.title ?? f.rule.name;
  const groupText = Object.entries(f.group)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
  const threshold = d.threshold
    ? ` ${f.count} matching events within ${d.threshold.window_seconds} s (threshold ${d.threshold.count})`
    : '';
  const attacks = [
    ...(d.mitre?.techniques ?? []).map((t) => ({
      technique: { uid: t.split('.')[0] },
      ...(t.includes('.') ? { sub_technique: { uid: t } } : {}),
    })),
    ...(d.mitre?.tactics ?? []).map((t) => ({ tactic: { uid: t } })),
  ];
  return {
    class_uid: DETECTION_FINDING,
    category_uid: 2,
    activity_id: ACTIVITY_CREATE,
    type_uid: DETECTION_FINDING * 100 + ACTIVITY_CREATE,
    severity_id: d.severity_id,
    severity: SEVERITY[d.severity_id],
    time: f.at,
    start_time: f.first_time,
    end_time: f.last_time,
    count: f.count,
    status_id: 1,
    status: 'New',
    is_alert: true,
    message: `${title}${groupText ? ` (${groupText})` : ''}:${threshold || ' a matching event'}`,
    metadata: {
      version: OCSF_VERSION,
      product: { name: 'Weir', vendor_name: 'Weir', version: f.weirVersion },
      uid: f.uid,
    },
    finding_info: {
      uid: f.uid,
      title,
      ...(d.description ? { desc: d.description } : {}),
      analytic: { uid: f.rule.id, name: f.rule.name, type_id: 1, type: 'Rule', version: String(f.rule.version) },
      ...(attacks.length ? { attacks } : {}),
      types: [d.threshold ? 'Threshold' : 'Match'],
      first_seen_time: f.first_time,
      last_seen_time: f.last_time,
      related_events: f.event_ids.map((uid) => ({ uid })),
      related_events_count: f.count,
    },
    ...(Object.keys(f.group).length ? { unmapped: { weir_group: f.group } } : {}),
    evidences: [{ data: f.sample }],
  };
}
