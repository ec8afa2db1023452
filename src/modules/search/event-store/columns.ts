// The fields every event store keeps in a column of its own beside the event (docs/search.md):
// the condition language's compilers (../query-sql.ts for PostgreSQL, duckdb/condition.ts)
// read them from the column instead of the stored event.

export type ColumnKind = 'int' | 'text' | 'uuid' | 'time';

export const STORE_COLUMNS: Readonly<Record<string, { column: string; kind: ColumnKind }>> = {
  time: { column: 'time', kind: 'time' },
  class_uid: { column: 'class_uid', kind: 'int' },
  category_uid: { column: 'category_uid', kind: 'int' },
  activity_id: { column: 'activity_id', kind: 'int' },
  severity_id: { column: 'severity_id', kind: 'int' },
  'envelope.organization_id': { column: 'organization_id', kind: 'int' },
  'envelope.integration_id': { column: 'integration_id', kind: 'int' },
  'envelope.stream': { column: 'stream', kind: 'text' },
  'envelope.id': { column: 'event_id', kind: 'uuid' },
};
