// The destinations as the one pass sees them (which may receive copies, and their shadows):
// read about every `refreshMs` by whichever process runs the pass, and at once (at most
// every `minRefreshMs`) when a route names a destination the snapshot does not know, and
// after this process changed a destination (directory.onChange).
import type { DestinationDirectory, DestinationRuntime } from './ports.js';

export function createDestinationsSnapshot(
  directory: Pick<DestinationDirectory, 'list' | 'onChange'>,
  refreshMs: number,
  minRefreshMs: number,
) {
  let current: ReadonlyMap<string, DestinationRuntime> | undefined;
  let loadedAt = -Infinity;
  let loading: Promise<ReadonlyMap<string, DestinationRuntime>> | undefined;
  let stale = false;
  // A load under way may have read the list before the change: the next get reads it again.
  directory.onChange?.(() => {
    loadedAt = -Infinity;
    stale = true;
  });

  function load(): Promise<ReadonlyMap<string, DestinationRuntime>> {
    loading ??= (async () => {
      stale = false;
      return directory.list();
    })()
      .then((list) => {
        current = new Map(list.map((d) => [d.id, d]));
        if (!stale) loadedAt = Date.now();
        return current;
      })
      .finally(() => (loading = undefined));
    return loading;
  }

  return {
    async get(refresh: boolean): Promise<ReadonlyMap<string, DestinationRuntime>> {
      const age = Date.now() - loadedAt;
      if (current && age < refreshMs && !(refresh && age >= minRefreshMs)) return current;
      return load();
    },
  };
}
