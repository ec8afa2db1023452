// Observable type ids (observable.type_id) and their captions, from the catalog's
// `observable` object: what a normalized event's `observables[].type_id` may hold.
import { ocsfCatalog } from './catalog.js';
import type { OcsfCatalog } from './types.js';

const cache = new WeakMap<OcsfCatalog, ReadonlyMap<number, string>>();

export function observableTypes(catalog: OcsfCatalog = ocsfCatalog()): ReadonlyMap<number, string> {
  let types = cache.get(catalog);
  if (!types) {
    const captions = catalog.object('observable')?.attributes.type_id?.enum ?? {};
    types = new Map(Object.entries(captions).map(([id, caption]) => [Number(id), caption]));
    cache.set(catalog, types);
  }
  return types;
}
