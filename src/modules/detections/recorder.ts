// What the one pass found, settled in the batch's own transaction (docs/detections.md): vendor
// findings become or update detections by their uid; threshold hits add to their windows, and a
// window that reaches its count fires once; a rule with suppression fires once per group until
// the suppression ends; a plain rule fires per matching event. Every firing becomes a detection
// and an OCSF Detection Finding, which is routed like any event (emit). All of it commits with
// the batch's mark, so a redelivered batch settles nothing twice, any worker process sees the
// same windows, and a restart loses nothing.
import { newId } from '../../core/ids.js';
import type { DetectionJob, DetectOutput, RuleHit, VendorFinding } from '../../pipeline/detect/evaluate.js';
import { ruleFinding } from '../../pipeline/detect/finding.js';
import type { RuleSpec } from '../../pipeline/detect/rules.js';
import type { NormalizedRecord } from '../../pipeline/envelope.js';
import type { DetectionStore, NewDetection } from './store.js';

/** The stream findings of an integration's events are counted and routed under. */
export const FINDINGS_STREAM = 'weir.detections';

export interface BatchRef {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
}

/** Routes and counts events Weir made (the findings) in the open transaction. */
export type Emit = (batch: BatchRef, records: NormalizedRecord[], at: Date) => Promise<void>;

export interface Settled {
  vendor: number;
  fired: number;
}

function mitreOf(finding: Record<string, unknown>): { tactics: string[]; techniques: string[] } {
  const info = (finding.finding_info ?? {}) as Record<string, unknown>;
  const attacks = [...((info.attacks as unknown[]) ?? []), ...((finding.attacks as unknown[]) ?? [])] as Record<
    string,
    { uid?: unknown }
  >[];
  const tactics = new Set<string>();
  const techniques = new Set<string>();
  for (const a of attacks) {
    if (typeof a?.tactic?.uid === 'string') tactics.add(a.tactic.uid);
    if (typeof a?.technique?.uid === 'string') techniques.add(a.technique.uid);
    if (typeof a?.sub_technique?.uid === 'string') techniques.add(a.sub_technique.uid);
  }
  return { tactics: [...tactics], techniques: [...techniques] };
}

function severity(v: number): number {
  return Number.isInteger(v) && v >= 0 && v <= 6 ? v : 0;
}

