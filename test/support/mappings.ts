// Mapping fixtures for medium tests: a valid Authentication (3002) document and
// definitions made directly in the database (the API has no create-definition operation).
import { newId } from '../../src/core/ids.js';
import type { TestApp } from './app.js';

type Json = Record<string, unknown>;

/**
 * Maps `{type: 'login', ts, user: {name}, client: {ip}, host}` to OCSF Authentication.
 * Valid OCSF needs `host` (dst_endpoint) and `user.name`; `extra` assignments are appended.
 */
export function loginDocument(extra: Json[] = []): Json {
  return {
    product: { name: 'Test app', vendor_name: 'Weir tests' },
    rules: [
      {
        name: 'login',
        when: { path: 'type', eq: 'login' },
        class_uid: 3002,
        activity_id: 1,
        set: [
          { target: 'time', from: 'ts', cast: 'timestamp' },
          { target: 'user.name', from: 'user.name' },
          { target: 'src_endpoint.ip', from: 'client.ip', cast: 'ip' },
          { target: 'dst_endpoint.hostname', from: 'host' },
          { target: 'severity_id', value: 1 },
          ...extra,
        ],
      },
    ],
  };
}

export async function defineMapping(
  t: TestApp,
  organizationId: number | null,
  platform: string,
  stream: string,
): Promise<string> {
  const id = newId();
  await t.container.database.db
    .insertInto('mapping_definitions')
    .values({
      id,
      organization_id: organizationId,
      platform,
      stream,
      name: `${platform} ${stream}`,
      builtin: organizationId === null,
    })
    .execute();
  return id;
}
