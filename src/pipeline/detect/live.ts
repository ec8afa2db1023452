// An organization's live detection rules as a pass receives them, compiled once per
// fingerprint in each thread (or on the consumer's thread) and kept while they stay live.
import { compileDetection, type CompiledDetection, type DetectionJob } from './evaluate.js';

const MAX_ORGANIZATIONS = 256;
const compiled = new Map<number, { fingerprint: string; detection: CompiledDetection }>();

/** The organization's compiled rules (none: vendor findings only), or undefined without a job. */
export function detectHook(organizationId: number, job: DetectionJob | undefined): CompiledDetection | undefined {
  if (!job) return undefined;
  const hit = compiled.get(organizationId);
  if (hit && hit.fingerprint === job.fingerprint) return hit.detection;
  const detection = compileDetection(job);
  if (!hit && compiled.size >= MAX_ORGANIZATIONS) compiled.delete(compiled.keys().next().value!);
  compiled.set(organizationId, { fingerprint: job.fingerprint, detection });
  return detection;
}
