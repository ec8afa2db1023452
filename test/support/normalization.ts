// Helpers for normalization tests: integrations, mapping versions made live straight in the
// database (as the mappings API does: live_version_id and updated_at), ingest batches and
// the worker's job handlers called directly (test apps run no consumers).
import { sql } from 'kysely';
import { newId } from '../../src/core/ids.js';
import { decodeRecords } from '../../src/pipeline/batch-codec.js';
import { loadBody } from '../../src/platform/bodylog/stored.js';
import { NORMALIZE_JOB, NORMALIZE_QUEUE, type IngestBatch } from '../../src/pipeline/envelope.js';
import type { TestApp } from './app.js';

export async function createIntegration(t: TestApp, organizationId: number, platform = 'custom'): Promise<number> {
  const row = await t.container.database.db
    .insertInto('integrations')
    .values({ organization_id: organizationId, name: `i-${newId()}`, platform, config: JSON.stringify({}) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Adds a version to the (organization, platform, stream) definition, creating it if needed, and makes it live. */
export async function publishMapping(
  t: TestApp,
  organizationId: number | null,
  platform: string,
  stream: string,
  document: object,
): Promise<string> {
  const db = t.container.database.db;
  const existing = await db
    .selectFrom('mapping_definitions')
    .select('id')
    .where(sql<boolean>`coalesce(organization_id, 0) = ${organizationId ?? 0}`)
    .where('platform', '=', platform)
    .where('stream', '=', stream)
    .executeTakeFirst();
  const definitionId = existing?.id ?? newId();
  if (!existing) {
    await db
      .insertInto('mapping_definitions')
      .values({
        id: definitionId,
        organization_id: organizationId,
        platform,
        stream,
        name: `${platform} / ${stream}`,
        live_version_id: null,
      })
      .execute();
  }
  const max = await db
    .selectFrom('mapping_versions')
    .select((eb) => eb.fn.max('version').as('m'))
    .where('definition_id', '=', definitionId)
    .executeTakeFirst();
  const versionId = newId();
  await db
    .insertInto('mapping_versions')
    .values({
      id: versionId,
      definition_id: definitionId,
      version: Number(max?.m ?? 0) + 1,
      document: JSON.stringify(document),
      checksum: versionId,
    })
    .execute();
  await db
    .updateTable('mapping_definitions')
    .set({ live_version_id: versionId, updated_at: new Date() })
    .where('id', '=', definitionId)
    .execute();
  return versionId;
}

export function ingestBatch(
  organizationId: number,
  integrationId: number,
  stream: string,
  events: Record<string, unknown>[],
  platform = 'custom',
): IngestBatch {
  return {
    id: newId(),
    organization_id: organizationId,
    integration_id: integrationId,
    platform,
    stream,
    received_at: new Date().toISOString(),
    source: 'push',
    ids: events.map(() => newId()),
    events,
    bytes: Buffer.byteLength(JSON.stringify(events)),
  };
}

function handler(t: TestApp, queue: string, name: string) {
  const h = t.container.jobs.find((j) => j.queue === queue)?.handlers[name];
  if (!h) throw new Error(`no handler ${name} on ${queue}`);
  return h;
}

/** Runs the worker's normalize job on a batch, as a consumer would (attempt says which delivery). */
export async function runNormalize(t: TestApp, batch: IngestBatch, attempt = 1): Promise<void> {
  await handler(
    t,
    NORMALIZE_QUEUE,
    NORMALIZE_JOB,
  )(
    { id: batch.id, queue: NORMALIZE_QUEUE, name: NORMALIZE_JOB, payload: batch, attempt, maxAttempts: 3 },
    new AbortController().signal,
  );
}

export async function runJob(t: TestApp, queue: string, name: string): Promise<void> {
  await handler(
    t,
    queue,
    name,
  )({ id: newId(), queue, name, payload: {}, attempt: 1, maxAttempts: 1 }, new AbortController().signal);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A destination of the organization and a catch-all route to it, written straight in the
 * database: the one pass then writes every normalized event of the organization to its
 * outbox, where outputs() reads them (test apps run no delivery lanes).
 */
export async function catchAll(t: TestApp, organizationId: number): Promise<string> {
  const db = t.container.database.db;
  const id = newId();
  await db
    .insertInto('destinations')
    .values({
      id,
      organization_id: organizationId,
      name: `out-${id}`,
      type: 'file',
      config: JSON.stringify({ path: 'x' }),
      delivery: JSON.stringify({}),
      disabled_reason: null,
      credential: null,
      credential_key_id: null,
      credential_updated_at: null,
      shadow_destination_id: null,
      created_by: null,
    })
    .execute();
  await db
    .insertInto('routes')
    .values({
      id: newId(),
      organization_id: organizationId,
      name: `all-${id}`,
      position: 1,
      condition: null,
      transforms: JSON.stringify([]),
      destination_ids: JSON.stringify([id]),
      final: true,
    })
    .execute();
  return id;
}

/** The NDJSON an outbox row's events column holds (base64 gzip, or a reference into the app's body log). */
export async function outboxText(t: TestApp, stored: string): Promise<string> {
  return decodeRecords(await loadBody(t.container.bodies, stored));
}

/** The OCSF events the pass wrote to the outbox for one ingest batch, with their envelope ids, in batch order. */
export async function outputs(t: TestApp, batchId: string): Promise<{ id: string; ocsf: Record<string, unknown> }[]> {
  const rows = await t.container.database.db
    .selectFrom('delivery_batches')
    .selectAll()
    .where('source_batch_id', '=', batchId)
    .where('kind', '=', 'primary')
    .execute();
  const out: { id: string; ocsf: Record<string, unknown> }[] = [];
  for (const row of rows) {
    const ndjson = await outboxText(t, row.events);
    const ids = row.event_ids.split(',');
    ndjson
      .split('\n')
      .forEach((line, i) => out.push({ id: ids[i]!, ocsf: JSON.parse(line) as Record<string, unknown> }));
  }
  return out;
}
