// In-process ingestion tests (createTestApp): an integration with its ingestion token, and a
// queue made to refuse enqueues, as the push route and every protocol input are tested.
import type { TestApp } from './app.js';
import type { Principal } from './identity.js';

let n = 0;

/** An integration of the organization (platform `custom` unless named) and its ingestion token, created by `admin` through the API. */
export async function ingestTarget(
  app: TestApp,
  admin: Principal,
  organizationId: number,
  options: { name?: string; platform?: string } = {},
): Promise<{ id: number; token: string }> {
  const row = await app.container.database.db
    .insertInto('integrations')
    .values({
      organization_id: organizationId,
      name: options.name ?? `push-${++n}`,
      platform: options.platform ?? 'custom',
      config: '{}',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const res = await app.app.inject({
    method: 'POST',
    url: `/api/ingest/integrations/${row.id}/token`,
    headers: admin.headers,
  });
  if (res.statusCode !== 201) throw new Error(`ingestion token: ${res.statusCode} ${res.body}`);
  return { id: row.id, token: String(res.json<{ token: string }>().token) };
}

/** The queue's enqueue fails ("queue down") after the first `ok` calls, until restore(); failAll() fails the next ones too. */
export function failEnqueue(app: TestApp, ok = 0): { failAll(): void; restore(): void } {
  const queue = app.container.queue;
  const original = queue.enqueue;
  let calls = 0;
  queue.enqueue = async function (this: typeof queue, ...args: Parameters<typeof original>) {
    if (++calls > ok) throw new Error('queue down');
    return original.apply(this, args);
  } as typeof original;
  return {
    failAll() {
      ok = 0;
    },
    restore() {
      queue.enqueue = original;
    },
  };
}
