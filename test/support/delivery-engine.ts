// Helpers for delivery-engine tests (src/modules/delivery): normalized batches routed with the
// pass's routing, or left pending as an earlier version did (with their stream counters, as
// normalization writes them), routes straight in the table, a fake
// destination directory, a fake sink type whose behaviour each test scripts per destination,
// an engine wired with short timings, and an in-memory metric reader.
import { MeterProvider, MetricReader, type DataPoint } from '@opentelemetry/sdk-metrics';
import { Type } from 'typebox';
import { newId } from '../../src/core/ids.js';
import { wireDelivery, type DeliveryWiring } from '../../src/modules/delivery/index.js';
import { encodeRecords } from '../../src/pipeline/batch-codec.js';
import type { DestinationDirectory, DestinationRuntime } from '../../src/pipeline/delivery/ports.js';
import { deliverySettings, type DeliverySettingsInput } from '../../src/pipeline/delivery/settings.js';
import type { NormalizedRecord } from '../../src/pipeline/envelope.js';
import type { Condition, Transform } from '../../src/pipeline/route/types.js';
import type { SinkBatch, SinkResult, SinkType } from '../../src/pipeline/sinks/types.js';
import { createNetPolicy } from '../../src/platform/net/ssrf.js';
import { disabledTelemetry, type Telemetry } from '../../src/platform/telemetry/index.js';
import type { TestApp } from './app.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until check() is truthy (returns it) or fails after timeoutMs. */
export async function until<T>(check: () => Promise<T> | T, timeoutMs = 5_000, what = 'condition'): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(15);
  }
}

export function record(
  orgId: number,
  integrationId: number,
  stream: string,
  ocsf: Record<string, unknown>,
): NormalizedRecord {
  return {
    id: newId(),
    organization_id: orgId,
    integration_id: integrationId,
    stream,
    received_at: new Date().toISOString(),
    mapping_version_id: 'mv-1',
    valid: true,
    ocsf,
  };
}

type Delivery = Pick<ReturnType<typeof wireDelivery>, 'routeRecords'>;

/**
 * A normalized batch of these OCSF events, its events counted in and its mark written (as
 * the one pass does), routed with the pass's routing of `delivery` (engineFor's, or the
 * container's): its outbox rows, ledger, statistics and lineage committed when it returns.
 */
export async function routedBatch(
  t: TestApp,
  delivery: Delivery,
  orgId: number,
  integrationId: number,
  ocsf: Record<string, unknown>[],
  stream = 'events',
): Promise<{ id: string; records: NormalizedRecord[] }> {
  const records = ocsf.map((o) => record(orgId, integrationId, stream, o));
  const id = await normalizedBatch(t, orgId, integrationId, stream, records, 'done');
  await delivery.routeRecords({ id, organization_id: orgId, integration_id: integrationId, stream }, records);
  return { id, records };
}

/** A normalized batch an earlier version left pending (what migration 0025 finds), its events counted in. */
export async function pendingBatch(
  t: TestApp,
  orgId: number,
  integrationId: number,
  ocsf: Record<string, unknown>[],
  stream = 'events',
): Promise<{ id: string; records: NormalizedRecord[] }> {
  const records = ocsf.map((o) => record(orgId, integrationId, stream, o));
  const id = await normalizedBatch(t, orgId, integrationId, stream, records, 'pending');
  return { id, records };
}

async function normalizedBatch(
  t: TestApp,
  orgId: number,
  integrationId: number,
  stream: string,
  records: NormalizedRecord[],
  routeState: 'pending' | 'done',
): Promise<string> {
  const db = t.container.database.db;
  const id = newId();
  const ndjson = records.map((r) => JSON.stringify(r)).join('\n');
  await db
    .insertInto('normalized_batches')
    .values({
      id,
      organization_id: orgId,
      integration_id: integrationId,
      stream,
      source: 'push',
      event_count: records.length,
      bytes: ndjson.length,
      events: routeState === 'pending' ? await encodeRecords(ndjson) : '',
      route_state: routeState,
      created_at: new Date(),
    })
    .execute();
  const day = new Date().toISOString().slice(0, 10);
  await db
    .insertInto('stream_counters')
    .values({
      organization_id: orgId,
      integration_id: integrationId,
      stream,
      day,
      events_in: records.length,
      bytes_in: ndjson.length,
      normalized: records.length,
      flagged: 0,
      quarantined: 0,
      last_event_at: new Date(),
    })
    .onConflict((oc) =>
      oc
        .columns(['integration_id', 'stream', 'day'])
        .doUpdateSet((eb) => ({ events_in: eb('stream_counters.events_in', '+', eb.ref('excluded.events_in')) })),
    )
    .execute();
  return id;
}

