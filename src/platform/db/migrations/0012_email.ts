import { sql, type Kysely } from 'kysely';

// E-mail (docs/email.md): the instance's SMTP settings (one row; the password sealed by the
// credential cipher), recipients per organization, and one delivery record per message and
// recipient (queued, retrying, sent, failed, cancelled) so a failed send is never silent.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('email_settings')
    // One row: id is always 1.
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('port', 'integer', (c) => c.notNull())
    // starttls, tls, none
    .addColumn('security', 'text', (c) => c.notNull())
    .addColumn('username', 'text')
    .addColumn('password', 'text')
    .addColumn('password_key_id', 'text')
    .addColumn('from_address', 'text', (c) => c.notNull())
    .addColumn('ca_pem', 'text')
    .addColumn('updated_by', 'integer')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('email_recipients')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index email_recipients_address on email_recipients (organization_id, lower(address))`.execute(
    db,
  );

  await db.schema
    .createTable('email_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    // The recipient row may be deleted; the record keeps the address it was for.
    .addColumn('recipient_id', 'integer', (c) => c.references('email_recipients.id').onDelete('set null'))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text_body', 'text', (c) => c.notNull())
    .addColumn('html_body', 'text')
    // queued, retrying, sending, sent, failed, cancelled
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('message_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index email_deliveries_recipient on email_deliveries (recipient_id, created_at desc)`.execute(db);
  await sql`create index email_deliveries_organization on email_deliveries (organization_id, created_at desc)`.execute(
    db,
  );
}
