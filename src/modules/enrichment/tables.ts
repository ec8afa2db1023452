// Lookup tables: created from CSV or JSON rows, versioned (a full replacement, a row patch,
// a rollback or a feed fetch each writes a whole new version), deleted only when no policy
// or feed uses them. A table exists for its organization's scope only (else "not found").
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { inScope, scopeOf, type Scope } from '../../core/scope.js';
import { applyPatch, parseTableCsv, tableFromJson, validateTable } from '../../pipeline/enrich/table.js';
import type { MatchKind, Row, TableData } from '../../pipeline/enrich/types.js';
import { setAuditTarget } from '../audit/service.js';
import {
  cleanName,
  createdBy,
  loadTableData,
  nameTaken,
  refuse,
  storeTableData,
  targetOrganization,
  type Activity,
} from './common.js';
import type { EnrichmentStore, TableRow, TableVersionMeta } from './store.js';

export const MAX_PREVIEW_ROWS = 1_000;

export interface TableContent {
  format?: 'csv' | 'json';
  csv?: string;
  rows?: unknown[];
}

export interface CreateTableInput extends TableContent {
  organization_id?: number;
  name: string;
  description?: string;
  key_column: string;
  match: MatchKind;
  comment?: string;
}

export interface TableVersionInput extends TableContent {
  mode: 'replace' | 'patch';
  upsert?: Row[];
  delete?: string[];
  comment?: string;
}

export const tableNotFound = () => errors.notFound('Enrichment table');

