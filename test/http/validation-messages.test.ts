// Validation answers say in words what a field allows: every `pattern` of every schema a user
// can meet (request parts in the OpenAPI document, destination type configs, integration
// platform configs) carries an `errorMessage` (platform/validation-issues.ts), and the 422s
// show it rather than the regular expression.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTORS } from '../../src/connectors/index.js';
import { SINK_TYPES } from '../../src/pipeline/sinks/index.js';
import { createTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
let doc: Record<string, unknown>;

beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
});
afterAll(async () => t?.close());

let patterns = 0;

/** JSON pointers of every schema with a pattern but no words for it. */
function unexplained(schema: unknown, at = '#'): string[] {
  if (Array.isArray(schema)) return schema.flatMap((s, i) => unexplained(s, `${at}/${i}`));
  if (!schema || typeof schema !== 'object') return [];
  const s = schema as Record<string, unknown>;
  const out: string[] = [];
  if (typeof s.pattern === 'string') {
    patterns++;
    // The API document publishes the validator's errorMessage as the extension x-weir-error-message.
    const words = s.errorMessage ?? s['x-weir-error-message'];
    const ok =
      typeof words === 'string' ||
      (typeof words === 'object' && words !== null && typeof (words as Record<string, unknown>).pattern === 'string');
    if (!ok) out.push(at);
  }
  for (const [k, v] of Object.entries(s))
    if (!['errorMessage', 'x-weir-error-message', 'example', 'examples'].includes(k))
      out.push(...unexplained(v, `${at}/${k}`));
  return out;
}

describe('validation messages', () => {
  it('every patterned field says in words what it allows', () => {
    expect(unexplained(doc.paths, '#/paths')).toEqual([]);
    expect(patterns).toBeGreaterThan(3); // the walk does reach the patterned fields
    for (const type of SINK_TYPES) expect(unexplained(type.configSchema), type.type).toEqual([]);
    for (const c of CONNECTORS) expect(unexplained(c.config_schema), c.platform).toEqual([]);
  });

  it('a request part that breaks a pattern gets a 422 in words (the route validator)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/bootstrap',
      payload: { username: 'no spaces allowed', password: 'x'.repeat(20), email: 'a@example.com' },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toBe('body/username may hold only letters, digits and ".", "_", "@", "+", "-"');
    expect(res.body).not.toContain('^[');
  });
});
