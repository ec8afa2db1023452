// Table types for Kysely. One interface per table, grouped by the module that owns it.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T = unknown> = ColumnType<T, string | T, string | T>;

/** The database queue (platform/queue/database.ts); primary key (queue, id). */
export interface JobsTable {
  /** A caller-given jobId or a UUIDv7. */
  id: string;
  queue: string;
  name: string;
  payload: Json;
  state: 'waiting' | 'active' | 'completed' | 'failed';
  attempts_made: Generated<number>;
  max_attempts: number;
  backoff_ms: number;
  run_at: Timestamp;
  locked_by: string | null;
  locked_until: Timestamp | null;
  last_error: string | null;
  repeat_key: string | null;
  created_at: Generated<Date>;
  finished_at: Timestamp | null;
}

/** Repeating jobs of the database queue; primary key (queue, key). */
export interface JobSchedulesTable {
  key: string;
  queue: string;
  name: string;
  payload: Json;
  every_ms: number;
  next_run_at: Timestamp;
  updated_at: Generated<Date>;
}

export interface ProcessHeartbeatsTable {
  id: string;
  role: string;
  hostname: string;
  pid: number;
  started_at: Timestamp;
  last_seen_at: Timestamp;
  queue_backend: string;
}

export interface DB {
  jobs: JobsTable;
  job_schedules: JobSchedulesTable;
  process_heartbeats: ProcessHeartbeatsTable;
}
