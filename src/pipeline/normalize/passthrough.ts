// Streams whose events are already OCSF (Security Lake rows, OCSF another tool produced): with
// no mapping for the stream, each event passes through as itself. It stands where a compiled
// mapping stands, so the stage validates it, applies the policy and hands it on (enrich,
// route, detect, deliver) exactly as a mapped event; only an event without a class_uid the
// catalog knows stops here (docs/mappings.md, "Streams that are already OCSF").
import type { OcsfCatalog } from '../../ocsf/types.js';
import type { CompiledMapping, MapResult } from './types.js';

export const NOT_OCSF_DETAIL = 'not an OCSF event: no known class_uid';

/** The mapping of an already-OCSF stream: the event itself, once its class_uid is known. */
export function ocsfPassthrough(catalog: Pick<OcsfCatalog, 'classByUid'>): CompiledMapping {
  const none: ReadonlySet<string> = new Set();
  return {
    reads: none,
    expected: none,
    map(raw): MapResult {
      const uid = raw.class_uid;
      if (typeof uid !== 'number' || !Number.isInteger(uid) || catalog.classByUid(uid) === undefined)
        return { ok: false, kind: 'mapping_error', detail: NOT_OCSF_DETAIL };
      return { ok: true, event: raw };
    },
  };
}
