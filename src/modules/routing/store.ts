// Routes, their versions, and what the routing module reads of destinations. Positions are
// dense per organization (1..n); every change of them runs under lockOrganization so two
// writers never compute positions from the same snapshot. The counters read by topology,
// flow, health and metrics live in stats-store.ts.
import { sql, type Kysely, type SqlBool } from 'kysely';
import { AppError } from '../../core/errors.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import { organizationLookup } from '../../platform/db/organizations.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';

export interface RouteRow {
  id: string;
  organization_id: number;
  name: string;
  description: string;
  position: number;
  enabled: boolean;
  condition: unknown;
  transforms: unknown[];
  destination_ids: string[];
  final: boolean;
  version: number;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

/** The editable fields a version keeps (route_versions.definition). */
export interface RouteDefinition {
  name: string;
  description: string;
  enabled: boolean;
  condition: unknown;
  transforms: unknown[];
  destination_ids: string[];
  final: boolean;
}

export interface RouteVersionRow {
  route_id: string;
  version: number;
  definition: Record<string, unknown>;
  comment: string;
  created_by: number | null;
  created_at: Date;
}

export interface DestinationRef {
  id: string;
  organization_id: number | null;
  name: string;
  enabled: boolean;
  disabled_reason: string | null;
}

const COLUMNS = [
  'id',
  'organization_id',
  'name',
  'description',
  'position',
  'enabled',
  'condition',
  'transforms',
  'destination_ids',
  'final',
  'version',
  'created_by',
  'created_at',
  'updated_at',
] as const;

export const routeNameTaken = (name: string) =>
  new AppError('route.name_taken', {
    detail: `A route named "${name}" already exists in the organization`,
    details: { name },
  });

/** jsonb columns: SQL null for a null condition (not the JSON literal), text for the rest. */
function definitionColumns(d: Partial<RouteDefinition>) {
  return {
    ...(d.name !== undefined ? { name: d.name } : {}),
    ...(d.description !== undefined ? { description: d.description } : {}),
    ...(d.enabled !== undefined ? { enabled: d.enabled } : {}),
    ...(d.condition !== undefined ? { condition: d.condition === null ? null : JSON.stringify(d.condition) } : {}),
    ...(d.transforms !== undefined ? { transforms: JSON.stringify(d.transforms) } : {}),
    ...(d.destination_ids !== undefined ? { destination_ids: JSON.stringify(d.destination_ids) } : {}),
    ...(d.final !== undefined ? { final: d.final } : {}),
  };
}

export function createRoutingStore(db: Kysely<DB>) {
  const q = () => executor(db);
  const asRow = (r: Record<string, unknown>): RouteRow => ({
    ...(r as unknown as RouteRow),
    condition: r.condition ?? null,
    transforms: (r.transforms as unknown[] | null) ?? [],
    destination_ids: (r.destination_ids as string[] | null) ?? [],
  });

  return {
    async list(scope: Scope, organizationId?: number): Promise<RouteRow[]> {
      let base = q()
        .selectFrom('routes')
        .select([...COLUMNS])
        .where(scoped(scope, 'routes.organization_id'));
      if (organizationId !== undefined) base = base.where('organization_id', '=', organizationId);
      const rows = await base.orderBy('organization_id').orderBy('position').orderBy('id').execute();
      return rows.map(asRow);
    },

    /** The route whatever the caller's scope (the service decides 403 or 404). */
    async get(id: string): Promise<RouteRow | undefined> {
      const row = await q()
        .selectFrom('routes')
        .select([...COLUMNS])
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? asRow(row) : undefined;
    },

    async getMany(ids: string[]): Promise<RouteRow[]> {
      if (ids.length === 0) return [];
      const rows = await q()
        .selectFrom('routes')
        .select([...COLUMNS])
        .where('id', 'in', ids)
        .execute();
      return rows.map(asRow);
    },

    /** The organization's enabled routes in evaluation order (dry run). */
    async enabled(organizationId: number): Promise<RouteRow[]> {
      const rows = await q()
        .selectFrom('routes')
        .select([...COLUMNS])
        .where('organization_id', '=', organizationId)
        .where('enabled', '=', true)
        .orderBy('position')
        .orderBy('id')
        .execute();
      return rows.map(asRow);
    },

    /** Row lock on the organization until the transaction ends: route writes of one organization queue up. False when it does not exist. */
    async lockOrganization(organizationId: number): Promise<boolean> {
      const row = await q()
        .selectFrom('organizations')
        .select('id')
        .where('id', '=', organizationId)
        .forUpdate()
        .executeTakeFirst();
      return row !== undefined;
    },

    ...organizationLookup(db),

    /** Ids of the organization's routes in position order. */
    async idsInOrder(organizationId: number): Promise<{ id: string; position: number }[]> {
      return q()
        .selectFrom('routes')
        .select(['id', 'position'])
        .where('organization_id', '=', organizationId)
        .orderBy('position')
        .orderBy('id')
        .execute();
    },

    async nameExists(organizationId: number, name: string, exceptId?: string): Promise<boolean> {
      let base = q()
        .selectFrom('routes')
        .select('id')
        .where('organization_id', '=', organizationId)
        .where(sql<SqlBool>`lower(name) = lower(${name})`);
      if (exceptId !== undefined) base = base.where('id', '<>', exceptId);
      return (await base.executeTakeFirst()) !== undefined;
    },

    async insert(
      r: { id: string; organization_id: number; position: number; created_by: number | null } & RouteDefinition,
      now: Date,
    ): Promise<RouteRow> {
      try {
        const row = await q()
          .insertInto('routes')
          .values({
            id: r.id,
            organization_id: r.organization_id,
            position: r.position,
            created_by: r.created_by,
            version: 1,
            created_at: now,
            updated_at: now,
            ...definitionColumns(r),
          } as never)
          .returning([...COLUMNS])
          .executeTakeFirstOrThrow();
        return asRow(row);
      } catch (err) {
        if (isUniqueViolation(err)) throw routeNameTaken(r.name);
        throw err;
      }
    },

    /** Writes the changed fields; version when the definition changed; updated_at always. */
    async update(
      id: string,
      patch: Partial<RouteDefinition> & { version?: number; position?: number },
      now: Date,
    ): Promise<RouteRow> {
      try {
        const row = await q()
          .updateTable('routes')
          .set({
            ...definitionColumns(patch),
            ...(patch.version !== undefined ? { version: patch.version } : {}),
            ...(patch.position !== undefined ? { position: patch.position } : {}),
            updated_at: now,
          } as never)
          .where('id', '=', id)
          .returning([...COLUMNS])
          .executeTakeFirstOrThrow();
        return asRow(row);
      } catch (err) {
        if (isUniqueViolation(err)) throw routeNameTaken(patch.name ?? '');
        throw err;
      }
    },

    async delete(id: string): Promise<void> {
      await q().deleteFrom('routes').where('id', '=', id).execute();
    },

    /** Adds delta to the positions of the organization's routes within [from, to] (another route's move, insert or removal). */
    async shift(organizationId: number, from: number, to: number, delta: number): Promise<void> {
      if (from > to) return;
      await q()
        .updateTable('routes')
        .set({ position: sql<number>`position + ${delta}` })
        .where('organization_id', '=', organizationId)
        .where('position', '>=', from)
        .where('position', '<=', to)
        .execute();
    },

    /** Sets new positions; each moved route's updated_at moves too (dispatchers reload on it). */
    async setPositions(moves: { id: string; position: number }[], now: Date): Promise<void> {
      for (const m of moves)
        await q().updateTable('routes').set({ position: m.position, updated_at: now }).where('id', '=', m.id).execute();
    },

    async insertVersion(
      v: {
        id: string;
        route_id: string;
        version: number;
        definition: RouteDefinition;
        comment: string;
        created_by: number | null;
      },
      now: Date,
    ): Promise<void> {
      await q()
        .insertInto('route_versions')
        .values({ ...v, definition: JSON.stringify(v.definition), created_at: now })
        .execute();
    },

    async getVersion(routeId: string, version: number): Promise<RouteVersionRow | undefined> {
      return q()
        .selectFrom('route_versions')
        .select(['route_id', 'version', 'definition', 'comment', 'created_by', 'created_at'])
        .where('route_id', '=', routeId)
        .where('version', '=', version)
        .executeTakeFirst();
    },

    /** The destinations among `ids` (any organization: the service decides which the route may use). */
    async destinations(ids: readonly string[]): Promise<DestinationRef[]> {
      if (ids.length === 0) return [];
      return q()
        .selectFrom('destinations')
        .select(['id', 'organization_id', 'name', 'enabled', 'disabled_reason'])
        .where('id', 'in', [...new Set(ids)])
        .execute();
    },
  };
}

export type RoutingStore = ReturnType<typeof createRoutingStore>;
