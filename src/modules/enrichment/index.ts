import type { Kysely } from 'kysely';
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { inTransaction } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { CredentialCipher } from '../../platform/crypto/credentials.js';
import type { Logger } from '../../platform/logger.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import type { QueuePort } from '../../platform/queue/port.js';
import type { PolicyCounters } from '../../pipeline/enrich/policy.js';
import type { OrgDataStep } from '../organizations/jobs.js';
import { activityWriter } from './common.js';
import { createEnrichmentCache } from './live.js';
import { createExternalLookups, createFeedRunner, enrichmentBeatTasks, enrichmentJobs } from './jobs.js';
import { createOperations } from './operations.js';
import { createPoliciesService } from './policies.js';
import { enrichmentRoutes } from './routes.js';
import { createSourcesService } from './sources.js';
import { createEnrichmentStore } from './store.js';
import { createTablesService } from './tables.js';

export interface EnrichmentWiring {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  queue: QueuePort;
  cipher: CredentialCipher;
  net: NetPolicy;
  editions: { isEnterprise(): Promise<boolean> };
  /** How stale a process's view of policies and tables may get (the mappings' refresh). */
  pollMs: number;
  dataDeletion?: { addStep(step: OrgDataStep): void };
  /** The organization's recent events, mapped by its live mappings (normalization). */
  samples(organizationId: number, limit: number): Promise<Record<string, unknown>[]>;
}

/** Every class_uid a mapping document names (its rules'). */
function classUids(doc: unknown, out = new Set<number>()): Set<number> {
  if (Array.isArray(doc)) for (const d of doc) classUids(d, out);
  else if (doc && typeof doc === 'object') {
    for (const [k, v] of Object.entries(doc)) {
      if (k === 'class_uid' && typeof v === 'number') out.add(v);
      else if (typeof v === 'object') classUids(v, out);
    }
  }
  return out;
}

/** The enrichment family (API /api/collectors/enrichment) and what the one pass needs of it. */
export function wireEnrichment(deps: EnrichmentWiring) {
  const { db, clock, logger } = deps;
  const store = createEnrichmentStore(db);
  const activity = activityWriter(store, () => clock.now());
  const tables = createTablesService({ store, clock, activity });
  const sources = createSourcesService({
    store,
    clock,
    activity,
    cipher: deps.cipher,
    editions: deps.editions,
    createFeedTable: async (actor: Actor, organizationId: number, name: string) => {
      const created = await tables.createEmpty(actor, organizationId, name);
      return created.id;
    },
  });
  const policies = createPoliciesService({ store, clock, activity });
  const operations = createOperations({
    store,
    sources,
    policies,
    now: () => clock.now(),
    net: deps.net,
    samples: deps.samples,
    classesOf: async (organizationId) => [...classUids(await store.liveMappingDocuments(organizationId))],
  });
  const feeds = createFeedRunner({
    store,
    tables,
    sources,
    activity,
    clock,
    net: deps.net,
    transaction: (fn) => inTransaction(db, fn),
    logger,
  });
  const external = createExternalLookups({ store, sources, activity, net: deps.net, clock, logger });
  const live = createEnrichmentCache({ store, pollMs: deps.pollMs });
  deps.dataDeletion?.addStep({
    name: 'enrichment',
    run: async (organizationId) => ({ rows: await store.deleteOrganization(organizationId) }),
  });

  return {
    tables,
    sources,
    policies,
    operations,
    feeds,
    /** What the one pass needs (normalization): the live job, the live series, background lookups. */
    pass: {
      job: (organizationId: number) => live.get(organizationId),
      /** Adds a batch's counters to the live series (in the batch's transaction). */
      record: async (organizationId: number, counters: readonly PolicyCounters[], at: Date) => {
        const minute = new Date(Math.floor(at.getTime() / 60_000) * 60_000);
        await store.addMetrics(
          organizationId,
          minute,
          counters
            .filter((c) => c.seen > 0)
            .map(({ policy_id, seen, hits, misses, errors, unanswered, micros }) => ({
              policy_id,
              seen,
              hits,
              misses,
              errors,
              unanswered,
              micros,
            })),
        );
      },
      wanted: (list: readonly [string, string[]][]) => external.want(list),
    },
    routes: (app: Api) => enrichmentRoutes(app, { tables, sources, policies, operations }),
    jobs: [enrichmentJobs({ feeds, store, clock })],
    beatTasks: enrichmentBeatTasks(deps.queue),
  };
}

export type PassEnrichment = ReturnType<typeof wireEnrichment>['pass'];
