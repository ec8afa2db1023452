import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../core/clock.js';
import type { IngestBatch } from '../../pipeline/envelope.js';
import type { CompiledMapping } from '../../pipeline/normalize/types.js';
import { createAggregates } from './aggregates.js';
import type { MappingRegistry } from './registry.js';
import { createNormalizationService, type NormalizationDeps } from './service.js';

const mapping: CompiledMapping = {
  reads: new Set(['ok']),
  map: (raw) => (raw.ok ? { ok: true, event: { class_uid: 3004 } } : { ok: false, kind: 'no_matching_rule', detail: 'no rule' }),
};

function setup() {
  const stored = new Set<string>();
  const calls = { quarantine: 0, counters: 0, metrics: [] as string[], transactions: 0 };
  const registry = {
    refreshIfStale: async () => undefined,
    refresh: async () => undefined,
    resolve: () => ({ known: true, mapping: { definitionId: 'd', versionId: 'v', compiled: mapping } }),
    policy: () => 'strict' as const,
    ensureDefinition: async () => undefined,
  } satisfies MappingRegistry;
  const aggregates = createAggregates({
    store: { upsertDrift: async () => undefined, upsertCompliance: async () => undefined, insertSamples: async () => undefined },
    logger: pino({ level: 'silent' }),
  });
  const deps: NormalizationDeps = {
    store: {
      insertBatch: async (row) => {
        if (stored.has(row.id)) return false;
        stored.add(row.id);
        return true;
      },
      insertQuarantine: async () => {
        calls.quarantine++;
      },
      addCounters: async () => {
        calls.counters++;
      },
      integrationPlatforms: async () => new Map(),
    },
    registry,
    aggregates,
    validate: () => [],
    transaction: async (fn) => {
      calls.transactions++;
      return fn();
    },
    afterCommit: async (fn) => fn(),
    countQuarantined: (org, integration, kind, n) => calls.metrics.push(`${org}/${integration}/${kind}=${n}`),
    clock: manualClock(),
    logger: pino({ level: 'silent' }),
  };
  return { service: createNormalizationService(deps), calls, aggregates };
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

  it('fails a malformed batch loudly, writing nothing', async () => {
    const { service, calls } = setup();
    await expect(service.normalize({ ...batch, id: 'b2', ids: ['e1'] })).rejects.toThrow(/malformed ingest batch b2/);
    expect(calls.transactions).toBe(0);
  });
});
