// Routes: who sees and changes what, versions, rollback and reordering. A route exists for
// its organization's scope only (else "not found"), except in a reorder, where the spec
// wants an id outside the caller's scope to be a 403. Every change of a route's
// definition writes a new version; every change at all (reorders included) moves
// updated_at, which the dispatchers poll to recompile (docs/delivery.md).
import type { Actor } from '../../core/actor.js';
import { canonicalJson } from '../../core/canonical.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import { GLOBAL_SCOPE, inScope, scopeOf, targetOrganization, type Scope } from '../../core/scope.js';
import { printCondition } from '../../pipeline/conditions/print.js';
import {
  routeCondition,
  validateRouteParts,
  type RouteProblem,
  type ValidateOptions,
} from '../../pipeline/route/compile.js';
import { routeWarnings, type RouteWarning } from '../../pipeline/route/reach.js';
import { setAuditTarget } from '../audit/service.js';
import type { AuditFilter, AuditRow } from '../audit/store.js';
import { routeNameTaken, type RouteDefinition, type RouteRow, type RoutingStore } from './store.js';

/** The audit target type of route operations (the family name, as the unit of work derives it). */
export const AUDIT_TARGET_TYPE = 'routes';
const LAST_POSITION = 2_147_483_647;
const DEFINITION_FIELDS = [
  'name',
  'description',
  'enabled',
  'condition',
  'transforms',
  'destination_ids',
  'final',
] as const;

export interface CreateInput {
  name: string;
  organization_id?: number;
  description?: string;
  enabled?: boolean;
  condition?: unknown;
  transforms?: unknown;
  destination_ids: string[];
  final?: boolean;
  position?: number;
  comment?: string;
}

export type UpdateInput = Partial<Omit<CreateInput, 'organization_id'>>;

export interface RoutingServiceDeps {
  store: RoutingStore;
  clock: Clock;
  audit: { list(scope: Scope, f: AuditFilter, page: OffsetPage): Promise<{ items: AuditRow[]; total: number }> };
}

export const routeNotFound = () => errors.notFound('Route');

export function routeOut(r: RouteRow, warnings?: RouteWarning[]) {
  return {
    id: r.id,
    organization_id: r.organization_id,
    name: r.name,
    description: r.description,
    position: r.position,
    enabled: r.enabled,
    condition: r.condition,
    condition_text: printCondition(r.condition),
    transforms: r.transforms,
    destination_ids: r.destination_ids,
    final: r.final,
    version: r.version,
    created_at: r.created_at,
    updated_at: r.updated_at,
    ...(warnings && warnings.length > 0 ? { warnings } : {}),
  };
}

/** Routes answered with their warnings (pipeline/route/reach.ts), computed per organization. */
export function routesOut(rows: RouteRow[]) {
  const byOrg = new Map<number, RouteRow[]>();
  for (const r of rows) byOrg.set(r.organization_id, [...(byOrg.get(r.organization_id) ?? []), r]);
  const warnings = new Map<string, RouteWarning[]>();
  for (const list of byOrg.values()) for (const [id, w] of routeWarnings(list)) warnings.set(id, w);
  return rows.map((r) => routeOut(r, warnings.get(r.id)));
}

export function definitionOf(r: RouteDefinition): RouteDefinition {
  return {
    name: r.name,
    description: r.description,
    enabled: r.enabled,
    condition: r.condition ?? null,
    transforms: r.transforms,
    destination_ids: r.destination_ids,
    final: r.final,
  };
}

/** Throws route.invalid_definition (422) listing every problem with its location. */
export function assertValidParts(problems: RouteProblem[]): void {
  const first = problems[0];
  if (!first) return;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
  throw new AppError('route.invalid_definition', {
    detail: `${first.path}: ${first.message}${more}`,
    details: { errors: problems },
  });
}

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed)
    throw errors.validation('body/name must not be blank', {
      errors: [{ location: 'body/name', message: 'must not be blank' }],
    });
  return trimmed;
}