export function tableOut(t: TableRow) {
  return {
    id: t.id,
    organization_id: t.organization_id,
    name: t.name,
    description: t.description,
    key_column: t.key_column,
    match: t.match,
    version: t.version,
    row_count: t.row_count,
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
}

export function versionOut(v: TableVersionMeta) {
  return {
    id: v.id,
    version: v.version,
    kind: v.kind,
    row_count: v.row_count,
    columns: v.columns,
    checksum: v.checksum,
    comment: v.comment,
    created_by: v.created_by,
    created_at: v.created_at,
  };
}

/** Parses uploaded content into table data; 422 listing every problem. */
export function parseContent(input: TableContent, keyColumn: string, match: MatchKind): TableData {
  const format = input.format ?? (input.csv !== undefined ? 'csv' : 'json');
  let data: TableData;
  try {
    if (format === 'csv') {
      if (typeof input.csv !== 'string')
        refuse('enrichment.invalid_table', [
          { path: 'csv', message: 'format csv needs csv (the text, header line first)' },
        ]);
      data = parseTableCsv(input.csv, keyColumn, match);
    } else {
      if (!Array.isArray(input.rows))
        refuse('enrichment.invalid_table', [{ path: 'rows', message: 'format json needs rows (a list of objects)' }]);
      data = tableFromJson(input.rows, keyColumn, match);
    }
  } catch (e) {
    if (e instanceof AppError) throw e;
    refuse('enrichment.invalid_table', [{ path: format === 'csv' ? 'csv' : 'rows', message: (e as Error).message }]);
  }
  checkData(data);
  return data;
}

function checkData(data: TableData): void {
  const problems = validateTable(data).map((p) => ({ path: p.at, message: p.message }));
  if (problems.length > 0) refuse('enrichment.invalid_table', problems.slice(0, 100));
}

export function createTablesService(deps: { store: EnrichmentStore; clock: Clock; activity: Activity }) {
  const { store, clock, activity } = deps;

  async function visible(scope: Scope, id: string): Promise<TableRow> {
    const row = await store.getTable(id);
    if (!row || !inScope(scope, row.organization_id)) throw tableNotFound();
    return row;
  }

  async function changeable(actor: Actor, id: string): Promise<TableRow> {
    const first = await visible(scopeOf(actor), id);
    await store.lockOrganization(first.organization_id);
    const row = await visible(scopeOf(actor), id);
    setAuditTarget({ type: 'enrichment_tables', id, organizationId: row.organization_id });
    return row;
  }

  /** Writes a new version and makes it live. */
  async function publish(table: TableRow, data: TableData, kind: string, comment: string, actor: Actor | null) {
    const version = (await store.maxTableVersion(table.id)) + 1;
    const stored = await storeTableData(data);
    const id = newId();
    const now = clock.now();
    const meta: TableVersionMeta = {
      id,
      table_id: table.id,
      version,
      kind,
      row_count: data.rows.length,
      columns: data.columns,
      checksum: stored.checksum,
      comment,
      created_by: actor ? createdBy(actor) : null,
      created_at: now,
    };
    await store.insertTableVersion({ ...meta, data: stored.data });
    await store.setTableLive(table.id, version, id, data.rows.length, data.match, now);
    await activity({
      organization_id: table.organization_id,
      kind: `table.${kind}`,
      subject_type: 'table',
      subject_id: table.id,
      message: `table "${table.name}" version ${version} (${kind}, ${data.rows.length} rows)`,
      ...(actor ? { actor } : {}),
    });
    return meta;
  }

  async function liveData(table: TableRow): Promise<TableData> {
    const live = await store.tableVersion(table.id, table.version);
    if (!live) throw new Error(`table ${table.id} has no version ${table.version}`);
    return loadTableData(live.data);
  }

  return {
    visible,
    publish,
    liveData,

    async list(scope: Scope, organizationId?: number) {
      return (await store.listTables(scope, organizationId)).map(tableOut);
    },

    async get(scope: Scope, id: string, page: { limit: number; offset: number }) {
      const table = await visible(scope, id);
      const data = await liveData(table);
      const rows = data.rows.slice(page.offset, page.offset + page.limit);
      const live = await store.liveVersionMeta(id);
      return {
        ...tableOut(table),
        columns: data.columns,
        live_version: live ? versionOut(live) : null,
        rows,
        limit: page.limit,
        offset: page.offset,
      };
    },

    async create(actor: Actor, input: CreateTableInput) {
      const organizationId = await targetOrganization(store, scopeOf(actor), input.organization_id);
      await store.lockOrganization(organizationId);
      const name = cleanName(input.name);
      const data = parseContent(input, input.key_column, input.match);
      if (await store.tableNameExists(organizationId, name)) throw nameTaken('table', name);
      const id = newId();
      const table: TableRow = {
        id,
        organization_id: organizationId,
        name,
        description: input.description ?? '',
        key_column: input.key_column,
        match: input.match,
        version: 0,
        live_version_id: null,
        row_count: 0,
        created_by: createdBy(actor),
        created_at: clock.now(),
        updated_at: clock.now(),
      };
      await store.insertTable(table, clock.now());
      const meta = await publish(table, data, 'create', input.comment?.trim() ?? '', actor);
      setAuditTarget({
        type: 'enrichment_tables',
        id,
        organizationId,
        details: { version: 1, rows: data.rows.length, key_column: table.key_column, match: table.match },
      });
      return {
        ...tableOut({ ...table, version: meta.version, row_count: meta.row_count }),
        live_version: versionOut(meta),
      };
    },

    /** An empty table an indicator feed fills (its fetches write the versions). */
    async createEmpty(actor: Actor, organizationId: number, requested: string) {
      let name = cleanName(requested).slice(0, 200);
      for (let n = 2; await store.tableNameExists(organizationId, name); n++) name = `${requested.slice(0, 190)} ${n}`;
      const table: TableRow = {
        id: newId(),
        organization_id: organizationId,
        name,
        description: 'Filled by an indicator feed',
        key_column: 'indicator',
        match: 'case_insensitive',
        version: 0,
        live_version_id: null,
        row_count: 0,
        created_by: createdBy(actor),
        created_at: clock.now(),
        updated_at: clock.now(),
      };
      await store.insertTable(table, clock.now());
      await publish(
        table,
        { key_column: 'indicator', match: 'case_insensitive', columns: ['indicator', 'type'], rows: [] },
        'create',
        'empty until the first fetch',
        actor,
      );
      return table;
    },

    async addVersion(actor: Actor, id: string, input: TableVersionInput) {
      const table = await changeable(actor, id);
      const match = table.match as MatchKind;
      let data: TableData;
      if (input.mode === 'patch') {
        if (!input.upsert?.length && !input.delete?.length)
          refuse('enrichment.invalid_table', [
            { path: 'upsert', message: 'a patch needs upsert rows, delete keys, or both' },
          ]);
        data = applyPatch(await liveData(table), {
          ...(input.upsert ? { upsert: input.upsert } : {}),
          ...(input.delete ? { delete: input.delete } : {}),
        });
        checkData(data);
      } else data = parseContent(input, table.key_column, match);
      const meta = await publish(table, data, input.mode, input.comment?.trim() ?? '', actor);
      setAuditTarget({
        type: 'enrichment_tables',
        id,
        organizationId: table.organization_id,
        details: { version: meta.version, mode: input.mode, rows: meta.row_count },
      });
      return versionOut(meta);
    },

    async versions(scope: Scope, id: string) {
      await visible(scope, id);
      return (await store.tableVersions(id)).map(versionOut);
    },

    async rollback(actor: Actor, id: string, version: number, comment?: string) {
      const table = await changeable(actor, id);
      const target = await store.tableVersion(id, version);
      if (!target) throw errors.notFound('Table version');
      const live = await store.tableVersion(id, table.version);
      if (live && live.checksum === target.checksum) {
        throw new AppError('enrichment.already_current', {
          detail: `The live version (${table.version}) already holds the data of version ${version}`,
        });
      }
      const meta = await publish(
        table,
        await loadTableData(target.data),
        'rollback',
        comment?.trim() || `rollback to version ${version}`,
        actor,
      );
      setAuditTarget({
        type: 'enrichment_tables',
        id,
        organizationId: table.organization_id,
        details: { version: meta.version, rolled_back_to: version },
      });
      return versionOut(meta);
    },

    async remove(actor: Actor, id: string, feedsUsing: (tableId: string) => Promise<{ id: string; name: string }[]>) {
      const table = await changeable(actor, id);
      const policies = await store.policiesUsing([table.organization_id], { table_id: id });
      const feeds = await feedsUsing(id);
      if (policies.length > 0 || feeds.length > 0) {
        const names = [...policies.map((p) => `policy "${p.name}"`), ...feeds.map((f) => `feed "${f.name}"`)];
        throw new AppError('enrichment.in_use', {
          detail: `The table is used by ${names.join(', ')}: disable ${names.length > 1 ? 'them' : 'it'} or publish a version that looks elsewhere first`,
          details: { policies: policies.map((p) => ({ id: p.id, name: p.name })), sources: feeds },
        });
      }
      await store.deleteTable(id);
      await activity({
        organization_id: table.organization_id,
        kind: 'table.deleted',
        subject_type: 'table',
        subject_id: id,
        message: `table "${table.name}" deleted`,
        actor,
      });
    },
  };
}

export type TablesService = ReturnType<typeof createTablesService>;
