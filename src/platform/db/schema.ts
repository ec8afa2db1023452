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
  /** base64(gzip(JSON)) of a large payload (then payload is null). */
  payload_gz: string | null;
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

type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
type Serial = Generated<number>;

export interface OrganizationsTable {
  id: Serial;
  name: string;
  is_active: Generated<boolean>;
  retention_days: Generated<number>;
  case_customer_id: string | null;
  partner_tenant_ids: Json<string[]>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface UsersTable {
  id: Serial;
  username: string;
  email: string;
  password_hash: string;
  role: string;
  organization_id: number | null;
  is_active: Generated<boolean>;
  display_name: string | null;
  locale: Generated<string>;
  password_changed_at: CreatedAt;
  last_login_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface SessionsTable {
  id_hash: string;
  user_id: number;
  created_at: CreatedAt;
  last_seen_at: CreatedAt;
  expires_at: Timestamp;
  ip: string | null;
  user_agent: string | null;
}

export interface ServiceAccountsTable {
  id: Serial;
  name: string;
  role: string;
  organization_id: number | null;
  is_active: Generated<boolean>;
  created_by: number | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface ApiTokensTable {
  id: Serial;
  user_id: number | null;
  service_account_id: number | null;
  name: string;
  token_prefix: string;
  token_hash: string;
  scopes: Json<string[] | null> | null;
  expires_at: Timestamp | null;
  is_eternal: Generated<boolean>;
  created_at: CreatedAt;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface AuditLogTable {
  seq: number;
  at: Timestamp;
  actor_kind: string;
  actor_id: number | null;
  actor_name: string | null;
  organization_id: number | null;
  operation_id: string;
  method: string;
  path: string;
  target_type: string | null;
  target_id: string | null;
  outcome: string;
  status: number;
  error_code: string | null;
  correlation_id: string;
  details: Json<Record<string, unknown>>;
  prev_hash: string;
  hash: string;
}

export interface AuditChainHeadTable {
  id: number;
  seq: number;
  hash: string;
}

export interface LicensesTable {
  id: Serial;
  token: string;
  edition: string;
  claims: Json<Record<string, unknown>>;
  activated_by: number | null;
  activated_at: CreatedAt;
  removed_at: Timestamp | null;
}

export interface IntegrationsTable {
  id: Serial;
  organization_id: number;
  name: string;
  platform: string;
  is_active: Generated<boolean>;
  parent_id: number | null;
  config: Json<Record<string, unknown>>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface OrgDataDeletionsTable {
  id: string;
  organization_id: number;
  requested_by: number | null;
  state: string;
  detail: Json<Record<string, unknown>>;
  created_at: CreatedAt;
  finished_at: Timestamp | null;
}

/** One per integration (normalization migration). */
export interface IngestionTokensTable {
  integration_id: number;
  organization_id: number;
  token_prefix: string;
  token_hash: string;
  created_by: number | null;
  created_at: CreatedAt;
  last_used_at: Timestamp | null;
}

export interface MappingDefinitionsTable {
  id: string;
  /** null: built-in, platform-wide. */
  organization_id: number | null;
  platform: string;
  stream: string;
  name: string;
  description: Generated<string>;
  builtin: Generated<boolean>;
  live_version_id: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface MappingVersionsTable {
  id: string;
  definition_id: string;
  version: number;
  document: Json<Record<string, unknown>>;
  checksum: string;
  comment: Generated<string>;
  builtin: Generated<boolean>;
  created_by: number | null;
  created_at: CreatedAt;
}

export interface NormalizedBatchesTable {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  source: string;
  event_count: number;
  flagged_count: Generated<number>;
  quarantined_count: Generated<number>;
  bytes: number;
  events: string;
  route_state: Generated<string>;
  created_at: CreatedAt;
}

export interface QuarantineEventsTable {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  received_at: Timestamp;
  raw: Json;
  error_kind: string;
  error_detail: string;
  mapping_version_id: string | null;
  status: Generated<'quarantined' | 'reprocessed'>;
  attempts: Generated<number>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  reprocessed_at: Timestamp | null;
}

export interface DriftFieldsTable {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  path: string;
  value_type: string;
  status: Generated<'new' | 'ignored' | 'mapped'>;
  /** Estimated from sampled events. */
  count: ColumnType<number, number | undefined, number>;
  example: string | null;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
  updated_at: CreatedAt;
}

export interface RawSamplesTable {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  received_at: Timestamp;
  raw: Json;
}

export interface OcsfPoliciesTable {
  organization_id: number;
  mode: 'strict' | 'lenient';
  updated_by: number | null;
  updated_at: CreatedAt;
}

/** bigint columns: the pg adapters parse int8 as number (platform/db/index.ts). */
type BigCount = ColumnType<number, number | undefined, number>;

export interface OcsfComplianceTable {
  organization_id: number;
  integration_id: number;
  class_uid: number;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  valid: BigCount;
  invalid: BigCount;
  last_error: string | null;
  last_invalid_at: Timestamp | null;
}

export interface StreamCountersTable {
  organization_id: number;
  integration_id: number;
  stream: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  events_in: BigCount;
  bytes_in: BigCount;
  normalized: BigCount;
  flagged: BigCount;
  quarantined: BigCount;
  last_event_at: Timestamp | null;
}

export interface DB {
  jobs: JobsTable;
  job_schedules: JobSchedulesTable;
  process_heartbeats: ProcessHeartbeatsTable;
  organizations: OrganizationsTable;
  users: UsersTable;
  sessions: SessionsTable;
  service_accounts: ServiceAccountsTable;
  api_tokens: ApiTokensTable;
  audit_log: AuditLogTable;
  audit_chain_head: AuditChainHeadTable;
  licenses: LicensesTable;
  integrations: IntegrationsTable;
  org_data_deletions: OrgDataDeletionsTable;
  ingestion_tokens: IngestionTokensTable;
  mapping_definitions: MappingDefinitionsTable;
  mapping_versions: MappingVersionsTable;
  normalized_batches: NormalizedBatchesTable;
  quarantine_events: QuarantineEventsTable;
  drift_fields: DriftFieldsTable;
  raw_samples: RawSamplesTable;
  ocsf_policies: OcsfPoliciesTable;
  ocsf_compliance: OcsfComplianceTable;
  stream_counters: StreamCountersTable;
}
