// The pass on the calling thread (a worker process without a pool, tests): the compiled
// mapping and routes of the caller are used as they are; outbox rows are compressed on
// libuv's thread pool.
import type { OcsfIssue } from '../../ocsf/types.js';
import { encodeDeliveries } from '../delivery/routing-write.js';
import { enrichHook } from '../enrich/live.js';
import { detectHook } from '../detect/live.js';
import { lapAfter } from './timings.js';
import { runPass, type PassRunner } from './pass.js';

export function inlinePassRunner(validate: (event: Record<string, unknown>) => readonly OcsfIssue[]): PassRunner {
  return async (job) => {
    const result = runPass(job.batch, {
      mapping: job.mapping,
      validate,
      policy: job.policy,
      ...(job.receivedAt ? { receivedAt: job.receivedAt } : {}),
      routes: job.routes.compiled(),
      destinations: job.destinations,
      lineage: job.lineage,
      enrich: enrichHook(job.batch.organization_id, job.enrichment),
      detect: detectHook(job.batch.organization_id, job.detection),
    });
    await encodeDeliveries(result.write);
    lapAfter(result.timings, 'encode');
    return result;
  };
}
