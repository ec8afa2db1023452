// Each organization's live detection rules as the pass needs them (DetectionJob), read at most
// every `refreshMs` per organization by whichever process runs the pass; a rule changed in this
// process is live here at once, elsewhere within `refreshMs` (WEIR_MAPPING_REFRESH_MS).
import type { DetectionJob } from '../../pipeline/detect/evaluate.js';
import type { RuleDefinition } from '../../pipeline/detect/rules.js';
import type { DetectionStore } from './store.js';

export function createLiveRules(deps: { store: Pick<DetectionStore, 'liveRules'>; refreshMs: number }) {
  const cache = new Map<number, { at: number; job: Promise<DetectionJob> }>();

  // Always a job, with no rules too: the pass also picks out the findings vendors send (the
  // events a mapping puts in a finding class), which become detections whatever the rules.
  async function load(organizationId: number): Promise<DetectionJob> {
    const rules = await deps.store.liveRules(organizationId);
    return {
      fingerprint: rules.map((r) => `${r.id}:${r.version}`).join(','),
      rules: rules.map((r) => ({
        id: r.id,
        name: r.name,
        version: r.version,
        definition: r.definition as unknown as RuleDefinition,
      })),
    };
  }

  return {
    job(organizationId: number): Promise<DetectionJob> {
      const hit = cache.get(organizationId);
      if (hit && Date.now() - hit.at < deps.refreshMs) return hit.job;
      const job = load(organizationId);
      cache.set(organizationId, { at: Date.now(), job });
      job.catch(() => cache.delete(organizationId));
      return job;
    },
    invalidate(organizationId: number): void {
      cache.delete(organizationId);
    },
  };
}
