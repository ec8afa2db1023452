// Planning detection rules, saved queries and the schedules that run them. A kind the
// document leaves out is left as it is (older bundles carry none of them).
import { changed, type Json, type PlanContext } from './plan.js';

const IMPORT_COMMENT = 'configuration import';

/** Detection rules: a changed definition is a new version (live at once), as an edit makes one. */
export function planRules(ctx: PlanContext): void {
  const { deps, actor, organizationId, doc, current, cur, step } = ctx;
  for (const r of doc.detection_rules ?? []) {
    const existing = (cur.detection_rules ?? []).find((x) => x.name === r.name);
    const definition = r.definition as never;
    if (!existing) {
      step(
        'detection_rule',
        r.name,
        'create',
        {},
        async () =>
          (
            await deps.rules.create(actor, {
              name: r.name,
              organization_id: organizationId,
              enabled: r.enabled,
              definition,
              comment: IMPORT_COMMENT,
            })
          ).id,
      );
      continue;
    }
    const id = current.ids.rule.get(r.name)!;
    const changes = changed(r, existing);
    if (!changes.length) {
      step('detection_rule', r.name, 'unchanged', { id });
      continue;
    }
    step('detection_rule', r.name, 'update', { changes, id }, async () => {
      await deps.rules.update(actor, id, {
        ...(changes.includes('enabled') ? { enabled: r.enabled } : {}),
        ...(changes.includes('definition') ? { definition, comment: IMPORT_COMMENT } : {}),
      });
      return id;
    });
  }
}

/** Saved queries: a live query's integration by name (the document's or the organization's). */
export function planSavedQueries(ctx: PlanContext): void {
  const { deps, actor, organizationId, doc, current, cur, step, integrationIds, savedQueryIds } = ctx;
  const integrations = new Set([
    ...doc.integrations.map((i) => i.name.toLowerCase()),
    ...[...current.ids.integration.keys()].map((n) => n.toLowerCase()),
  ]);
  for (const q of doc.saved_queries ?? []) {
    if (q.integration !== null && !integrations.has(q.integration.toLowerCase())) {
      step('saved_query', q.name, 'conflict', {
        reason: `integration "${q.integration}" is neither in the document nor in the organization`,
      });
      continue;
    }
    const { organization_id: _org, integration_id: _int, ...definition } = q.query;
    const query = () => ({
      ...definition,
      ...(q.integration !== null ? { integration_id: integrationIds.get(q.integration.toLowerCase())! } : {}),
    });
    const existing = (cur.saved_queries ?? []).find((x) => x.name === q.name);
    if (!existing) {
      step('saved_query', q.name, 'create', {}, async () => {
        const created = await deps.queries.create(actor, {
          name: q.name,
          description: q.description,
          organization_id: organizationId,
          query: query(),
        });
        savedQueryIds.set(q.name, created.id);
        return created.id;
      });
      continue;
    }
    const id = current.ids.savedQuery.get(q.name)!;
    const lower = (o: { integration: string | null }) => o.integration?.toLowerCase() ?? null;
    const changes = changed(
      { description: q.description, integration: lower(q), query: definition },
      { description: existing.description, integration: lower(existing), query: existing.query },
    );
    if (!changes.length) {
      step('saved_query', q.name, 'unchanged', { id });
      continue;
    }
    step('saved_query', q.name, 'update', { changes, id }, async () => {
      await deps.queries.update(actor, id, {
        ...(changes.includes('description') ? { description: q.description } : {}),
        ...(changes.includes('query') || changes.includes('integration') ? { query: query() } : {}),
      });
      return id;
    });
  }
}

/**
 * Schedules: their saved query by name. A schedule has no edit in the API, so a changed one is
 * replaced: deleted and created again under its name (a new id; its earlier runs stay in the
 * search history).
 */
export function planSchedules(ctx: PlanContext): void {
  const { deps, actor, doc, current, cur, step, savedQueryIds } = ctx;
  const queries = new Set([...(doc.saved_queries ?? []).map((q) => q.name), ...current.ids.savedQuery.keys()]);
  for (const s of doc.schedules ?? []) {
    if (!queries.has(s.query)) {
      step('schedule', s.name, 'conflict', {
        reason: `saved query "${s.query}" is neither in the document nor in the organization`,
      });
      continue;
    }
    const create = async () =>
      (
        await deps.schedules.create(actor, {
          name: s.name,
          query_id: savedQueryIds.get(s.query)!,
          ...(s.cron !== null ? { cron: s.cron, timezone: s.timezone } : {}),
          ...(s.interval_seconds !== null ? { interval_seconds: s.interval_seconds } : {}),
          notify: s.notify as Json,
          enabled: s.enabled,
        })
      ).id;
    const existing = (cur.schedules ?? []).find((x) => x.name === s.name);
    if (!existing) {
      step('schedule', s.name, 'create', {}, create);
      continue;
    }
    const id = current.ids.schedule.get(s.name)!;
    // An interval schedule's time zone is not used: a difference there is no change.
    const timing = (o: typeof s) => ({ ...o, timezone: o.cron === null ? null : o.timezone });
    const changes = changed(timing(s), timing(existing), []);
    if (!changes.length) {
      step('schedule', s.name, 'unchanged', { id });
      continue;
    }
    step('schedule', s.name, 'update', { changes, id }, async () => {
      await deps.schedules.remove(actor, id);
      return create();
    });
  }
}
