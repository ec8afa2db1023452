import { afterAll, describe, expect, it } from 'vitest';
import { createValidator, ocsfCatalog } from '../../ocsf/index.js';
import { decodeRecords } from '../batch-codec.js';
import type { IngestBatch } from '../envelope.js';
import { compileMapping } from '../normalize/compile.js';
import type { MappingDocument } from '../normalize/types.js';
import { compileRoutes } from '../route/compile.js';
import type { RouteSpec } from '../route/types.js';
import { inlinePassRunner } from './inline.js';
import type { PassJob } from './pass.js';
import { createPassPool } from './pool.js';
import { encodeTable } from '../enrich/table.js';
import { NOT_OCSF_DETAIL, ocsfPassthrough } from '../normalize/passthrough.js';
import type { EnrichmentJob } from '../enrich/live.js';

const document = {
  product: { name: 'App', vendor_name: 'Acme' },
  rules: [
    {
      name: 'all',
      when: { path: 'name', exists: true },
      class_uid: 3004,
      activity_id: 1,
      set: [
        { target: 'entity.name', from: 'name' },
        { target: 'message', from: 'msg' },
      ],
    },
  ],
} as unknown as MappingDocument;
const catalog = ocsfCatalog();
const validator = createValidator(catalog);

const route = (id: string, over: Partial<RouteSpec>): RouteSpec => ({
  id,
  organization_id: 1,
  name: id,
  position: 1,
  enabled: true,
  condition: null,
  transforms: [],
  destination_ids: [],
  final: true,
  version: 1,
  ...over,
});
const specs = [
  route('masked', {
    condition: { field: 'entity.name', op: 'prefix', value: 'p' },
    transforms: [{ type: 'drop_fields', fields: ['message'] }],
    destination_ids: ['d2'],
    final: false,
  }),
  route('all', { destination_ids: ['d1'] }),
];

function job(batch: IngestBatch): PassJob {
  return {
    batch,
    mapping: {
      versionId: 'v1',
      compiled: compileMapping(document, catalog),
      document: document as unknown as Record<string, unknown>,
    },
    policy: 'strict',
    routes: { fingerprint: 'f1', specs, compiled: () => compileRoutes(specs) },
    destinations: new Map([
      ['d1', { organization_id: 1, enabled: true, disabled_reason: null, shadow_destination_id: null, type: 'file' }],
      ['d2', { organization_id: 1, enabled: true, disabled_reason: null, shadow_destination_id: null, type: 'file' }],
    ]),
    lineage: true,
  };
}

const batch: IngestBatch = {
  id: 'b1',
  organization_id: 1,
  integration_id: 2,
  platform: 'custom',
  stream: 's',
  received_at: '2026-11-24T00:00:00.000Z',
  source: 'push',
  ids: ['e1', 'e2', 'e3', 'e4'],
  // Pushed texts and a collected object side by side; one event no rule takes.
  events: ['{"name":"p1","msg":"hello"}', '{"name":"x2","msg":"there"}', { name: 'p3' }, '{"other":true}'],
  bytes: 80,
};

const pool = createPassPool(1);
afterAll(() => pool.close());

async function decoded(result: Awaited<ReturnType<typeof pool.run>>) {
  return Promise.all(
    result.write.deliveries.map(async (d) => ({
      destination: d.destination_id,
      ids: d.event_ids,
      events: await decodeRecords(d.events),
    })),
  );
}

