// Planning destinations and the routes that deliver to them.
import type { CredentialValue } from '../../core/credentials.js';
import { changed, markers, type Json, type PlanContext } from './plan.js';
import { setPath } from './snapshot.js';

/** Destinations: type fixed; a new one needs every credential field. */
export function planDestinations(ctx: PlanContext): void {
  const { deps, actor, organizationId, doc, current, cur, secrets, step, given, missing, destIds } = ctx;
  for (const d of doc.destinations) {
    const existing = cur.destinations.find((x) => x.name === d.name);
    const refs = markers(d.credential);
    const credential: Record<string, CredentialValue> = {};
    for (const m of refs) if (given(m.ref)) setPath(credential as Json, m.path, secrets[m.ref]);
    const body = {
      name: d.name,
      description: d.description,
      config: d.config,
      delivery: d.delivery,
      enabled: d.enabled,
    };
    if (!existing) {
      const need = missing(refs.map((m) => m.ref));
      if (need.length) {
        step('destination', d.name, 'conflict', { reason: `secret needed: ${need.join(', ')}` });
        continue;
      }
      step('destination', d.name, 'create', {}, async () => {
        const created = await deps.destinations.create(actor, {
          ...body,
          type: d.type,
          organization_id: organizationId,
          ...(refs.length ? { credential } : {}),
        });
        destIds.set(d.name, created.id);
        return created.id;
      });
      continue;
    }
    if (existing.type !== d.type) {
      step('destination', d.name, 'conflict', { reason: `exists with type ${existing.type}, not ${d.type}` });
      continue;
    }
    const id = current.ids.destination.get(d.name)!;
    const changes = changed(body, {
      name: existing.name,
      description: existing.description,
      config: existing.config,
      delivery: existing.delivery,
      enabled: existing.enabled,
    });
    const newSecrets = refs.filter((m) => given(m.ref));
    if (newSecrets.length) changes.push('credential');
    if (!changes.length) {
      step('destination', d.name, 'unchanged', { id });
      continue;
    }
    step('destination', d.name, 'update', { changes, id }, async () => {
      const patch = Object.fromEntries(changes.filter((c) => c !== 'credential').map((c) => [c, (body as Json)[c]]));
      if (Object.keys(patch).length) await deps.destinations.update(actor, id, patch);
      if (newSecrets.length) await deps.destinations.patchCredential(actor, id, credential);
      return id;
    });
  }
}

/** Routes: destinations by name (the document's, the organization's, or global ones). */
export function planRoutes(ctx: PlanContext): void {
  const { deps, actor, organizationId, doc, current, cur, step, destIds } = ctx;
  const destNames = new Set([
    ...doc.destinations.map((d) => d.name),
    ...current.ids.destination.keys(),
    ...current.ids.globalDestination.keys(),
  ]);
  for (const r of [...doc.routes].sort((a, b) => a.position - b.position)) {
    const unknown = r.destinations.filter((n) => !destNames.has(n));
    if (unknown.length) {
      step('route', r.name, 'conflict', {
        reason: `unknown destination${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`,
      });
      continue;
    }
    const existing = cur.routes.find((x) => x.name === r.name);
    const destinationIds = () => r.destinations.map((n) => destIds.get(n) ?? current.ids.globalDestination.get(n)!);
    const definition = () => ({
      description: r.description,
      enabled: r.enabled,
      condition: r.condition ?? null,
      transforms: r.transforms,
      destination_ids: destinationIds(),
      final: r.final,
      position: r.position,
      comment: 'configuration import',
    });
    if (!existing) {
      step(
        'route',
        r.name,
        'create',
        {},
        async () =>
          (await deps.routes.create(actor, { name: r.name, organization_id: organizationId, ...definition() })).id,
      );
      continue;
    }
    const id = current.ids.route.get(r.name)!;
    const changes = changed(r, existing);
    if (!changes.length) {
      step('route', r.name, 'unchanged', { id });
      continue;
    }
    step('route', r.name, 'update', { changes, id }, async () => {
      const all = definition() as Json;
      await deps.routes.update(
        actor,
        id,
        Object.fromEntries([
          ...changes.filter((c) => c !== 'destinations').map((c) => [c, all[c]]),
          ...(changes.includes('destinations') ? [['destination_ids', all.destination_ids]] : []),
          ['comment', 'configuration import'],
        ]),
      );
      return id;
    });
  }
}
