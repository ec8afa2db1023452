import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../core/clock.js';
import type { IngestBatch } from '../../pipeline/envelope.js';
import type { CompiledMapping } from '../../pipeline/normalize/types.js';
import { decodeRecords } from '../../pipeline/batch-codec.js';
import { compileRoutes } from '../../pipeline/route/compile.js';
import { inlinePassRunner } from '../../pipeline/pass/inline.js';
import { createAggregates } from './aggregates.js';
import type { MappingRegistry } from './registry.js';
import { DuplicateKeysRace, createNormalizationService, type NormalizationDeps, type PassRouting } from './service.js';

const mapping: CompiledMapping = {
  reads: new Set(['ok']),
  expected: new Set(['ok']),
  map: (raw) =>
    raw.ok ? { ok: true, event: { class_uid: 3004 } } : { ok: false, kind: 'no_matching_rule', detail: 'no rule' },
};

interface Calls {
  quarantine: number;
  counters: number;
  metrics: string[];
  transactions: number;
  duplicates: number;
  eventsIn: number;
  captured: string[];
  ledger: string[];
}

function setup(
  options: { afterRead?: (keys: Map<string, Date>) => void; routing?: (calls: Calls) => PassRouting } = {},
) {
  const clock = manualClock();
  const stored = new Set<string>();
  const calls: Calls = {
    quarantine: 0,
    counters: 0,
    metrics: [],
    transactions: 0,
    duplicates: 0,
    eventsIn: 0,
    captured: [],
    ledger: [],
  };
  const keys = new Map<string, Date>();
  const registry = {
    refreshIfStale: async () => undefined,
    refresh: async () => undefined,
    resolve: () => ({ known: true, mapping: { definitionId: 'd', versionId: 'v', compiled: mapping, document: {} } }),
    policy: () => 'strict' as const,
    ensureDefinition: async () => undefined,
  } satisfies MappingRegistry;
  const aggregates = createAggregates({
    store: {
      upsertDrift: async () => undefined,
      upsertCompliance: async () => undefined,
      insertSamples: async () => undefined,
    },
    logger: pino({ level: 'silent' }),
  });
  const deps: NormalizationDeps = {
    store: {
      recentSamples: async () => [],
      insertBatch: async (row) => {
        if (stored.has(row.id)) return false;
        stored.add(row.id);
        return true;
      },
      settleAccepted: async () => undefined,
      insertQuarantine: async () => {
        calls.quarantine++;
      },
      addCounters: async (d) => {
        calls.counters++;
        calls.duplicates += d.duplicates ?? 0;
        calls.eventsIn += d.events_in;
      },
      integrationPlatforms: async () => new Map(),
      seenKeys: async (_i, _s, ks, since) => {
        const seen = ks.filter((k) => (keys.get(k)?.getTime() ?? -Infinity) >= since.getTime());
        options.afterRead?.(keys);
        return seen;
      },
      rememberKeys: async (_i, _s, ks, now, since) => {
        let n = 0;
        for (const k of ks) {
          const at = keys.get(k);
          if (at && at.getTime() >= since.getTime()) continue;
          keys.set(k, now);
          n++;
        }
        return n;
      },
    },
    registry,
    aggregates,
    routing: options.routing?.(calls) ?? {
      lineage: false,
      routes: async () => ({ fingerprint: 'none', specs: [], compiled: () => compileRoutes([]) }),
      destinations: async () => new Map(),
      write: async (w) => {
        calls.ledger.push(...w.ledger.map((e) => `${e.outcome}${e.reason ? `:${e.reason}` : ''}=${e.count}`));
      },
    },
    runPass: inlinePassRunner(() => []),
    transaction: async (fn) => {
      calls.transactions++;
      return fn();
    },
    afterCommit: async (fn) => fn(),
    countQuarantined: (org, integration, kind, n) => calls.metrics.push(`${org}/${integration}/${kind}=${n}`),
    clock,
    logger: pino({ level: 'silent' }),
    dedupWindowMs: async () => 3_600_000,
    capture: { record: async (b) => void calls.captured.push(...b.ids) },
  };
  return { service: createNormalizationService(deps), calls, aggregates, keys, clock, stored };
}

const batch: IngestBatch = {
  id: 'b1',
  organization_id: 1,
  integration_id: 2,
  platform: 'custom',
  stream: 's',
  received_at: '2026-01-01T00:00:00.000Z',
  source: 'push',
  ids: ['e1', 'e2', 'e3'],
  events: [{ ok: true }, { ok: false }, { ok: false }],
  bytes: 30,
};