describe('the pass on a worker thread', () => {
  it('gives what the pass on the calling thread gives: outbox rows, ledger, lineage, quarantine', async () => {
    const [threaded, inline] = await Promise.all([
      pool.run(job(batch)),
      inlinePassRunner((e) => validator.validate(e))(job(batch)),
    ]);
    expect(await decoded(threaded)).toEqual(await decoded(inline));
    expect(await decoded(threaded)).toEqual([
      { destination: 'd2', ids: 'e1,e3', events: expect.not.stringContaining('hello') },
      { destination: 'd1', ids: 'e1,e2,e3', events: expect.stringContaining('"message":"hello"') },
    ]);
    expect(threaded.write.ledger).toEqual(inline.write.ledger);
    expect(threaded.write.lineageEvents).toEqual(inline.write.lineageEvents);
    expect(threaded.write.routeStats).toEqual(inline.write.routeStats);
    expect(threaded.stage).toEqual(inline.stage);
    expect(threaded.stage.quarantined.map((q) => [q.id, q.error_kind, q.raw])).toEqual([
      ['e4', 'no_matching_rule', { other: true }],
    ]);
    expect(threaded.missing).toBe(false);
  });

  it('says when a route names a destination the snapshot does not know', async () => {
    const unknown = { ...job(batch), destinations: new Map() };
    const result = await pool.run(unknown);
    expect(result.missing).toBe(true);
    expect(result.write.deliveries).toEqual([]);
  });

  it('enriches on the thread from a table whose bytes are shared, not copied, and counts per policy', async () => {
    const bytes = encodeTable({
      key_column: 'name',
      match: 'exact',
      columns: ['name', 'team'],
      rows: [
        { name: 'p1', team: 'red' },
        { name: 'x2', team: 'blue' },
      ],
    });
    const shared = new Uint8Array(new SharedArrayBuffer(bytes.length));
    shared.set(bytes);
    const enrichment: EnrichmentJob = {
      fingerprint: 'e1',
      policies: [
        {
          id: 'pol',
          version: 1,
          definition: {
            name: 'team',
            order: 1,
            condition: null,
            key: 'entity.name',
            lookup: { table_id: 't' },
            output: { enrichment: { name: 'team' } },
            on_miss: 'continue',
          },
        },
      ],
      refs: { pol: { kind: 'table', blob: 'tv1' } },
      blobs: { tv1: shared },
    };
    const enriched = { ...job(batch), enrichment };
    const [threaded, inline] = await Promise.all([
      pool.run(enriched),
      inlinePassRunner((e) => validator.validate(e))(enriched),
    ]);
    expect(await decoded(threaded)).toEqual(await decoded(inline));
    const d1 = (await decoded(threaded)).find((d) => d.destination === 'd1')!;
    expect(d1.events).toContain('"enrichments":[{"name":"team","value":"p1","data":{"name":"p1","team":"red"}}]');
    expect(threaded.stage.enrichment).toEqual([
      expect.objectContaining({ policy_id: 'pol', seen: 3, hits: 2, misses: 1, errors: 0 }),
    ]);
  });

  it('passes the events of an already-OCSF stream through on the thread as on the calling thread', async () => {
    const ocsf = {
      ...job({
        ...batch,
        events: [
          JSON.stringify({
            class_uid: 3004,
            activity_id: 1,
            category_uid: 3,
            type_uid: 300401,
            severity_id: 1,
            time: 1,
            metadata: { version: '1.8.0', product: { name: 'App', vendor_name: 'Acme' } },
            entity: { name: 'p1' },
            message: 'hello',
          }),
          '{"class_uid":"3004"}',
          { name: 'p3' },
          '{"class_uid":987654}',
        ],
      }),
      mapping: { versionId: null, compiled: ocsfPassthrough(catalog), document: {}, passthrough: true as const },
    };
    const [threaded, inline] = await Promise.all([
      pool.run(ocsf),
      inlinePassRunner((e) => validator.validate(e))(ocsf),
    ]);
    expect(await decoded(threaded)).toEqual(await decoded(inline));
    expect(threaded.stage).toEqual(inline.stage);
    expect(threaded.stage.quarantined.map((q) => [q.id, q.error_kind, q.error_detail, q.mapping_version_id])).toEqual([
      ['e2', 'mapping_error', NOT_OCSF_DETAIL, null],
      ['e3', 'mapping_error', NOT_OCSF_DETAIL, null],
      ['e4', 'mapping_error', NOT_OCSF_DETAIL, null],
    ]);
    expect(threaded.stage).toMatchObject({ normalized: 1, mapped: 1, driftSample: [] });
    expect(threaded.write.ledger).toEqual(inline.write.ledger);
    const d1 = (await decoded(threaded)).find((d) => d.destination === 'd1')!;
    expect(d1).toMatchObject({ ids: 'e1', events: expect.stringContaining('"message":"hello"') });
  });
});
