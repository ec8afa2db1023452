// Quarantine rows for the medium tests, inserted directly as the normalization worker would.
import type { TestApp } from './app.js';
import { newId } from '../../src/core/ids.js';
import type { QuarantineKind } from '../../src/pipeline/envelope.js';

export interface QuarantineFixture {
  organizationId: number;
  integrationId: number;
  stream?: string;
  errorKind?: QuarantineKind;
  errorDetail?: string;
  status?: 'quarantined' | 'reprocessed';
  createdAt?: Date;
  raw?: Record<string, unknown>;
}

let clock = Date.parse('2025-04-01T00:00:00Z');

/** Inserts the rows in one statement; each one a minute newer than the one before. */
export async function quarantine(t: TestApp, rows: QuarantineFixture[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const values = rows.map((r) => {
    clock += 60_000;
    const createdAt = r.createdAt ?? new Date(clock);
    return {
      id: newId(),
      organization_id: r.organizationId,
      integration_id: r.integrationId,
      stream: r.stream ?? 'events',
      received_at: new Date(createdAt.getTime() - 1000),
      raw: JSON.stringify(r.raw ?? { user: 'alice', password_hint: 'unmasked on purpose' }),
      error_kind: r.errorKind ?? 'no_mapping',
      error_detail: r.errorDetail ?? 'no mapping for custom/events',
      mapping_version_id: null,
      status: r.status ?? 'quarantined',
      created_at: createdAt,
      updated_at: createdAt,
      reprocessed_at: r.status === 'reprocessed' ? createdAt : null,
    };
  });
  await t.container.database.db.insertInto('quarantine_events').values(values).execute();
  return values.map((v) => v.id);
}

export async function integration(t: TestApp, organizationId: number, name: string): Promise<number> {
  const row = await t.container.database.db
    .insertInto('integrations')
    .values({ organization_id: organizationId, name, platform: 'custom', config: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function stored(t: TestApp, id: string) {
  return t.container.database.db.selectFrom('quarantine_events').selectAll().where('id', '=', id).executeTakeFirst();
}
