// The organization's detection rules, saved queries and schedules as the bundle carries them:
// keyed by name, a saved query's integration and a schedule's query by name (ids are not
// portable), a rule with its live definition (a Sigma rule's source in its `origin`).
import type { Scope } from '../../core/scope.js';
import type { ConfigBundle } from './schema.js';
import { all, type BundlePorts, type Current } from './snapshot.js';

type Json = Record<string, unknown>;
type Analytics = Required<Pick<ConfigBundle, 'detection_rules' | 'saved_queries' | 'schedules'>>;

export async function analyticsSnapshot(
  ports: BundlePorts,
  scope: Scope,
  organizationId: number,
  ids: Current['ids'],
  integrationName: Map<number, string>,
): Promise<Analytics> {
  const detection_rules: Analytics['detection_rules'] = [];
  for (const r of await all((p) => ports.rules.list(scope, organizationId, p))) {
    if (r.organization_id !== organizationId || !r.definition) continue;
    ids.rule.set(r.name, r.id);
    detection_rules.push({
      name: r.name,
      enabled: r.enabled,
      version: r.version,
      definition: r.definition as unknown as Analytics['detection_rules'][number]['definition'],
    });
  }

  const queryName = new Map<string, string>();
  const saved_queries: Analytics['saved_queries'] = [];
  for (const q of await all((p) => ports.queries.list(scope, organizationId, p))) {
    if (q.organization_id !== organizationId) continue;
    ids.savedQuery.set(q.name, q.id);
    queryName.set(q.id, q.name);
    const { integration_id, organization_id: _org, ...query } = q.query as Json & { integration_id?: number };
    saved_queries.push({
      name: q.name,
      description: q.description,
      integration:
        integration_id === undefined ? null : (integrationName.get(integration_id) ?? String(integration_id)),
      query,
    });
  }

  const schedules: Analytics['schedules'] = [];
  for (const s of await all((p) => ports.schedules.list(scope, organizationId, p))) {
    if (s.organization_id !== organizationId) continue;
    ids.schedule.set(s.name, s.id);
    schedules.push({
      name: s.name,
      query: queryName.get(s.query_id) ?? s.query_id,
      cron: s.cron,
      timezone: s.timezone,
      interval_seconds: s.interval_seconds,
      notify: s.notify as Json,
      enabled: s.enabled,
    });
  }
  return { detection_rules, saved_queries, schedules };
}