let position = 0;
export async function addRoute(
  t: TestApp,
  orgId: number,
  spec: {
    destinations: string[];
    condition?: Condition | null;
    transforms?: Transform[];
    final?: boolean;
    enabled?: boolean;
  },
): Promise<string> {
  const id = newId();
  await t.container.database.db
    .insertInto('routes')
    .values({
      id,
      organization_id: orgId,
      name: `r-${id}`,
      position: ++position,
      enabled: spec.enabled ?? true,
      condition: spec.condition ? JSON.stringify(spec.condition) : null,
      transforms: JSON.stringify(spec.transforms ?? []),
      destination_ids: JSON.stringify(spec.destinations),
      final: spec.final ?? true,
    })
    .execute();
  return id;
}

export type Behaviour = (batch: SinkBatch, signal: AbortSignal, call: number) => Promise<SinkResult>;

/** A destination directory and a sink type ('fake') the test drives. */
export function fakes() {
  const destinations = new Map<string, DestinationRuntime>();
  const behaviours = new Map<string, Behaviour>();
  const received = new Map<string, string[]>(); // destination id → event ids accepted
  const calls = new Map<string, number>();
  const credentials = new Map<string, Record<string, string>>();
  const directory: DestinationDirectory = {
    list: async () => [...destinations.values()],
    credential: async (id) => credentials.get(id) ?? null,
  };
  const sinkType: SinkType = {
    type: 'fake',
    title: 'Fake',
    description: 'test sink',
    configSchema: Type.Object({}),
    credentialSchema: null,
    credentialRequired: false,
    create: (ctx) => ({
      async send(batch, signal) {
        const n = (calls.get(ctx.destinationId) ?? 0) + 1;
        calls.set(ctx.destinationId, n);
        const behave = behaviours.get(ctx.destinationId);
        const result = behave ? await behave(batch, signal, n) : {};
        const refused = new Set([...(result.rejected ?? []), ...(result.retry ?? [])].map((r) => r.index));
        const list = received.get(ctx.destinationId) ?? [];
        batch.ids.forEach((id, i) => refused.has(i) || list.push(id));
        received.set(ctx.destinationId, list);
        return result;
      },
      test: async () => ({ ok: true, detail: 'fake', latency_ms: 0 }),
      close: async () => {},
    }),
  };
  function destination(
    orgId: number | null,
    delivery: DeliverySettingsInput = {},
    extra: Partial<DestinationRuntime> = {},
  ): DestinationRuntime {
    const d: DestinationRuntime = {
      id: newId(),
      organization_id: orgId,
      name: `d-${newId()}`,
      type: 'fake',
      config: {},
      delivery: deliverySettings({
        max_wait_ms: 0,
        backoff_base_ms: 10,
        backoff_max_ms: 100,
        timeout_ms: 1_000,
        breaker_threshold: 100,
        breaker_cooldown_ms: 100,
        ...delivery,
      }),
      enabled: true,
      disabled_reason: null,
      has_credential: false,
      shadow_destination_id: null,
      version: 1,
      updated_at: new Date(),
      ...extra,
    };
    destinations.set(d.id, d);
    return d;
  }
  function update(id: string, patch: Partial<DestinationRuntime>): void {
    const d = destinations.get(id)!;
    destinations.set(id, { ...d, ...patch, version: d.version + 1 });
  }
  return { directory, sinkType, destinations, behaviours, received, calls, credentials, destination, update };
}

/** A test telemetry whose metrics are read with collect(). */
export function testTelemetry() {
  const reader = new (class extends MetricReader {
    protected override async onForceFlush(): Promise<void> {}
    protected override async onShutdown(): Promise<void> {}
  })();
  const provider = new MeterProvider({ readers: [reader] });
  const telemetry: Telemetry = { ...disabledTelemetry(), enabled: true, meter: provider.getMeter('test') };
  async function points(name: string): Promise<{ attributes: Record<string, unknown>; value: number }[]> {
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
    return (metric?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: (p as DataPoint<number>).value }));
  }
  return { telemetry, points, shutdown: () => provider.shutdown() };
}

/** The delivery module wired on the test app's database with the fakes and short timings. */
export function engineFor(
  t: TestApp,
  f: ReturnType<typeof fakes>,
  overrides: Partial<DeliveryWiring> & { lineage?: boolean } = {},
) {
  const { lineage, ...rest } = overrides;
  const delivery = wireDelivery({
    db: t.container.database.db,
    clock: t.container.clock,
    logger: t.container.logger,
    telemetry: disabledTelemetry(),
    queue: t.container.queue,
    dataDeletion: { addStep: () => {} },
    config: {
      ...t.container.config.delivery,
      pollMs: 20,
      leaseMs: 5_000,
      lineageEnabled: lineage ?? false,
    },
    directory: f.directory,
    net: createNetPolicy({ allowCidrs: ['127.0.0.0/8'] }),
    sinkTypes: [f.sinkType],
    directoryRefreshMs: 40,
    stopTimeoutMs: 300,
    bodies: t.container.bodies,
    ...rest,
  });
  return delivery;
}
