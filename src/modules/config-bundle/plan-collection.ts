// Planning what collects and normalizes: integrations, mappings, collector settings.
import { changed, markers, pick, type PlanContext } from './plan.js';
import { setPath } from './snapshot.js';

/** Integrations: platform fixed; parents by name; parents are applied before children. */
export function planIntegrations(ctx: PlanContext): void {
  const { deps, actor, scope, organizationId, doc, current, cur, secrets, step, given, missing } = ctx;
  const intNames = new Map([...current.ids.integration.keys()].map((n) => [n.toLowerCase(), n]));
  const intIds = ctx.integrationIds;
  for (const i of doc.integrations) intNames.set(i.name.toLowerCase(), i.name);
  const ordered = [...doc.integrations].sort((a, b) => Number(a.parent !== null) - Number(b.parent !== null));
  for (const i of ordered) {
    const existing = cur.integrations.find((x) => x.name.toLowerCase() === i.name.toLowerCase());
    if (i.parent !== null && !intNames.has(i.parent.toLowerCase())) {
      step('integration', i.name, 'conflict', {
        reason: `parent "${i.parent}" is neither in the document nor in the organization`,
      });
      continue;
    }
    const refs = markers(i.config);
    const config = structuredClone(i.config);
    for (const m of refs) setPath(config, m.path, given(m.ref) ? secrets[m.ref] : { configured: true });
    const parentId = () => (i.parent === null ? null : (intIds.get(i.parent.toLowerCase()) ?? null));
    if (!existing) {
      const need = missing(refs.map((m) => m.ref));
      if (need.length) {
        step('integration', i.name, 'conflict', { reason: `secret needed: ${need.join(', ')}` });
        continue;
      }
      step('integration', i.name, 'create', {}, async () => {
        const created = await deps.integrations.create(actor, {
          name: i.name,
          platform: i.platform,
          organization_id: organizationId,
          config,
          is_active: i.is_active,
          parent_id: parentId(),
        });
        intIds.set(i.name.toLowerCase(), created.id);
        return created.id;
      });
      continue;
    }
    if (existing.platform !== i.platform) {
      step('integration', i.name, 'conflict', {
        reason: `exists with platform ${existing.platform}, not ${i.platform}`,
      });
      continue;
    }
    const id = current.ids.integration.get(existing.name)!;
    const changes = changed(
      { is_active: i.is_active, parent: i.parent?.toLowerCase() ?? null, config: i.config },
      { is_active: existing.is_active, parent: existing.parent?.toLowerCase() ?? null, config: existing.config },
    );
    if (refs.some((m) => given(m.ref)) && !changes.includes('config')) changes.push('config');
    if (!changes.length) {
      step('integration', i.name, 'unchanged', { id });
      continue;
    }
    step('integration', i.name, 'update', { changes, id }, async () => {
      await deps.integrations.update(scope, id, {
        ...(changes.includes('config') ? { config } : {}),
        ...(changes.includes('is_active') ? { is_active: i.is_active } : {}),
        ...(changes.includes('parent') ? { parent_id: parentId() } : {}),
      });
      return id;
    });
  }
}

/** Mappings: one definition per (platform, stream); a changed document is a new version. */
export function planMappings(ctx: PlanContext): void {
  const { deps, actor, organizationId, doc, current, cur, step } = ctx;
  for (const m of doc.mappings) {
    const existing = cur.mappings.find((x) => x.name === m.name);
    const other = cur.mappings.find((x) => x.name !== m.name && x.platform === m.platform && x.stream === m.stream);
    if (other) {
      step('mapping', m.name, 'conflict', {
        reason: `${m.platform} / ${m.stream} is already mapped by "${other.name}"`,
      });
      continue;
    }
    if (existing && (existing.platform !== m.platform || existing.stream !== m.stream)) {
      step('mapping', m.name, 'conflict', { reason: `exists for ${existing.platform} / ${existing.stream}` });
      continue;
    }
    // An existing definition keeps its history: a new version when the live document differs.
    const changes = existing ? changed(m, existing, ['version', 'versions']) : [];
    if (existing && !changes.length) {
      step('mapping', m.name, 'unchanged', { id: current.ids.mapping.get(m.name)! });
      continue;
    }
    if (existing) {
      step('mapping', m.name, 'update', { changes, id: current.ids.mapping.get(m.name)! }, async () => {
        const id = await deps.mappings.ensureOwn(organizationId, {
          platform: m.platform,
          stream: m.stream,
          name: m.name,
          description: m.description,
        });
        if (m.document && changes.includes('document'))
          await deps.mappings.publish(actor, id, { document: m.document, comment: 'configuration import' });
        return id;
      });
      continue;
    }
    // A missing definition gets the exported history: each version in order, then the live one made live again.
    const history = m.versions?.length
      ? m.versions
      : m.document
        ? [{ version: m.version ?? 1, comment: 'configuration import', document: m.document }]
        : [];
    step('mapping', m.name, 'create', {}, async () => {
      const id = await deps.mappings.ensureOwn(organizationId, {
        platform: m.platform,
        stream: m.stream,
        name: m.name,
        description: m.description,
      });
      let liveId: string | undefined;
      let lastId: string | undefined;
      for (const v of history) {
        lastId = (await deps.mappings.publish(actor, id, { document: v.document, comment: v.comment })).id;
        if (v.version === m.version) liveId = lastId;
      }
      if (liveId !== undefined && liveId !== lastId) await deps.mappings.rollback(actor, id, { version_id: liveId });
      return id;
    });
  }
}

/** Collector settings: installation-wide, so only platform scope changes them. */
export function planCollectorSettings(ctx: PlanContext): void {
  const { deps, actor, scope, doc, cur, step } = ctx;
  if (doc.collector_settings) {
    const changes = changed(
      doc.collector_settings,
      pick(cur.collector_settings ?? {}, Object.keys(doc.collector_settings)),
      [],
    );
    const settings = doc.collector_settings;
    if (!changes.length) step('collector_settings', 'collector_settings', 'unchanged');
    else if (!scope.global)
      step('collector_settings', 'collector_settings', 'conflict', {
        changes,
        reason:
          'collector settings are installation-wide: importing them needs platform scope (leave collector_settings out to keep them)',
      });
    else
      step('collector_settings', 'collector_settings', 'update', { changes }, async () => {
        await deps.collectorSettings.updateConfig(actor, pick(settings, changes) as never);
        return undefined;
      });
  }
}