export function createRecorder(deps: { store: DetectionStore; weirVersion: string }) {
  const { store } = deps;

  async function vendor(batch: BatchRef, findings: VendorFinding[], at: Date): Promise<number> {
    const history = [];
    for (const f of findings) {
      const info = (f.ocsf.finding_info ?? {}) as Record<string, unknown>;
      const time = new Date(f.time);
      const row: NewDetection = {
        id: newId(),
        organization_id: batch.organization_id,
        source: 'vendor',
        uid: f.uid,
        rule_id: null,
        rule_version: null,
        schedule_id: null,
        search_id: null,
        integration_id: batch.integration_id,
        stream: batch.stream,
        title: f.title.slice(0, 500),
        description: typeof info.desc === 'string' ? info.desc.slice(0, 10_000) : '',
        severity_id: severity(f.severity_id),
        mitre: mitreOf(f.ocsf),
        event_ids: [f.event_id],
        event_count: 1,
        finding: f.ocsf,
        first_seen_at: time,
        last_seen_at: time,
      };
      const done = await store.upsertVendor(row, at);
      history.push({
        id: newId(),
        detection_id: done.id,
        at,
        actor: 'vendor',
        kind: done.inserted ? ('created' as const) : ('updated' as const),
        change: done.inserted
          ? { source: 'vendor', uid: f.uid, event_id: f.event_id }
          : {
              event_id: f.event_id,
              severity_id: { from: done.before!.severity_id, to: row.severity_id },
              title: { from: done.before!.title, to: row.title },
            },
        comment: null,
      });
    }
    await store.addHistory(history);
    return findings.length;
  }

  /** The hits that fire now, each with the evidence and count its finding reports. */
  async function firing(batch: BatchRef, hits: RuleHit[], rules: Map<string, RuleSpec>, at: Date) {
    const out: { hit: RuleHit; rule: RuleSpec; uid: string; count: number; event_ids: string[] }[] = [];
    const windowed = hits.filter((h) => h.window_start !== null);
    const totals = await store.addWindows(
      windowed.map((h) => ({
        rule_id: h.rule_id,
        group_key: h.group_key,
        window_start: new Date(h.window_start!),
        organization_id: batch.organization_id,
        count: h.count,
        event_ids: h.event_ids,
      })),
      at,
    );
    const byKey = new Map(
      totals.map((t) => [`${t.rule_id}\u0000${t.group_key}\u0000${new Date(t.window_start).getTime()}`, t]),
    );
    const decided: { rule_id: string; group_key: string; window_start: Date }[] = [];
    const candidates: { hit: RuleHit; rule: RuleSpec; uid: string; count: number; event_ids: string[] }[] = [];
    for (const hit of hits) {
      const rule = rules.get(hit.rule_id);
      if (!rule) continue;
      if (hit.window_start !== null) {
        const total = byKey.get(`${hit.rule_id}\u0000${hit.group_key}\u0000${hit.window_start}`);
        const needed = rule.definition.threshold?.count ?? 1;
        if (!total || total.fired_at || total.count < needed) continue;
        decided.push({ rule_id: hit.rule_id, group_key: hit.group_key, window_start: new Date(hit.window_start) });
        candidates.push({
          hit,
          rule,
          uid: `${hit.rule_id}:${hit.group_key}:${new Date(hit.window_start).toISOString()}`,
          count: total.count,
          event_ids: total.event_ids,
        });
      } else if ((rule.definition.suppression_seconds ?? 0) > 0) {
        candidates.push({
          hit,
          rule,
          uid: `${hit.rule_id}:${hit.group_key}:${at.toISOString()}`,
          count: hit.count,
          event_ids: hit.event_ids,
        });
      } else {
        out.push({ hit, rule, uid: `${hit.rule_id}:${hit.group_key}`, count: hit.count, event_ids: hit.event_ids });
      }
    }
    // A window decided (fired or suppressed) never fires again.
    await store.markFired(decided, at);
    const suppressing = candidates.filter((c) => (c.rule.definition.suppression_seconds ?? 0) > 0);
    const claimed = await store.claimSuppressions(
      suppressing.map((c) => ({
        rule_id: c.hit.rule_id,
        group_key: c.hit.group_key,
        organization_id: batch.organization_id,
        until: new Date(at.getTime() + c.rule.definition.suppression_seconds! * 1000),
      })),
      at,
    );
    for (const c of candidates) {
      if ((c.rule.definition.suppression_seconds ?? 0) > 0 && !claimed.has(`${c.hit.rule_id}\u0000${c.hit.group_key}`))
        continue;
      out.push(c);
    }
    return out;
  }

  return {
    /** Settles a batch's detection output in the open transaction; `job` is the rules the pass ran. */
    async record(
      batch: BatchRef,
      detect: DetectOutput,
      job: DetectionJob | undefined,
      at: Date,
      emit: Emit,
    ): Promise<Settled> {
      const vendorCount = detect.findings.length ? await vendor(batch, detect.findings, at) : 0;
      if (detect.hits.length === 0 || !job) return { vendor: vendorCount, fired: 0 };
      const rules = new Map(job.rules.map((r) => [r.id, r]));
      const fire = await firing(batch, detect.hits, rules, at);
      if (fire.length === 0) return { vendor: vendorCount, fired: 0 };
      const rows: NewDetection[] = fire.map((f) => {
        const id = newId();
        const finding = ruleFinding({
          uid: id,
          rule: f.rule,
          count: f.count,
          event_ids: f.event_ids,
          first_time: f.hit.first_time,
          last_time: f.hit.last_time,
          group: f.hit.group,
          sample: f.hit.sample,
          at: at.getTime(),
          weirVersion: deps.weirVersion,
        });
        const d = f.rule.definition;
        return {
          id,
          organization_id: batch.organization_id,
          source: 'rule',
          uid: f.uid,
          rule_id: f.rule.id,
          rule_version: f.rule.version,
          schedule_id: null,
          search_id: null,
          integration_id: batch.integration_id,
          stream: batch.stream,
          title: (d.title ?? f.rule.name).slice(0, 500),
          description: d.description ?? '',
          severity_id: d.severity_id,
          mitre: { tactics: d.mitre?.tactics ?? [], techniques: d.mitre?.techniques ?? [] },
          event_ids: f.event_ids,
          event_count: f.count,
          finding,
          first_seen_at: new Date(f.hit.first_time),
          last_seen_at: new Date(f.hit.last_time),
        };
      });
      const inserted = new Set(await store.insertDetections(rows, at));
      const made = rows.filter((r) => inserted.has(r.id));
      await store.addHistory(
        made.map((r) => ({
          id: newId(),
          detection_id: r.id,
          at,
          actor: 'rule',
          kind: 'created' as const,
          change: {
            source: 'rule',
            rule_id: r.rule_id,
            rule_version: r.rule_version,
            uid: r.uid,
            event_count: r.event_count,
          },
          comment: null,
        })),
      );
      if (made.length > 0) {
        const findingBatch = { ...batch, stream: FINDINGS_STREAM };
        await emit(
          findingBatch,
          made.map((r) => ({
            id: newId(),
            organization_id: batch.organization_id,
            integration_id: batch.integration_id,
            stream: FINDINGS_STREAM,
            received_at: at.toISOString(),
            mapping_version_id: '',
            valid: true,
            ocsf: r.finding,
          })),
          at,
        );
      }
      return { vendor: vendorCount, fired: made.length };
    },
  };
}

export type Recorder = ReturnType<typeof createRecorder>;
