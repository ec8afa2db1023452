// Built-in mappings ship with the code (pipeline/normalize/builtin) and are brought into
// the database at every start. Idempotent and safe when several processes start at once:
// the definition is created under its unique key (conflict: nothing), and each one is
// updated under a row lock, so the second process finds the work done.
//
// A changed built-in document becomes a new version. It goes live only when the live
// version is the newest built-in one (or none is live): a version a platform
// administrator published, or a rollback they made, stays live until they change it.
import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import { GLOBAL_SCOPE } from '../../core/scope.js';
import { documentChecksum } from './service.js';
import type { MappingStore } from './store.js';

export interface BuiltinMapping {
  platform: string;
  stream: string;
  name: string;
  description: string;
  document: object;
}

export interface SeedReport {
  definitionsCreated: number;
  versionsAdded: number;
  madeLive: number;
}

export const BUILTIN_COMMENT = 'built-in';

export async function seedBuiltins(
  deps: { store: MappingStore; clock: Clock; transaction: <T>(fn: () => Promise<T>) => Promise<T> },
  builtins: readonly BuiltinMapping[],
): Promise<SeedReport> {
  const { store, clock, transaction } = deps;
  const report: SeedReport = { definitionsCreated: 0, versionsAdded: 0, madeLive: 0 };
  for (const b of builtins) {
    // One transaction per definition: a slow start never holds every lock at once.
    await transaction(async () => {
      const now = clock.now();
      const ensured = await store.ensureDefinition(
        {
          id: newId(),
          organization_id: null,
          platform: b.platform,
          stream: b.stream,
          name: b.name,
          description: b.description,
          builtin: true,
        },
        now,
      );
      if (ensured.created) report.definitionsCreated++;
      await store.lockDefinition(ensured.id);
      const def = await store.getDefinition(GLOBAL_SCOPE, ensured.id);
      if (!def) return;
      if (def.name !== b.name || def.description !== b.description)
        await store.describeDefinition(def.id, b.name, b.description);

      const document = b.document as Record<string, unknown>;
      const checksum = documentChecksum(document);
      const newest = await store.newestBuiltinVersion(def.id);
      if (newest?.checksum === checksum) return;
      const added = await store.insertVersion(
        {
          id: newId(),
          definition_id: def.id,
          document,
          checksum,
          comment: BUILTIN_COMMENT,
          builtin: true,
          created_by: null,
        },
        now,
      );
      report.versionsAdded++;
      if (def.live_version_id === null || def.live_version_id === newest?.id) {
        await store.setLive(def.id, added.id, now);
        report.madeLive++;
      }
    });
  }
  return report;
}
