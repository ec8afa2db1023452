// Routing dry run: given events through the organization's saved enabled routes (or draft
// routes), with the very plan function the one pass uses, and what each destination
// would receive. Changes nothing. Destinations the pass would skip (unknown,
// another organization's, disabled) are flagged, and an event whose every copy is for
// such a destination is filtered destination_disabled, as the pass counts it.
import type { Actor } from '../../core/actor.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { scopeOf } from '../../core/scope.js';
import type { NormalizedRecord } from '../../pipeline/envelope.js';
import { compileRoutes, routeCondition, RouteCompileError, validateRouteParts } from '../../pipeline/route/compile.js';
import type { RouteProblem } from '../../pipeline/route/conditions.js';
import type { FilterReason, RouteSpec } from '../../pipeline/route/types.js';
import { assertValidParts, targetOrganization } from './service.js';
import type { RoutingStore } from './store.js';

export interface DraftRoute {
  id?: string;
  name?: string;
  enabled?: boolean;
  condition?: unknown;
  transforms?: unknown;
  destination_ids?: string[];
  final?: boolean;
}

export interface DryRunInput {
  organization_id?: number;
  events: Record<string, unknown>[];
  routes?: DraftRoute[];
}

// A credential revoke stops delivery, not routing: copies wait in the outbox (pipeline/delivery/routing-write.ts).
const CREDENTIAL_REVOKED = 'credential_revoked';
const ENVELOPE_KEYS = new Set(['ocsf', 'id', 'integration_id', 'stream', 'valid']);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An event of the body as a normalized record: a bare OCSF event, or {ocsf, id?, integration_id?, stream?, valid?}. */
function toRecord(
  item: Record<string, unknown>,
  index: number,
  organizationId: number,
  receivedAt: string,
  problems: { location: string; message: string }[],
): NormalizedRecord {
  const at = `body/events/${index}`;
  const wrapped = isRecord(item.ocsf);
  const ocsf = wrapped ? (item.ocsf as Record<string, unknown>) : item;
  const record: NormalizedRecord = {
    id: '',
    organization_id: organizationId,
    integration_id: 0,
    stream: '',
    received_at: receivedAt,
    mapping_version_id: 'dry-run',
    valid: true,
    ocsf,
  };
  if (!wrapped) {
    record.id = newId();
    return record;
  }
  for (const key of Object.keys(item))
    if (!ENVELOPE_KEYS.has(key))
      problems.push({
        location: `${at}/${key}`,
        message: 'unknown envelope field (ocsf, id, integration_id, stream, valid)',
      });
  const { id, integration_id: integrationId, stream, valid } = item;
  if (id !== undefined && (typeof id !== 'string' || id === '' || id.length > 64))
    problems.push({ location: `${at}/id`, message: 'must be a non-empty string' });
  if (integrationId !== undefined && (typeof integrationId !== 'number' || !Number.isInteger(integrationId)))
    problems.push({ location: `${at}/integration_id`, message: 'must be an integer' });
  if (stream !== undefined && typeof stream !== 'string')
    problems.push({ location: `${at}/stream`, message: 'must be a string' });
  if (valid !== undefined && typeof valid !== 'boolean')
    problems.push({ location: `${at}/valid`, message: 'must be a boolean' });
  record.id = typeof id === 'string' && id !== '' ? id : newId();
  if (typeof integrationId === 'number') record.integration_id = integrationId;
  if (typeof stream === 'string') record.stream = stream;
  if (typeof valid === 'boolean') record.valid = valid;
  return record;
}

function draftSpecs(drafts: DraftRoute[], organizationId: number): RouteSpec[] {
  const problems: RouteProblem[] = [];
  const ids = new Set<string>();
  const specs = drafts.map((d, i): RouteSpec => {
    const id = d.id ?? `draft-${i + 1}`;
    if (ids.has(id)) problems.push({ path: `routes[${i}].id`, message: `route id ${id} is used twice` });
    ids.add(id);
    problems.push(...validateRouteParts(d.condition ?? null, d.transforms ?? [], { at: `routes[${i}]` }));
    return {
      id,
      organization_id: organizationId,
      name: d.name ?? id,
      position: i + 1,
      enabled: d.enabled ?? true,
      condition: routeCondition(d.condition),
      transforms: (d.transforms ?? []) as RouteSpec['transforms'],
      destination_ids: d.destination_ids ?? [],
      final: d.final ?? true,
      version: 0,
    };
  });
  assertValidParts(problems);
  return specs;
}

