// The corpus through the way users send it: every sample file pushed to the ingest API of an
// integration of its platform (JSON lines as NDJSON; text lines as text, to a stream the platform
// declares text or the integration lists in text_streams), normalized by the worker's job with
// the built-in mappings, and read back from the outbox: every event is delivered, none waits in
// quarantine, and each has the class and activity its reviewed expected file says.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../support/identity.js';
import { catchAll, outputs, runNormalize } from '../support/normalization.js';
import { expectedFileOf, sampleFiles, sourceOf } from '../../src/cli/corpus.js';
import { NORMALIZE_QUEUE, type IngestBatch } from '../../src/pipeline/envelope.js';
import { VENDOR_PLATFORMS } from '../../src/connectors/platforms.js';

type Json = Record<string, unknown>;
const ROOT = import.meta.dirname;

const files = sampleFiles(ROOT);

let t: TestApp;
let org: number;
let admin: Principal;
const queued = new Map<string, IngestBatch>();
const tokens = new Map<string, string>();

/** An ingestion token of an integration of the platform; text samples list the stream as text when the platform does not. */
async function tokenFor(platform: string, stream: string, text: boolean): Promise<string> {
  const key = `${platform}/${stream}/${text}`;
  const known = tokens.get(key);
  if (known) return known;
  const declared = (VENDOR_PLATFORMS.find((p) => p.name === platform)?.text_streams ?? []) as readonly string[];
  const config = text && !declared.includes(stream) ? { text_streams: [stream] } : {};
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/integrations/',
    headers: admin.headers,
    payload: { name: key, platform, organization_id: org, config },
  });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json<Json>().id as number;
  const token = (
    await t.app.inject({ method: 'POST', url: `/api/ingest/integrations/${id}/token`, headers: admin.headers })
  ).json<Json>().token as string;
  tokens.set(key, token);
  return token;
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  org = await createOrganization(t, 'Corpus Org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  await catchAll(t, org);
  t.container.queue.consume<IngestBatch>(NORMALIZE_QUEUE, async (job) => {
    queued.set(job.id, job.payload);
  });
});
afterAll(async () => t?.close());

describe('the corpus, pushed', () => {
  it.each(files.map((f) => [path.relative(ROOT, f), f] as const))(
    '%s: every event delivered with the class and activity expected',
    async (_name, file) => {
      const [platform, stream] = sourceOf(file).split('/') as [string, string];
      const text = file.endsWith('.txt');
      const body = readFileSync(file, 'utf8');
      const expected = JSON.parse(readFileSync(expectedFileOf(file), 'utf8')) as Json[];
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/ingest/${stream}`,
        headers: {
          authorization: `Bearer ${await tokenFor(platform, stream, text)}`,
          'content-type': text ? 'text/plain' : 'application/x-ndjson',
        },
        payload: body,
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json<Json>().accepted).toBe(expected.length);
      const ids = res.json<Json>().batch_ids as string[];
      let delivered: Json[] = [];
      for (const id of ids) {
        const deadline = Date.now() + 10_000;
        while (!queued.has(id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        const batch = queued.get(id)!;
        await runNormalize(t, batch);
        delivered = delivered.concat((await outputs(t, id)).map((o) => o.ocsf));
      }
      const want = expected.filter((e) => typeof e.quarantine !== 'string');
      const kinds = (es: Json[]) => es.map((e) => `${String(e.class_uid)}/${String(e.activity_id)}`);
      expect(kinds(delivered)).toEqual(kinds(want));
    },
  );

  it('quarantines nothing but the samples whose expected file says so', async () => {
    const deliberate = files.reduce(
      (n, f) =>
        n +
        (JSON.parse(readFileSync(expectedFileOf(f), 'utf8')) as Json[]).filter((e) => typeof e.quarantine === 'string')
          .length,
      0,
    );
    const q = await t.app.inject({ method: 'GET', url: `/api/quarantine?limit=1`, headers: admin.headers });
    expect(q.statusCode, q.body).toBe(200);
    expect(q.json<{ total: number }>().total).toBe(deliberate);
  });
});
