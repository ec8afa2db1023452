// The destinations as the one pass sees them (which may receive copies, and their shadows):
// read about every `refreshMs` by whichever process runs the pass, and at once (at most
// every `minRefreshMs`) when a route names a destination the snapshot does not know.
import type { DestinationDirectory, DestinationRuntime } from './ports.js';

export function createDestinationsSnapshot(directory: Pick<DestinationDirectory, 'list'>, refreshMs: number, minRefreshMs: number) {
  let current: ReadonlyMap<string, DestinationRuntime> | undefined;
  let loadedAt = -Infinity;
  let loading: Promise<ReadonlyMap<string, DestinationRuntime>> | undefined;

  function load(): Promise<ReadonlyMap<string, DestinationRuntime>> {
    loading ??= directory
      .list()
      .then((list) => {
        current = new Map(list.map((d) => [d.id, d]));
        loadedAt = Date.now();
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
