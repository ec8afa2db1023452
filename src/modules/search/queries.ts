// Saved queries (/api/queries/): a query definition kept under a name in an organization,
// checked whole when saved (fields against OCSF, the text form parsed) so a schedule or a
// search never meets a broken one. Reading needs mapping.read, writing query.save (the spec);
// a query a schedule runs cannot be deleted (409).
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import { scopeOf, targetOrganization, type Scope } from '../../core/scope.js';
import { setAuditTarget } from '../audit/service.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { planQuery, type QueryInput } from './query/definition.js';
import type { SavedQueryRow, SearchStore } from './store.js';

export interface QueryBody {
  name: string;
  description?: string;
  organization_id?: number;
  query: QueryInput;
}

export function savedQueryOut(r: SavedQueryRow) {
  return {
    id: r.id,
    organization_id: r.organization_id,
    name: r.name,
    description: r.description,
    query: r.query as QueryInput,
    created_by: r.created_by,
    updated_by: r.updated_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed)
    throw errors.validation('body/name must not be blank', {
      errors: [{ location: 'body/name', message: 'must not be blank' }],
    });
  return trimmed;
}

export function createQueriesService(deps: {
  store: SearchStore;
  clock: Clock;
  maxRows: number;
  checkLive(actor: Actor, organizationId: number, input: QueryInput): Promise<void>;
}) {
  const { store, clock } = deps;

  const nameTaken = (name: string) =>
    new AppError('resource.conflict', {
      detail: `A saved query named "${name}" already exists in the organization`,
      details: { field: 'name' },
    });

  /** The definition as stored: checked, without its organization (the saved query's own). */
  async function checked(actor: Actor, organizationId: number, query: QueryInput): Promise<Record<string, unknown>> {
    if (query.organization_id !== undefined && query.organization_id !== organizationId) {
      throw errors.validation("query.organization_id must be the saved query's organization (or left out)", {
        errors: [{ location: 'body/query/organization_id', message: 'differs from the organization' }],
      });
    }
    planQuery(query, { now: clock.now(), maxRangeDays: 3650, maxLimit: deps.maxRows });
    if (query.integration_id !== undefined) await deps.checkLive(actor, organizationId, query);
    const { organization_id: _org, ...rest } = query;
    return rest as Record<string, unknown>;
  }

  async function visible(scope: Scope, id: string, lock = false): Promise<SavedQueryRow> {
    const row = await store.getQuery(scope, id, lock);
    if (!row) throw errors.notFound('Saved query');
    return row;
  }

  async function guard<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken(name);
      throw err;
    }
  }

  return {
    async list(scope: Scope, organizationId: number | undefined, page: OffsetPage) {
      const { items, total } = await store.listQueries(scope, organizationId, page);
      return { items: items.map(savedQueryOut), total };
    },

    async get(scope: Scope, id: string) {
      return savedQueryOut(await visible(scope, id));
    },

    async create(actor: Actor, body: QueryBody) {
      const organizationId = await targetOrganization(
        store,
        scopeOf(actor),
        body.organization_id ?? body.query.organization_id,
      );
      const name = cleanName(body.name);
      const query = await checked(actor, organizationId, body.query);
      const id = newId();
      const by = actor.kind === 'user' ? actor.id : null;
      await guard(name, () =>
        store.insertQuery(
          {
            id,
            organization_id: organizationId,
            name,
            description: body.description?.trim() ?? '',
            query,
            created_by: by,
            updated_by: by,
          },
          clock.now(),
        ),
      );
      setAuditTarget({ type: 'saved_query', id, organizationId, details: { name, query } });
      return savedQueryOut((await store.getQuery(scopeOf(actor), id))!);
    },

    async update(actor: Actor, id: string, body: Partial<Omit<QueryBody, 'organization_id'>>) {
      const row = await visible(scopeOf(actor), id, true);
      setAuditTarget({
        type: 'saved_query',
        id,
        organizationId: row.organization_id,
        details: { changed: Object.keys(body).sort() },
      });
      const name = body.name === undefined ? undefined : cleanName(body.name);
      const query = body.query === undefined ? undefined : await checked(actor, row.organization_id, body.query);
      await guard(name ?? row.name, () =>
        store.updateQuery(
          id,
          {
            ...(name !== undefined ? { name } : {}),
            ...(body.description !== undefined ? { description: body.description.trim() } : {}),
            ...(query ? { query } : {}),
            updated_by: actor.kind === 'user' ? actor.id : null,
          },
          clock.now(),
        ),
      );
      return savedQueryOut((await store.getQuery(scopeOf(actor), id))!);
    },

    async remove(actor: Actor, id: string): Promise<void> {
      const row = await visible(scopeOf(actor), id, true);
      setAuditTarget({ type: 'saved_query', id, organizationId: row.organization_id, details: { name: row.name } });
      const schedules = await store.schedulesUsing(id);
      if (schedules.length > 0) {
        throw new AppError('search.query_in_use', {
          detail: `Schedules run this query (${schedules.join(', ')}); delete them first`,
          details: { schedule_ids: schedules },
        });
      }
      await store.deleteQuery(id);
    },
  };
}

export type QueriesService = ReturnType<typeof createQueriesService>;
