// The embedded event store's tables (DuckDB, docs/search.md). `events` keeps one row per stored
// copy: when Weir received it (retention counts from there), its time (the event's own, or its
// receipt when missing or absurd), its origin, the class columns, the searched columns
// (pipeline/delivery/stored-columns.ts: each the JSON text of the field's value) and the whole
// event as JSON text, and that text's length in bytes (the size budget). `stored_batches` marks the batches already written, so a batch the pass
// writes again after a failed transaction is not stored twice.
import { STORED_COLUMNS } from '../../../../pipeline/delivery/stored-columns.js';

export const EVENT_COLUMNS = [
  'received',
  'time',
  'organization_id',
  'integration_id',
  'stream',
  'class_uid',
  'category_uid',
  'activity_id',
  'severity_id',
  'event_id',
  ...STORED_COLUMNS.map((c) => c.column),
  'event',
  'bytes',
] as const;

export const SCHEMA_SQL = [
  `create table if not exists events (
    received TIMESTAMP_MS not null,
    time TIMESTAMP_MS not null,
    organization_id INTEGER not null,
    integration_id INTEGER not null,
    stream VARCHAR not null,
    class_uid INTEGER,
    category_uid INTEGER,
    activity_id INTEGER,
    severity_id INTEGER,
    event_id UUID not null,
    ${STORED_COLUMNS.map((c) => `${c.column} VARCHAR`).join(',\n    ')},
    event JSON not null
  )`,
  // The event's JSON text length in UTF-8 bytes (the size budget counts it); added after the
  // first files were written, so last, and null on their rows (they count the text's length).
  `alter table events add column if not exists bytes INTEGER`,
  `create table if not exists stored_batches (batch_id VARCHAR primary key, stored_at TIMESTAMP_MS not null)`,
];
