// What a mapping author reads in a dry run on real samples (test/corpus/okta, Okta System Log
// events with user names, e-mail and IP addresses): captions, codes and ids are never masked;
// personal data is masked for a caller without quarantine.read (the permission to read raw
// events) and shown as it is to one who holds it, the answer saying which (`masked`).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import {
  createOrganization,
  createPrincipal,
  injectAs,
  insertIntegration,
  type Principal,
} from '../../../test/support/identity.js';
import { newId } from '../../core/ids.js';
import { builtinMapping } from '../../pipeline/normalize/builtin/index.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type DryRun = { masked: boolean; results: Json[]; summary: Json };

const corpus = (file: string) => new URL(`../../../test/corpus/okta/system_log/${file}`, import.meta.url);
const RAW = readFileSync(corpus('elastic-okta.ndjson'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Json);
const EXPECTED = JSON.parse(readFileSync(corpus('elastic-okta.expected.json'), 'utf8')) as Json[];
const DOCUMENT = builtinMapping('okta', 'system_log')!.document as unknown as Json;

let t: TestApp;
let integration: number;
let viewer: Principal; // mapping.read, not quarantine.read
let operator: Principal; // mapping.read and quarantine.read

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  const org = await createOrganization(t, 'Okta Org');
  viewer = await createPrincipal(t, { role: 'viewer', organizationId: org });
  operator = await createPrincipal(t, { role: 'operator', organizationId: org });
  integration = await insertIntegration(t, org, 'okta', 'okta');
  // Oldest first, so that the newest-first samples come back in the corpus's reverse order.
  let at = Date.parse('2025-05-01T00:00:00Z');
  for (const raw of RAW) {
    at += 1000;
    await t.container.database.db
      .insertInto('raw_samples')
      .values({
        id: newId(),
        organization_id: org,
        integration_id: integration,
        stream: 'system_log',
        received_at: new Date(at),
        raw: JSON.stringify(raw),
      })
      .execute();
  }
});
afterAll(async () => t?.close());

async function dryRun(who: Principal, body: Json): Promise<DryRun> {
  const res = await injectAs(t, who, 'POST', '/api/mappings/dry-run', body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<DryRun>();
}

const onSamples = () => ({ document: DOCUMENT, sample: { integration_id: integration, stream: 'system_log' } });
/** The result for the corpus event with this Okta uuid. */
const resultFor = (run: DryRun, uuid: string) => run.results.find((r) => r.input.uuid === uuid)!;

describe('POST /api/mappings/dry-run on real Okta samples', () => {
  it('without quarantine.read: captions, codes and ids readable, people and addresses masked', async () => {
    const run = await dryRun(viewer, onSamples());
    expect(run.masked).toBe(true);
    expect(run.results).toHaveLength(RAW.length);
    for (const expected of EXPECTED) {
      const r = resultFor(run, expected.metadata.uid);
      expect(r.ok, JSON.stringify(r.issues)).toBe(true);
      const ocsf = r.ocsf!;
      // Labels: exactly what the mapping produced.
      for (const key of [
        'class_uid',
        'class_name',
        'category_name',
        'activity_id',
        'activity_name',
        'type_uid',
        'type_name',
        'severity',
        'status',
        'status_id',
        'time',
      ])
        expect(ocsf[key], key).toEqual(expected[key]);
      expect(ocsf.metadata).toEqual(expected.metadata);
      if (expected.status_code !== undefined) expect(ocsf.status_code).toBe(expected.status_code);
      if (expected.status_detail !== undefined) expect(ocsf.status_detail).toBe(expected.status_detail);
      expect(ocsf.actor.user.type).toBe(expected.actor.user.type);
      expect(ocsf.observables.map((o: Json) => [o.name, o.type_id, o.type])).toEqual(
        expected.observables.map((o: Json) => [o.name, o.type_id, o.type]),
      );
      // Personal data: masked to its shape, in the output and in the raw input.
      expect(ocsf.actor.user.name).toMatch(/^.\*\*\*/);
      expect(ocsf.src_endpoint.ip).toMatch(/\.x$/);
      const text = JSON.stringify(r);
      for (const personal of [
        expected.actor.user.name,
        expected.actor.user.email_addr,
        expected.actor.user.uid,
        expected.src_endpoint.ip,
      ])
        expect(text).not.toContain(personal);
      // The raw event keeps its vendor codes.
      expect(r.input.eventType).toBe(RAW.find((raw) => raw.uuid === expected.metadata.uid)!.eventType);
    }
  });

  it('with quarantine.read: the input and the output as they are', async () => {
    const run = await dryRun(operator, onSamples());
    expect(run.masked).toBe(false);
    for (const expected of EXPECTED) {
      const r = resultFor(run, expected.metadata.uid);
      expect(r.input).toEqual(RAW.find((raw) => raw.uuid === expected.metadata.uid));
      expect(r.ocsf).toEqual(expected);
    }
  });

  it('on events the caller gives: never masked, whoever calls', async () => {
    const run = await dryRun(viewer, { document: DOCUMENT, events: [RAW[0]] });
    expect(run.masked).toBe(false);
    expect(run.results[0]!.ocsf).toEqual(EXPECTED.find((e) => e.metadata.uid === RAW[0]!.uuid));
  });
});
