import { sql, type Kysely } from 'kysely';

// Detections (docs/detections.md, decision 0036): detection rules versioned like mappings; the
// threshold windows and suppressions the one pass keeps for them, written in each batch's own
// transaction (so they are shared by every worker process and survive a restart); detections
// (vendor findings, rule matches, scheduled alerts) with their triage history.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('detection_rules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('live_version_id', 'text')
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index detection_rules_name on detection_rules (organization_id, lower(name))`.execute(db);

  await db.schema
    .createTable('detection_rule_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('rule_id', 'text', (c) => c.notNull().references('detection_rules.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('definition', 'jsonb', (c) => c.notNull())
    .addColumn('comment', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('detection_rule_versions_number', ['rule_id', 'version'])
    .execute();

  // Threshold state: matching events per rule, group key and window (tumbling, by event time).
  await db.schema
    .createTable('detection_windows')
    .addColumn('rule_id', 'text', (c) => c.notNull())
    .addColumn('group_key', 'text', (c) => c.notNull())
    .addColumn('window_start', 'timestamptz', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    // Event ids of the first matching events (the evidence of a finding), at most a few dozen.
    .addColumn('event_ids', 'jsonb', (c) => c.notNull())
    .addColumn('fired_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('detection_windows_pk', ['rule_id', 'group_key', 'window_start'])
    .execute();
  await sql`create index detection_windows_age on detection_windows (window_start)`.execute(db);
  await sql`create index detection_windows_org on detection_windows (organization_id)`.execute(db);

  // Suppression: after a rule fires for a group key, no new finding for it until then.
  await db.schema
    .createTable('detection_suppressions')
    .addColumn('rule_id', 'text', (c) => c.notNull())
    .addColumn('group_key', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('until', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('detection_suppressions_pk', ['rule_id', 'group_key'])
    .execute();
  await sql`create index detection_suppressions_until on detection_suppressions (until)`.execute(db);

  await db.schema
    .createTable('detections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    // vendor: a finding a mapping produced; rule: a detection rule's match; schedule: a scheduled search's alert.
    .addColumn('source', 'text', (c) => c.notNull())
    // What makes it the same detection again: the vendor's finding uid, the rule's group key and window, the search run.
    .addColumn('uid', 'text', (c) => c.notNull())
    .addColumn('rule_id', 'text')
    .addColumn('rule_version', 'integer')
    .addColumn('schedule_id', 'text')
    .addColumn('search_id', 'text')
    .addColumn('integration_id', 'integer')
    .addColumn('stream', 'text')
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('severity_id', 'integer', (c) => c.notNull())
    // new, in_progress, resolved, false_positive, suppressed (OCSF status_id 1, 2, 4, 4 + verdict 1, 3).
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('assignee_id', 'integer')
    .addColumn('mitre', 'jsonb', (c) => c.notNull())
    .addColumn('event_ids', 'jsonb', (c) => c.notNull())
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('finding', 'jsonb', (c) => c.notNull())
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('notified_at', 'timestamptz')
    .addColumn('case_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index detections_uid on detections (organization_id, source, uid)`.execute(db);
  await sql`create index detections_org_time on detections (organization_id, last_seen_at desc)`.execute(db);
  await sql`create index detections_open on detections (organization_id, status) where status in ('new', 'in_progress')`.execute(
    db,
  );
  await sql`create index detections_notify on detections (organization_id) where notified_at is null and severity_id >= 4`.execute(
    db,
  );

  await db.schema
    .createTable('detection_history')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('detection_id', 'text', (c) => c.notNull().references('detections.id').onDelete('cascade'))
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    // user:<id>, service_account:<id>, vendor, rule, schedule, weir
    .addColumn('actor', 'text', (c) => c.notNull())
    // created, updated, status, assignee, comment, case, notified
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('change', 'jsonb', (c) => c.notNull())
    .addColumn('comment', 'text')
    .execute();
  await sql`create index detection_history_detection on detection_history (detection_id, at)`.execute(db);
}
