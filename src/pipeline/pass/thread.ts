// A worker thread of the pass pool (pool.ts): it keeps its own OCSF validator, compiled
// mappings (by version id) and compiled routes (by organization and fingerprint), runs the
// pass over the batches the main thread hands it and compresses their outbox rows here, so
// that the main thread is left with HTTP and the database.
import { createValidator, ocsfCatalog } from '../../ocsf/index.js';
import { encodeLinesSync } from '../batch-codec.js';
import { compileMapping } from '../normalize/compile.js';
import { ocsfPassthrough } from '../normalize/passthrough.js';
import type { StageMapping } from '../normalize/stage.js';
import type { CompiledMapping, MappingDocument } from '../normalize/types.js';
import { compileRoutes } from '../route/compile.js';
import type { CompiledRoutes } from '../route/types.js';
import { enrichHook } from '../enrich/live.js';
import { detectHook } from '../detect/live.js';
import { lapAfter } from './timings.js';
import { runPass, type PassResult } from './pass.js';
import { encodeDeliveries } from '../delivery/routing-write.js';
import type { PassTask } from './pool.js';

const catalog = ocsfCatalog();
const validator = createValidator(catalog);
const validate = (event: Record<string, unknown>) => validator.validate(event);
const MAX_CACHED = 256;

/** A small bounded cache: the oldest entry goes first (live versions and route sets are few). */
function bounded<V>() {
  const map = new Map<string, V>();
  return (key: string, make: () => V): V => {
    let value = map.get(key);
    if (value === undefined) {
      value = make();
      if (map.size >= MAX_CACHED) map.delete(map.keys().next().value!);
      map.set(key, value);
    }
    return value;
  };
}

const mappings = bounded<CompiledMapping | null>();
const routes = bounded<CompiledRoutes>();
/** The one passthrough of already-OCSF streams (stateless: shared by every batch). */
const passthrough: StageMapping = { versionId: null, compiled: ocsfPassthrough(catalog), passthrough: true };

function mappingOf(task: PassTask): StageMapping | undefined {
  const { mapping } = task;
  if (!mapping) return undefined;
  if (mapping.passthrough) return passthrough;
  const { versionId, document } = mapping;
  if (versionId === null) return undefined;
  const compiled = mappings(versionId, () => {
    try {
      return compileMapping(document as unknown as MappingDocument, catalog);
    } catch {
      return null; // the main thread's registry compiled it: this does not happen; without it the events are quarantined no_mapping
    }
  });
  return compiled ? { versionId, compiled } : undefined;
}

export default async function pass(task: PassTask): Promise<PassResult> {
  const result = runPass(task.batch, {
    mapping: mappingOf(task),
    validate,
    policy: task.policy,
    ...(task.receivedAt ? { receivedAt: task.receivedAt } : {}),
    routes: routes(`${task.batch.organization_id}\u0000${task.routes.fingerprint}`, () =>
      compileRoutes(task.routes.specs),
    ),
    destinations: new Map(task.destinations),
    lineage: task.lineage,
    enrich: enrichHook(task.batch.organization_id, task.enrichment),
    detect: detectHook(task.batch.organization_id, task.detection),
  });
  // Stored form of the outbox rows, compressed here (this thread's core), each distinct body once.
  await encodeDeliveries(result.write, encodeLinesSync);
  lapAfter(result.timings, 'encode');
  return result;
}