describe('normalization service', () => {
  it('routes the batch in the transaction that stores it: pushed texts in, outbox rows, ledger and counters out together', async () => {
    const route = {
      id: 'r1',
      organization_id: 1,
      name: 'all',
      position: 1,
      enabled: true,
      condition: null,
      transforms: [],
      destination_ids: ['d1'],
      final: true,
      version: 1,
    };
    const writes: { events: string[]; transactions: number }[] = [];
    const { service, calls } = setup({
      routing: (calls) => ({
        lineage: false,
        routes: async () => ({ fingerprint: 'f', specs: [route], compiled: () => compileRoutes([route]) }),
        destinations: async () =>
          new Map([
            [
              'd1',
              { organization_id: 1, enabled: true, disabled_reason: null, shadow_destination_id: null, type: 'file' },
            ],
          ]),
        write: async (w) => {
          writes.push({ events: w.deliveries.map((d) => d.events), transactions: calls.transactions });
          calls.ledger.push(...w.ledger.map((e) => `${e.outcome}=${e.count}`));
        },
      }),
    });
    const pushed: IngestBatch = { ...batch, id: 't1', events: ['{"ok":true}', '{"ok":true}', '{"ok":false}'] };
    expect(await service.normalize(pushed)).toEqual({ duplicate: false, normalized: 2, flagged: 0, quarantined: 1 });
    expect(writes).toHaveLength(1);
    expect(writes[0]!.transactions).toBe(1);
    expect(await decodeRecords(writes[0]!.events[0]!)).toBe('{"class_uid":3004}\n{"class_uid":3004}');
    expect(calls.ledger).toEqual(['copies=2', 'routed=2']);
    expect(calls).toMatchObject({ counters: 1, quarantine: 1 });
    // A redelivered job writes nothing again.
    expect(await service.normalize(pushed)).toMatchObject({ duplicate: true });
    expect(writes).toHaveLength(1);
  });

  it('counts quarantined events per kind once, and nothing for a redelivered batch', async () => {
    const { service, calls, aggregates } = setup();
    expect(await service.normalize(batch)).toEqual({ duplicate: false, normalized: 1, flagged: 0, quarantined: 2 });
    expect(calls.metrics).toEqual(['1/2/no_matching_rule=2']);
    expect(aggregates.pending()).toMatchObject({ compliance: 1, samples: 3 });
    await aggregates.flush();

    expect(await service.normalize(batch)).toEqual({ duplicate: true, normalized: 0, flagged: 0, quarantined: 0 });
    expect(calls).toMatchObject({ quarantine: 1, counters: 1, metrics: ['1/2/no_matching_rule=2'], transactions: 2 });
    expect(aggregates.pending()).toEqual({ drift: 0, compliance: 0, samples: 0 });
  });

  it('drops collected events whose vendor key was accepted within the deduplication period, and counts them', async () => {
    const { service, calls, keys, clock } = setup();
    const pulled: IngestBatch = { ...batch, id: 'p1', source: 'pull', keys: ['k1', 'k2', 'k3'] };
    expect(await service.normalize(pulled)).toMatchObject({ duplicate: false, normalized: 1, quarantined: 2 });
    expect([...keys.keys()]).toEqual(['k1', 'k2', 'k3']);
    // The same events fetched again (a page re-read after a crash), plus one new and one repeated within the batch.
    const again: IngestBatch = {
      ...batch,
      id: 'p2',
      source: 'pull',
      ids: ['e4', 'e5', 'e6', 'e7'],
      events: [{ ok: true }, { ok: true }, { ok: true }, { ok: true }],
      keys: ['k1', 'k4', 'k2', 'k4'],
    };
    expect(await service.normalize(again)).toMatchObject({ duplicate: false, normalized: 1, quarantined: 0 });
    expect(calls).toMatchObject({ duplicates: 3, eventsIn: 4 });
    expect(calls.captured).toEqual(['e1', 'e2', 'e3', 'e5']);
    // After the period the key counts as new again.
    clock.advance(3_600_001);
    expect(await service.normalize({ ...again, id: 'p3', keys: ['k1', 'k1', 'k1', 'k1'] })).toMatchObject({
      normalized: 1,
    });
    expect(calls).toMatchObject({ duplicates: 6, eventsIn: 5 });
  });

  it('fails a batch whose keys a concurrent batch took meanwhile, so that its retry drops them', async () => {
    let raced = false;
    const { service, calls, keys, stored } = setup({
      afterRead: (k) => {
        // Another worker records k2 between this batch's read and its write (once).
        if (!raced) k.set('k2', new Date('2026-01-01T00:00:00Z'));
        raced = true;
      },
    });
    const pulled: IngestBatch = { ...batch, id: 'p1', source: 'pull', keys: ['k1', 'k2', 'k3'] };
    await expect(service.normalize(pulled)).rejects.toBeInstanceOf(DuplicateKeysRace);
    // The retry (the queue redelivers the job) drops k2; the real store's transaction rolled back k1 and k3.
    keys.delete('k1');
    keys.delete('k3');
    stored.delete('p1');
    expect(await service.normalize(pulled)).toMatchObject({ duplicate: false });
    expect(calls).toMatchObject({ duplicates: 1, eventsIn: 2 });
  });

  it('fails a malformed batch loudly, writing nothing', async () => {
    const { service, calls } = setup();
    await expect(service.normalize({ ...batch, id: 'b2', ids: ['e1'] })).rejects.toThrow(/malformed ingest batch b2/);
    expect(calls.transactions).toBe(0);
  });
});
