// Live queries (Enterprise; docs/search.md, Live queries): a query that names an integration
// runs against the vendor's API through the integration's connector instead of the event
// store. What the vendor can filter itself is translated to its own filter language
// (connectors/<vendor>/query.ts); the rows come back through the live mapping and the whole
// condition is applied again locally.
import type { Actor } from '../../core/actor.js';
import { AppError, errors } from '../../core/errors.js';
import type { LiveExecutor } from './runner.js';
import type { QueryInput } from './query/definition.js';

export interface LiveQueries extends LiveExecutor {
  /** Refuses what cannot run live: Community (403 edition.enterprise_required), an integration outside the organization (404), a vendor Weir cannot query (422). */
  check(actor: Actor, organizationId: number, input: QueryInput): Promise<void>;
}

export interface LiveDeps {
  requireEnterprise(feature: string): Promise<unknown>;
  integration(organizationId: number, id: number): Promise<{ platform: string } | undefined>;
  /** The executor of platforms that can be queried live, by platform; absent: none can. */
  executor(platform: string): (LiveExecutor & { streams: string[] }) | undefined;
}

export function createLiveQueries(deps: LiveDeps): LiveQueries {
  return {
    async check(_actor, organizationId, input) {
      await deps.requireEnterprise('Live queries against a vendor');
      const integration = await deps.integration(organizationId, input.integration_id!);
      if (!integration) throw errors.notFound('Integration');
      const exec = deps.executor(integration.platform);
      if (!exec) {
        throw new AppError('search.live_unsupported', {
          detail: `Platform ${integration.platform} cannot be queried live; search the event store instead`,
          details: { platform: integration.platform },
        });
      }
      if (input.stream !== undefined && !exec.streams.includes(input.stream)) {
        throw new AppError('search.live_unsupported', {
          detail: `Platform ${integration.platform} has no stream ${input.stream} to query live (${exec.streams.join(', ')})`,
          details: { platform: integration.platform, streams: exec.streams },
        });
      }
    },
    async run(run, input, plan, progress, signal) {
      const integration = await deps.integration(run.organization_id, input.integration_id!);
      const exec = integration ? deps.executor(integration.platform) : undefined;
      if (!exec) throw new Error('the integration can no longer be queried live');
      return exec.run(run, input, plan, progress, signal);
    },
  };
}
