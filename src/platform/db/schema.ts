// Table types for Kysely. One interface per table, grouped by the module that owns it.
import type { ColumnType, Generated } from 'kysely';

// Required on insert: a timestamp column with a database default is a CreatedAt (below).
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T = unknown> = ColumnType<T, string | T, string | T>;
/** A jsonb column with a database default: an insert may leave it out. */
type JsonDefault<T = unknown> = ColumnType<T, string | T | undefined, string | T>;

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
  /** platform/queue/identity.ts brokerKey(): which broker, without credentials (0007). */
  broker: string | null;
}

type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
type Serial = Generated<number>;

export interface OrganizationsTable {
  id: Serial;
  name: string;
  is_active: Generated<boolean>;
  retention_days: Generated<number>;
  case_customer_id: string | null;
  partner_tenant_ids: JsonDefault<string[]>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  /** Events the event store's retention removed, and when it last did (0021). */
  store_removed: Generated<string>;
  store_removed_at: Timestamp | null;
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
  /** SSO users (0011): the identity provider's issuer and subject, the claims of the last login. */
  sso_issuer: Generated<string | null>;
  sso_subject: Generated<string | null>;
  sso_claims: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
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
  details: JsonDefault<Record<string, unknown>>;
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
  config: JsonDefault<Record<string, unknown>>;
  /** Encrypted secret config fields (0007); see platform/crypto/credentials.ts. */
  secrets: string | null;
  secrets_key_id: string | null;
  collection_filters: ColumnType<Record<string, unknown>, string | undefined, string>;
  auto_approve_policy: ColumnType<Record<string, unknown>, string | undefined, string>;
  external_tenant_id: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface OrgDataDeletionsTable {
  id: string;
  organization_id: number;
  requested_by: number | null;
  state: string;
  detail: JsonDefault<Record<string, unknown>>;
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
  /** Routing holds a pending batch until then (a killed dispatcher's batch comes back after it). */
  leased_until: Timestamp | null;
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
  /** Quarantined events a reprocess later normalized (the ledger counts quarantined − quarantine_released). */
  quarantine_released: BigCount;
  /** Collected events dropped by the normalization stage as already seen (0007). */
  duplicates: BigCount;
  last_event_at: Timestamp | null;
}

/** Ingest batches accepted and not yet normalized (0008): the ledger's queued events. */
export interface AcceptedBatchesTable {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  event_count: number;
  accepted_at: Timestamp;
}

// Delivery (0006): destinations, routes, outbox, DLQ, state, ledger, stats, lineage, taps.

export interface DestinationsTable {
  id: string;
  /** null: a global destination (platform scope). */
  organization_id: number | null;
  name: string;
  description: Generated<string>;
  type: string;
  config: Json<Record<string, unknown>>;
  delivery: JsonDefault<Record<string, unknown>>;
  enabled: Generated<boolean>;
  disabled_reason: string | null;
  /** base64(iv | tag | ciphertext), AES-256-GCM, destination id as associated data. Never leaves the server. */
  credential: string | null;
  credential_key_id: string | null;
  credential_updated_at: Timestamp | null;
  shadow_destination_id: string | null;
  version: Generated<number>;
  created_by: number | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface RoutesTable {
  id: string;
  organization_id: number;
  name: string;
  description: Generated<string>;
  position: number;
  enabled: Generated<boolean>;
  condition: Json<unknown> | null;
  transforms: JsonDefault<unknown[]>;
  destination_ids: JsonDefault<string[]>;
  final: Generated<boolean>;
  version: Generated<number>;
  created_by: number | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface RouteVersionsTable {
  id: string;
  route_id: string;
  version: number;
  definition: Json<Record<string, unknown>>;
  comment: Generated<string>;
  created_by: number | null;
  created_at: CreatedAt;
}

export interface DeliveryBatchesTable {
  id: string;
  destination_id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  source_batch_id: string;
  kind: 'primary' | 'shadow' | 'reprocess' | 'replay';
  event_count: number;
  bytes: number;
  event_ids: string;
  events: string;
  attempts: Generated<number>;
  next_attempt_at: CreatedAt;
  leased_until: Timestamp | null;
  lease_owner: string | null;
  last_error: string | null;
  created_at: CreatedAt;
  trace_parent: Generated<string | null>;
}

export interface DlqEventsTable {
  id: string;
  destination_id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  event_id: string;
  delivery_batch_id: string;
  event: string;
  error_kind: string;
  reason: string;
  status_code: number | null;
  attempts: number;
  status: Generated<'dead' | 'reprocessed'>;
  created_at: CreatedAt;
  reprocessed_at: Timestamp | null;
}

export interface DestinationStateTable {
  destination_id: string;
  breaker_state: Generated<'closed' | 'open' | 'half_open'>;
  consecutive_failures: Generated<number>;
  opened_at: Timestamp | null;
  last_attempt_at: Timestamp | null;
  last_success_at: Timestamp | null;
  last_error: string | null;
  last_error_at: Timestamp | null;
  /** The last connection test (POST .../test) and whether it succeeded. */
  last_test_at: Timestamp | null;
  last_test_ok: boolean | null;
  updated_at: CreatedAt;
}

export interface LedgerTable {
  organization_id: number;
  integration_id: number;
  stream: string;
  day: string;
  /** filtered | routed | copies | delivered | dead_lettered | dlq_reprocessed | shadow_delivered | shadow_dropped */
  outcome: string;
  destination_id: Generated<string>;
  reason: Generated<string>;
  count: BigCount;
}

/** The dashboard's traffic terms per stream and UTC hour (0014), written with the ledger and the counters. */
/** The syslog receiver's listeners, per process (0020). */
/** A message bus input's consumer as one process runs it (migration 0028). */
export interface BusConsumersTable {
  integration_id: number;
  /** hostname:pid */
  process: string;
  /** rabbitmq | nats */
  platform: string;
  /** The queue, or stream/consumer. */
  source: string;
  /** consuming | error | stopped */
  state: string;
  error: string | null;
  received: BigCount;
  accepted: BigCount;
  rejected: BigCount;
  released: BigCount;
  last_rejection: string | null;
  last_message_at: Timestamp | null;
  started_at: Timestamp;
  updated_at: Timestamp;
}

export interface SyslogListenersTable {
  integration_id: number;
  protocol: string;
  port: number;
  /** hostname:pid */
  process: string;
  /** listening | error | stopped */
  state: string;
  error: string | null;
  received: BigCount;
  accepted: BigCount;
  dropped: BigCount;
  /** UDP: datagrams the kernel dropped (the socket's receive buffer was full). Migration 0022. */
  dropped_kernel: Generated<BigCount>;
  refused: BigCount;
  connections: Generated<number>;
  /** UDP: SO_RCVBUF as the kernel set it. Migration 0022. */
  receive_buffer_bytes: number | null;
  /** When the listener last received a message. Migration 0026. */
  last_message_at: Timestamp | null;
  started_at: Timestamp;
  updated_at: Timestamp;
}

/** Splunk HEC data channels and their unanswered acknowledgements (0027, modules/hec). */
export interface HecChannelsTable {
  integration_id: number;
  channel: string;
  /** bigint, required on insert (no default). */
  next_ack_id: ColumnType<number, number, number>;
  /** ackId (as text) -> the ingest batch ids of its request. */
  pending: Json<Record<string, string[]>>;
  used_at: Timestamp;
}

export interface LedgerHoursTable {
  organization_id: number;
  integration_id: number;
  stream: string;
  /** Truncated to the UTC hour. */
  hour: Timestamp;
  /** events_in | quarantined | quarantine_released | filtered | delivered | dead_lettered | dlq_reprocessed */
  term: string;
  count: BigCount;
}

export interface RouteStatsTable {
  route_id: string;
  organization_id: number;
  hour: Timestamp;
  matched: BigCount;
  sampled_out: BigCount;
  copies: BigCount;
}

export interface DestinationStatsTable {
  destination_id: string;
  hour: Timestamp;
  delivered: BigCount;
  bytes: BigCount;
  requests: BigCount;
  failed_requests: BigCount;
  dead_lettered: BigCount;
  shadow_delivered: BigCount;
  latency_ms_sum: BigCount;
  latency_ms_max: ColumnType<number, number | undefined, number>;
}

export interface LineageEventsTable {
  event_id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  mapping_version_id: string | null;
  received_at: Timestamp;
  normalized_batch_id: string;
  routes: Json<string[]>;
  filtered: string | null;
  created_at: CreatedAt;
}

export interface LineageCopiesTable {
  event_id: string;
  destination_id: string;
  delivery_batch_id: string;
  route_id: string | null;
  kind: string;
  created_at: CreatedAt;
}

export interface LineageAttemptsTable {
  id: string;
  delivery_batch_id: string;
  destination_id: string;
  attempt: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  at: CreatedAt;
}

export interface TapSamplesTable {
  id: Generated<number>;
  destination_id: string;
  session_id: string;
  event: string;
  at: CreatedAt;
}

export interface TapSessionsTable {
  id: string;
  destination_id: string;
  expires_at: Timestamp;
  max_events: number;
  created_by: number | null;
  created_at: CreatedAt;
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
  accepted_batches: AcceptedBatchesTable;
  destinations: DestinationsTable;
  routes: RoutesTable;
  route_versions: RouteVersionsTable;
  delivery_batches: DeliveryBatchesTable;
  dlq_events: DlqEventsTable;
  destination_state: DestinationStateTable;
  ledger: LedgerTable;
  ledger_hours: LedgerHoursTable;
  syslog_listeners: SyslogListenersTable;
  hec_channels: HecChannelsTable;
  bus_consumers: BusConsumersTable;
  route_stats: RouteStatsTable;
  destination_stats: DestinationStatsTable;
  lineage_events: LineageEventsTable;
  lineage_copies: LineageCopiesTable;
  lineage_attempts: LineageAttemptsTable;
  tap_samples: TapSamplesTable;
  tap_sessions: TapSessionsTable;
  collector_state: CollectorStateTable;
  collected_keys: CollectedKeysTable;
  collector_runs: CollectorRunsTable;
  collector_usage: CollectorUsageTable;
  backfill_jobs: BackfillJobsTable;
  discovered_tenants: DiscoveredTenantsTable;
  tenant_syncs: TenantSyncsTable;
  integration_checks: IntegrationChecksTable;
  collector_settings: CollectorSettingsTable;
  capture_sessions: CaptureSessionsTable;
  capture_events: CaptureEventsTable;
  enrichment_tables: EnrichmentTablesTable;
  enrichment_table_versions: EnrichmentTableVersionsTable;
  enrichment_sources: EnrichmentSourcesTable;
  enrichment_policies: EnrichmentPoliciesTable;
  enrichment_policy_versions: EnrichmentPolicyVersionsTable;
  enrichment_metrics: EnrichmentMetricsTable;
  enrichment_activity: EnrichmentActivityTable;
  email_settings: EmailSettingsTable;
  email_recipients: EmailRecipientsTable;
  email_deliveries: EmailDeliveriesTable;
  identity_config: IdentityConfigTable;
  sso_login_states: SsoLoginStatesTable;
  identity_sync_runs: IdentitySyncRunsTable;
  events: EventsTable;
  saved_queries: SavedQueriesTable;
  schedules: SchedulesTable;
  search_runs: SearchRunsTable;
  replays: ReplaysTable;
  detection_rules: DetectionRulesTable;
  detection_rule_versions: DetectionRuleVersionsTable;
  detection_windows: DetectionWindowsTable;
  detection_suppressions: DetectionSuppressionsTable;
  detections: DetectionsTable;
  detection_history: DetectionHistoryTable;
}

// Collection (0007): collector state, dedup keys, runs, usage, backfill, tenants, checks,
// settings, live capture. docs/collection.md.
export interface CollectorStateTable {
  integration_id: number;
  stream: string;
  organization_id: number;
  cursor: string | null;
  watermark_at: Timestamp | null;
  last_run_at: Timestamp | null;
  last_success_at: Timestamp | null;
  consecutive_failures: Generated<number>;
  last_run_capped: Generated<boolean>;
  /** Why collection waits for the pipeline (disk floor, a destination's backlog budget); null when it does not. Migration 0023. */
  paused_reason: Generated<string | null>;
  last_error: string | null;
  last_error_at: Timestamp | null;
  last_events: Generated<number>;
  last_duration_ms: number | null;
  events_total: BigCount;
  cycles_skipped_locked: BigCount;
  next_run_at: Timestamp | null;
  gap_from: Timestamp | null;
  gap_to: Timestamp | null;
  gap_detected_at: Timestamp | null;
  reset_at: Timestamp | null;
  updated_at: Generated<Date>;
}

export interface CollectedKeysTable {
  integration_id: number;
  stream: string;
  key: string;
  seen_at: Timestamp;
}

export interface CollectorRunsTable {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  reason: 'schedule' | 'trigger';
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'skipped_locked' | 'paused';
  requested_by: number | null;
  pages: Generated<number>;
  events: Generated<number>;
  capped: Generated<boolean>;
  error: string | null;
  created_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
}

export interface CollectorUsageTable {
  organization_id: number;
  integration_id: number;
  stream: string;
  day: string;
  requests: BigCount;
  rate_limited: BigCount;
  errors: BigCount;
  pages: BigCount;
  events: BigCount;
  filtered: BigCount;
  bytes: BigCount;
}

export interface BackfillJobsTable {
  id: string;
  organization_id: number;
  integration_id: number;
  streams: Json<string[]>;
  from_ts: Timestamp;
  to_ts: Timestamp;
  status: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  cancel_requested: Generated<boolean>;
  progress: ColumnType<Record<string, unknown>, string | undefined, string>;
  events: BigCount;
  pages: Generated<number>;
  warnings: ColumnType<string[], string | undefined, string>;
  error: string | null;
  created_by: number | null;
  created_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  updated_at: Timestamp;
  resume_at: Timestamp | null;
}

export interface DiscoveredTenantsTable {
  integration_id: number;
  external_id: string;
  organization_id: number;
  name: string;
  domain: string | null;
  details: ColumnType<Record<string, unknown>, string | undefined, string>;
  selected: Generated<boolean>;
  selected_at: Timestamp | null;
  child_integration_id: number | null;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
  present: Generated<boolean>;
}

export interface TenantSyncsTable {
  integration_id: number;
  organization_id: number;
  status: string;
  discovered: Generated<number>;
  materialized: Generated<number>;
  error: string | null;
  warning: string | null;
  synced_at: Timestamp;
}

export interface IntegrationChecksTable {
  id: string;
  organization_id: number;
  integration_id: number;
  ok: boolean;
  status: number | null;
  latency_ms: number;
  detail: string;
  checked_by: number | null;
  checked_at: Timestamp;
}

export interface CollectorSettingsTable {
  id: number;
  settings: Json<Record<string, unknown>>;
  updated_by: number | null;
  updated_at: Timestamp;
}

export interface CaptureSessionsTable {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string | null;
  status: 'active' | 'stopped' | 'expired' | 'full';
  max_events: number;
  events_captured: Generated<number>;
  created_by: number | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  stopped_at: Timestamp | null;
}

export interface CaptureEventsTable {
  id: string;
  session_id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  source: string;
  raw: Json<Record<string, unknown>>;
  bytes: number;
  captured_at: Timestamp;
}

// Enrichment (0010): tables, sources, policies, the live series, activity. docs/enrichment.md.
export interface EnrichmentTablesTable {
  id: string;
  organization_id: number;
  name: string;
  description: Generated<string>;
  key_column: string;
  match: string;
  version: Generated<number>;
  live_version_id: string | null;
  row_count: Generated<number>;
  created_by: number | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface EnrichmentTableVersionsTable {
  id: string;
  table_id: string;
  version: number;
  kind: string;
  row_count: number;
  columns: Json<string[]>;
  /** base64(gzip(encoded table)). */
  data: string;
  checksum: string;
  comment: Generated<string>;
  created_by: number | null;
  created_at: CreatedAt;
}

export interface EnrichmentSourcesTable {
  id: string;
  organization_id: number;
  name: string;
  description: Generated<string>;
  kind: string;
  config: Json<Record<string, unknown>>;
  credential: string | null;
  credential_key_id: string | null;
  shared: Generated<boolean>;
  enabled: Generated<boolean>;
  blob: string | null;
  blob_info: Json<Record<string, unknown>> | null;
  table_id: string | null;
  status: JsonDefault<Record<string, unknown>>;
  next_fetch_at: Timestamp | null;
  version: Generated<number>;
  created_by: number | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface EnrichmentPoliciesTable {
  id: string;
  organization_id: number;
  name: string;
  enabled: Generated<boolean>;
  version: Generated<number>;
  definition: Json<Record<string, unknown>>;
  created_by: number | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface EnrichmentPolicyVersionsTable {
  id: string;
  policy_id: string;
  version: number;
  definition: Json<Record<string, unknown>>;
  comment: Generated<string>;
  created_by: number | null;
  created_at: CreatedAt;
}

export interface EnrichmentMetricsTable {
  policy_id: string;
  minute: Timestamp;
  organization_id: number;
  seen: BigCount;
  hits: BigCount;
  misses: BigCount;
  errors: BigCount;
  unanswered: BigCount;
  micros: BigCount;
}

export interface EnrichmentActivityTable {
  id: string;
  organization_id: number;
  at: Timestamp;
  kind: string;
  subject_type: string;
  subject_id: string;
  message: string;
  actor_id: number | null;
}

// E-mail (0012): SMTP settings (one row), recipients per organization, delivery records.
// docs/email.md.
export interface EmailSettingsTable {
  id: number;
  host: string;
  port: number;
  security: string;
  username: string | null;
  /** Sealed by the credential cipher; never returned. */
  password: string | null;
  password_key_id: string | null;
  from_address: string;
  ca_pem: string | null;
  updated_by: number | null;
  updated_at: CreatedAt;
}

export interface EmailRecipientsTable {
  id: Generated<number>;
  organization_id: number;
  address: string;
  name: string | null;
  created_at: CreatedAt;
}

export interface EmailDeliveriesTable {
  id: string;
  organization_id: number;
  recipient_id: number | null;
  address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  /** JSON [{filename, content_type, content}] of text attachments; null when none or dropped. */
  attachments: string | null;
  status: string;
  attempts: Generated<number>;
  last_error: string | null;
  message_id: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

// Single sign-on (0011). docs/sso.md.
export interface IdentityConfigTable {
  id: number;
  enabled: Generated<boolean>;
  issuer: string;
  client_id: string;
  client_secret: string | null;
  client_secret_key_id: string | null;
  scopes: Json;
  redirect_uri: string;
  username_claim: string;
  rules: Json;
  password_login_for_sso_users: Generated<boolean>;
  scim_base_url: string | null;
  scim_token: string | null;
  scim_token_key_id: string | null;
  updated_by: number | null;
  updated_at: CreatedAt;
}

export interface SsoLoginStatesTable {
  state_hash: string;
  nonce: string;
  code_verifier: string;
  return_to: string;
  expires_at: Timestamp;
  created_at: CreatedAt;
}

export interface IdentitySyncRunsTable {
  id: string;
  status: string;
  source: string;
  seen: Generated<number>;
  total: number | null;
  result: Json | null;
  error: string | null;
  requested_by: number | null;
  created_at: CreatedAt;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
}

// Search (0015): the event store, saved queries, schedules, search history, replays.

/** The event store: partitioned by range of time (UTC days); no primary key (see 0015). */
export interface EventsTable {
  time: Timestamp;
  organization_id: number;
  integration_id: number;
  stream: string;
  class_uid: number | null;
  category_uid: number | null;
  activity_id: number | null;
  severity_id: number | null;
  event_id: string;
  event: Json<Record<string, unknown>>;
  /** When Weir received the event (retention counts from it); null on rows stored before 0021. */
  received: Timestamp | null;
  /** The event's JSON text length in UTF-8 bytes as the pass wrote it (the size budget counts it); null on rows stored before 0024. */
  bytes: number | null;
}

export interface SavedQueriesTable {
  id: string;
  organization_id: number;
  name: string;
  description: Generated<string>;
  query: Json<Record<string, unknown>>;
  created_by: number | null;
  updated_by: number | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface SchedulesTable {
  id: string;
  organization_id: number;
  name: string;
  query_id: string;
  cron: string | null;
  timezone: Generated<string>;
  interval_seconds: number | null;
  notify: Json<Record<string, unknown>>;
  enabled: Generated<boolean>;
  last_slot: Timestamp | null;
  next_run_at: Timestamp;
  created_by: number | null;
  created_at: CreatedAt;
}

export interface SearchRunsTable {
  id: string;
  organization_id: number;
  user_id: number | null;
  actor: string;
  kind: 'interactive' | 'scheduled';
  query_id: string | null;
  schedule_id: string | null;
  slot: Timestamp | null;
  query: Json<Record<string, unknown>>;
  state: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  progress: Generated<number>;
  cancel_requested: Generated<boolean>;
  matched: ColumnType<string | number | null, number | null | undefined, number | null>;
  returned: number | null;
  capped: boolean | null;
  took_ms: number | null;
  error: string | null;
  /** base64(gzip(JSON)) of {rows, aggregations}; null once expired. */
  result: string | null;
  /** base64(gzip(CSV text)); null once expired (before the result). */
  csv: string | null;
  notified: Json<Record<string, unknown>> | null;
  created_at: CreatedAt;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  result_expires_at: Timestamp | null;
  csv_expires_at: Timestamp | null;
}

export interface ReplaysTable {
  id: string;
  organization_id: number;
  destination_id: string;
  query: Json<Record<string, unknown>>;
  state: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  cancel_requested: Generated<boolean>;
  total: ColumnType<string | number | null, number | null | undefined, number | null>;
  replayed: ColumnType<string | number, number | undefined, number>;
  cursor_time: Timestamp | null;
  cursor_id: string | null;
  error: string | null;
  created_by: number | null;
  actor: string;
  created_at: CreatedAt;
  finished_at: Timestamp | null;
}

// Detections (0016). docs/detections.md.
export interface DetectionRulesTable {
  id: string;
  organization_id: number;
  name: string;
  enabled: Generated<boolean>;
  live_version_id: string | null;
  created_by: number | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface DetectionRuleVersionsTable {
  id: string;
  rule_id: string;
  version: number;
  definition: Json<Record<string, unknown>>;
  comment: Generated<string>;
  created_by: number | null;
  created_at: CreatedAt;
}

export interface DetectionWindowsTable {
  rule_id: string;
  group_key: string;
  window_start: Timestamp;
  organization_id: number;
  count: number;
  event_ids: Json<string[]>;
  fired_at: Timestamp | null;
  updated_at: Timestamp;
}

export interface DetectionSuppressionsTable {
  rule_id: string;
  group_key: string;
  organization_id: number;
  until: Timestamp;
}

export interface DetectionsTable {
  id: string;
  organization_id: number;
  source: 'vendor' | 'rule' | 'schedule';
  uid: string;
  rule_id: string | null;
  rule_version: number | null;
  schedule_id: string | null;
  search_id: string | null;
  integration_id: number | null;
  stream: string | null;
  title: string;
  description: Generated<string>;
  severity_id: number;
  status: 'new' | 'in_progress' | 'resolved' | 'false_positive' | 'suppressed';
  assignee_id: number | null;
  mitre: Json<{ tactics: string[]; techniques: string[] }>;
  event_ids: Json<string[]>;
  event_count: number;
  finding: Json<Record<string, unknown>>;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
  notified_at: Timestamp | null;
  case_id: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface DetectionHistoryTable {
  id: string;
  detection_id: string;
  at: Timestamp;
  actor: string;
  kind: 'created' | 'updated' | 'status' | 'assignee' | 'comment' | 'case' | 'notified';
  change: Json<Record<string, unknown>>;
  comment: string | null;
}
