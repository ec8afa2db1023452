// The ordered list of migrations. Names sort in the order they run; append only.
import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.js';
import * as m0002 from './0002_identity.js';
import * as m0003 from './0003_normalization.js';
import * as m0004 from './0004_audit_target_index.js';
import * as m0005 from './0005_compressed_payloads.js';
import * as m0006 from './0006_delivery.js';
import * as m0007 from './0007_collection.js';
import * as m0008 from './0008_accepted_batches.js';
import * as m0009 from './0009_destination_test_state.js';
import * as m0010 from './0010_enrichment.js';
import * as m0011 from './0011_identity_sso.js';
import * as m0012 from './0012_email.js';
import * as m0013 from './0013_dashboard_day_indexes.js';
import * as m0014 from './0014_ledger_hours.js';
import * as m0015 from './0015_event_store.js';
import * as m0016 from './0016_detections.js';
import * as m0020 from './0020_syslog_listeners.js';
import * as m0021 from './0021_event_store_received.js';
import * as m0022 from './0022_syslog_kernel_drops.js';
import * as m0023 from './0023_collector_paused.js';
import * as m0024 from './0024_event_store_bytes.js';
import * as m0025 from './0025_retire_routing_stage.js';
import * as m0026 from './0026_syslog_last_message.js';
import * as m0027 from './0027_hec_channels.js';
import * as m0028 from './0028_bus_consumers.js';
import * as m0029 from './0029_delivery_trace.js';

export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_identity': m0002,
  '0003_normalization': m0003,
  '0004_audit_target_index': m0004,
  '0005_compressed_payloads': m0005,
  '0006_delivery': m0006,
  '0007_collection': m0007,
  '0008_accepted_batches': m0008,
  '0009_destination_test_state': m0009,
  '0010_enrichment': m0010,
  '0011_identity_sso': m0011,
  '0012_email': m0012,
  '0013_dashboard_day_indexes': m0013,
  '0014_ledger_hours': m0014,
  '0015_event_store': m0015,
  '0016_detections': m0016,
  '0020_syslog_listeners': m0020,
  '0021_event_store_received': m0021,
  '0022_syslog_kernel_drops': m0022,
  '0023_collector_paused': m0023,
  '0024_event_store_bytes': m0024,
  '0025_retire_routing_stage': m0025,
  '0026_syslog_last_message': m0026,
  '0027_hec_channels': m0027,
  '0028_bus_consumers': m0028,
  '0029_delivery_trace': m0029,
};