export function createDryRun(deps: { store: RoutingStore; now: () => Date }) {
  const { store } = deps;

  return async function dryRun(actor: Actor, input: DryRunInput) {
    const organizationId = await targetOrganization(store, scopeOf(actor), input.organization_id);
    const source: 'draft' | 'saved' = input.routes ? 'draft' : 'saved';
    const specs: RouteSpec[] = input.routes
      ? draftSpecs(input.routes, organizationId)
      : (await store.enabled(organizationId)).map((r) => ({
          ...r,
          condition: r.condition as RouteSpec['condition'],
          transforms: r.transforms as RouteSpec['transforms'],
        }));
    let compiled;
    try {
      compiled = compileRoutes(specs);
    } catch (e) {
      if (!(e instanceof RouteCompileError)) throw e;
      // A saved route the current rules refuse: say which, so it can be fixed.
      throw new AppError('route.invalid_definition', {
        detail: e.message,
        details: { route_id: e.routeId, errors: e.problems },
      });
    }

    const problems: { location: string; message: string }[] = [];
    const receivedAt = deps.now().toISOString();
    const records = input.events.map((e, i) => toRecord(e, i, organizationId, receivedAt, problems));
    if (problems.length > 0)
      throw errors.validation(`${problems[0]!.location}: ${problems[0]!.message}`, { errors: problems });
    const plan = compiled.plan(records);

    const active = specs.filter((s) => s.enabled);
    const destIds = [...new Set(active.flatMap((s) => s.destination_ids))];
    const found = new Map(
      (await store.destinations(destIds))
        .filter((d) => d.organization_id === null || d.organization_id === organizationId)
        .map((d) => [d.id, d]),
    );
    const destinations = destIds.map((id) => {
      const d = found.get(id);
      return {
        id,
        name: d?.name ?? null,
        known: d !== undefined,
        enabled: d?.enabled ?? false,
        would_receive: d !== undefined && (d.enabled || d.disabled_reason === CREDENTIAL_REVOKED),
      };
    });
    const receives = new Map(destinations.map((d) => [d.id, d.would_receive]));

    type Result = {
      index: number;
      id: string;
      routes: string[];
      filtered?: FilterReason | 'destination_disabled';
      copies: { destination_id: string; route_id: string; event: unknown }[];
    };
    const results: Result[] = records.map((r, i) => ({
      index: i,
      id: r.id,
      routes: plan.records[i]!.routes,
      copies: [],
    }));
    const perDestination: Record<string, number> = {};
    let copies = 0;
    for (const [destinationId, list] of plan.copies) {
      perDestination[destinationId] = list.length;
      copies += list.length;
      for (const c of list)
        results[c.index]!.copies.push({
          destination_id: destinationId,
          route_id: c.routeId,
          event: JSON.parse(c.line) as unknown,
        });
    }
    const filtered: Record<string, number> = { ...plan.filtered, destination_disabled: 0 };
    let routed = 0;
    results.forEach((res, i) => {
      const reason = plan.records[i]!.filtered;
      if (reason) res.filtered = reason;
      else if (!res.copies.some((c) => receives.get(c.destination_id))) {
        res.filtered = 'destination_disabled';
        filtered.destination_disabled!++;
      } else routed++;
    });

    return {
      organization_id: organizationId,
      source,
      routes: active.map((s, i) => ({ id: s.id, name: s.name, position: source === 'saved' ? s.position : i + 1 })),
      destinations,
      results,
      totals: {
        events: records.length,
        routed,
        copies,
        filtered,
        matched: Object.fromEntries(plan.matched),
        sampled_out: Object.fromEntries(plan.sampledOut),
        per_destination: perDestination,
      },
    };
  };
}

export type DryRun = ReturnType<typeof createDryRun>;