/** Every problem of a definition: condition (as given: the tree or its text), transforms, and destinations listed twice. */
function problemsOf(
  d: RouteDefinition,
  fields?: ValidateOptions['fields'],
  given: unknown = d.condition,
): RouteProblem[] {
  const problems = validateRouteParts(given, d.transforms, fields ? { fields } : {});
  const seen = new Set<string>();
  d.destination_ids.forEach((id, i) => {
    if (seen.has(id)) problems.push({ path: `destination_ids[${i}]`, message: `destination ${id} is listed twice` });
    seen.add(id);
  });
  return problems;
}

/** The organization a new route or a dry run is for (core/scope.ts). */
export { targetOrganization };

export function createRoutingService(deps: RoutingServiceDeps) {
  const { store, clock, audit } = deps;

  /** The route as answered: with the warnings its organization's order gives it. */
  async function answer(row: RouteRow) {
    // The row is already in the caller's scope; its organization's routes decide its warnings.
    const all = await store.list(GLOBAL_SCOPE, row.organization_id);
    return routesOut(all).find((r) => r.id === row.id) ?? routeOut(row);
  }

  async function visible(scope: Scope, id: string): Promise<RouteRow> {
    const row = await store.get(id);
    if (!row || !inScope(scope, row.organization_id)) throw routeNotFound();
    return row;
  }

  /** The route, read again under its organization's lock, for a change. */
  async function changeable(scope: Scope, id: string): Promise<RouteRow> {
    const first = await visible(scope, id);
    await store.lockOrganization(first.organization_id);
    const row = await visible(scope, id);
    setAuditTarget({ type: AUDIT_TARGET_TYPE, id, organizationId: row.organization_id });
    return row;
  }

  /** Each destination must exist and be the organization's own or global; others are "unknown" alike. */
  async function checkDestinations(organizationId: number, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const usable = new Set(
      (await store.destinations(ids))
        .filter((d) => d.organization_id === null || d.organization_id === organizationId)
        .map((d) => d.id),
    );
    const unknown = [...new Set(ids.filter((id) => !usable.has(id)))];
    if (unknown.length === 0) return;
    throw new AppError('route.unknown_destination', {
      detail: `Unknown destination${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`,
      details: { destination_ids: unknown },
    });
  }

  async function checkName(organizationId: number, name: string, exceptId?: string): Promise<void> {
    if (await store.nameExists(organizationId, name, exceptId)) throw routeNameTaken(name);
  }

  async function writeVersion(
    routeId: string,
    version: number,
    definition: RouteDefinition,
    comment: string,
    actor: Actor,
  ): Promise<void> {
    const createdBy = actor.kind === 'user' ? actor.id : null;
    await store.insertVersion(
      { id: newId(), route_id: routeId, version, definition, comment, created_by: createdBy },
      clock.now(),
    );
  }

  return {
    async list(scope: Scope, organizationId?: number) {
      return routesOut(await store.list(scope, organizationId));
    },

    async get(scope: Scope, id: string) {
      return answer(await visible(scope, id));
    },

    /** For health, metrics and dry runs: the route in scope (404 otherwise). */
    route: visible,

    async create(actor: Actor, input: CreateInput) {
      const scope = scopeOf(actor);
      const organizationId = await targetOrganization(store, scope, input.organization_id);
      await store.lockOrganization(organizationId);
      const definition: RouteDefinition = {
        name: cleanName(input.name),
        description: input.description ?? '',
        enabled: input.enabled ?? true,
        condition: routeCondition(input.condition),
        transforms: (input.transforms ?? []) as unknown[],
        destination_ids: input.destination_ids,
        final: input.final ?? true,
      };
      assertValidParts(problemsOf(definition, undefined, input.condition ?? null));
      await checkDestinations(organizationId, definition.destination_ids);
      await checkName(organizationId, definition.name);
      const count = (await store.idsInOrder(organizationId)).length;
      const position = Math.min(input.position ?? count + 1, count + 1);
      await store.shift(organizationId, position, count, 1);
      const id = newId();
      const createdBy = actor.kind === 'user' ? actor.id : null;
      const row = await store.insert(
        { id, organization_id: organizationId, position, created_by: createdBy, ...definition },
        clock.now(),
      );
      const comment = input.comment?.trim() ?? '';
      await writeVersion(id, 1, definition, comment, actor);
      setAuditTarget({
        type: AUDIT_TARGET_TYPE,
        id,
        organizationId,
        details: { version: 1, position, comment, definition },
      });
      return answer(row);
    },

    async update(actor: Actor, id: string, input: UpdateInput) {
      const current = await changeable(scopeOf(actor), id);
      const before = definitionOf(current);
      const next: RouteDefinition = { ...before };
      if (input.name !== undefined) next.name = cleanName(input.name);
      if (input.description !== undefined) next.description = input.description;
      if (input.enabled !== undefined) next.enabled = input.enabled;
      if (input.condition !== undefined) next.condition = routeCondition(input.condition);
      if (input.transforms !== undefined) next.transforms = (input.transforms ?? []) as unknown[];
      if (input.destination_ids !== undefined) next.destination_ids = input.destination_ids;
      if (input.final !== undefined) next.final = input.final;
      // Field paths are held to the OCSF rule only in the parts this edit writes.
      assertValidParts(
        problemsOf(
          next,
          {
            condition: input.condition !== undefined ? 'ocsf' : 'any',
            transforms: input.transforms !== undefined ? 'ocsf' : 'any',
          },
          input.condition !== undefined ? input.condition : next.condition,
        ),
      );
      const changed = DEFINITION_FIELDS.filter((f) => canonicalJson(before[f]) !== canonicalJson(next[f]));
      if (changed.includes('destination_ids')) await checkDestinations(current.organization_id, next.destination_ids);
      if (changed.includes('name')) await checkName(current.organization_id, next.name, id);

      const patch: Partial<RouteDefinition> & { version?: number; position?: number } = {};
      if (changed.length > 0) {
        for (const f of changed) (patch as Record<string, unknown>)[f] = next[f];
        patch.version = current.version + 1;
        await writeVersion(id, patch.version, next, input.comment?.trim() ?? '', actor);
      }
      if (input.position !== undefined) {
        const count = (await store.idsInOrder(current.organization_id)).length;
        const to = Math.min(input.position, count);
        const from = current.position;
        if (to < from) await store.shift(current.organization_id, to, from - 1, 1);
        if (to > from) await store.shift(current.organization_id, from + 1, to, -1);
        if (to !== from) patch.position = to;
      }
      if (Object.keys(patch).length === 0) return answer(current);
      const row = await store.update(id, patch, clock.now());
      setAuditTarget({
        details: {
          version: row.version,
          changed,
          ...(patch.position !== undefined ? { position: { from: current.position, to: patch.position } } : {}),
          ...(changed.length > 0 ? { definition: next } : {}),
        },
      });
      return answer(row);
    },

    async remove(actor: Actor, id: string): Promise<void> {
      const current = await changeable(scopeOf(actor), id);
      await store.delete(id);
      await store.shift(current.organization_id, current.position + 1, LAST_POSITION, -1);
      setAuditTarget({ details: { name: current.name, version: current.version, position: current.position } });
    },

    async rollback(actor: Actor, id: string, input: { version: number; comment?: string }) {
      const current = await changeable(scopeOf(actor), id);
      const target = await store.getVersion(id, input.version);
      if (!target) throw errors.notFound('Route version', { version: input.version });
      const stored = target.definition as Partial<RouteDefinition>;
      const definition = definitionOf({ ...definitionOf(current), ...stored });
      setAuditTarget({ details: { from_version: current.version, to_version: target.version } });
      if (target.version === current.version || canonicalJson(definition) === canonicalJson(definitionOf(current))) {
        throw new AppError('route.already_current', {
          detail: `The route already has the definition of version ${target.version}`,
          details: { version: current.version, requested: target.version },
        });
      }
      // The rules or the destinations may have changed since that version was written; its
      // field paths were accepted then, and returning to it is the point of a rollback.
      assertValidParts(problemsOf(definition, { condition: 'any', transforms: 'any' }));
      await checkDestinations(current.organization_id, definition.destination_ids);
      if (definition.name.toLowerCase() !== current.name.toLowerCase())
        await checkName(current.organization_id, definition.name, id);
      const version = current.version + 1;
      const row = await store.update(id, { ...definition, version }, clock.now());
      await writeVersion(
        id,
        version,
        definition,
        input.comment?.trim() || `Rollback to version ${target.version}`,
        actor,
      );
      setAuditTarget({ details: { from_version: current.version, to_version: target.version, version, definition } });
      return answer(row);
    },

    /**
     * Sets the evaluation order of one organization's routes from the complete list of its
     * ids. Every check comes before any change (and the transaction undoes them anyway).
     */
    async reorder(actor: Actor, input: { organization_id?: number; route_ids: string[] }) {
      const scope = scopeOf(actor);
      const ids = input.route_ids;
      const unique = [...new Set(ids)];
      const rows = await store.getMany(unique);
      const outside = rows.filter((r) => !inScope(scope, r.organization_id)).map((r) => r.id);
      if (outside.length > 0)
        throw errors.forbidden('A route id names a route outside your scope', { route_ids: outside });
      const found = new Set(rows.map((r) => r.id));
      const unknown = unique.filter((id) => !found.has(id));
      if (unknown.length > 0) throw errors.notFound('Route', { route_ids: unknown });
      const orgs = [...new Set(rows.map((r) => r.organization_id))];
      const organizationId =
        input.organization_id !== undefined ? await targetOrganization(store, scope, input.organization_id) : orgs[0]!;
      setAuditTarget({ type: AUDIT_TARGET_TYPE, organizationId, details: { route_ids: ids } });
      const foreign = rows.filter((r) => r.organization_id !== organizationId).map((r) => r.id);
      if (foreign.length > 0) {
        throw new AppError('route.reorder_incomplete', {
          detail: 'Reorder takes the routes of one organization; some ids belong to another',
          details: { organization_id: organizationId, other_organization_route_ids: foreign },
        });
      }
      await store.lockOrganization(organizationId);
      const order = await store.idsInOrder(organizationId);
      const given = new Set(ids);
      const missing = order.map((r) => r.id).filter((id) => !given.has(id));
      const duplicates = [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))];
      if (missing.length > 0 || duplicates.length > 0) {
        const what = [
          missing.length > 0 ? `${missing.length} missing` : '',
          duplicates.length > 0 ? `${duplicates.length} listed twice` : '',
        ]
          .filter(Boolean)
          .join(', ');
        throw new AppError('route.reorder_incomplete', {
          detail: `Reorder takes every route id of the organization, each once (${what})`,
          details: { missing, duplicates },
        });
      }
      const position = new Map(order.map((r) => [r.id, r.position]));
      const moves = ids.map((id, i) => ({ id, position: i + 1 })).filter((m) => position.get(m.id) !== m.position);
      await store.setPositions(moves, clock.now());
      setAuditTarget({ details: { route_ids: ids, moved: moves.length } });
      return routesOut(await store.list(scope, organizationId));
    },

    /** The audit entries about the route, newest first. */
    async audit(scope: Scope, id: string, outcome: string | undefined, page: OffsetPage) {
      const row = await visible(scope, id);
      return audit.list(scope, { targetType: AUDIT_TARGET_TYPE, targetId: row.id, outcome }, page);
    },
  };
}

export type RoutingService = ReturnType<typeof createRoutingService>;
