import type { Kysely } from 'kysely';
import type { Meter, Tracer } from '@opentelemetry/api';
import type { Clock } from '../../core/clock.js';
import type { CachePort } from '../../platform/cache/port.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { QueuePort } from '../../platform/queue/port.js';
import { inTransaction } from '../../platform/db/ambient.js';
import { injectTraceContext } from '../../platform/telemetry/index.js';
import { createAcceptBatch } from './accept.js';
import { esBulkRoutes } from './es-routes.js';
import { firehoseRoutes } from './firehose-routes.js';
import { ingestRoutes } from './routes.js';
import { otlpRoutes } from './otlp-routes.js';
import { sampleEventRoutes } from './sample-routes.js';
import { createSampleEvents } from './samples.js';
import { createIngestService, type IngestLimits, type IngestServiceDeps } from './service.js';
import { createIngestStore } from './store.js';
import { createIngestTokens } from './tokens.js';
import { textStreamsOf } from '../integrations/platforms.js';

export function wireIngest(deps: {
  db: Kysely<DB>;
  cache: CachePort;
  clock: Clock;
  queue: QueuePort;
  integrations: IngestServiceDeps['integrations'];
  hmacKey: Buffer;
  limits: IngestLimits;
  admission?: IngestServiceDeps['admission'];
  jsonMaxDepth: number;
  /** A platform's own text streams (modules/integrations/platforms.ts). */
  platformTextStreams: (platform: string) => readonly string[] | undefined;
  syslogListeners: IngestServiceDeps['syslogListeners'];
  busConsumers?: IngestServiceDeps['busConsumers'];
  telemetry: { enabled: boolean; meter: Meter; tracer?: Tracer };
  onError: (err: unknown, message: string) => void;
}) {
  const store = createIngestStore(deps.db);
  const tokens = createIngestTokens({ store, cache: deps.cache, clock: deps.clock, hmacKey: deps.hmacKey });
  const accept = createAcceptBatch({ store, queue: deps.queue, transaction: (fn) => inTransaction(deps.db, fn) });
  const service = createIngestService({
    store,
    tokens,
    integrations: deps.integrations,
    queue: deps.queue,
    accept,
    clock: deps.clock,
    limits: deps.limits,
    admission: deps.admission,
    jsonMaxDepth: deps.jsonMaxDepth,
    syslogListeners: deps.syslogListeners,
    busConsumers: deps.busConsumers,
    isTextStream: (target, stream) =>
      textStreamsOf({ text_streams: deps.platformTextStreams(target.platform) ?? [] }, target.textStreams).has(stream),
    meter: deps.telemetry.meter,
    traceContext: deps.telemetry.enabled ? () => injectTraceContext({}) : undefined,
    tracer: deps.telemetry.enabled ? deps.telemetry.tracer : undefined,
    onError: deps.onError,
  });
  const samples = createSampleEvents({
    integrations: deps.integrations,
    accept,
    clock: deps.clock,
    admission: deps.admission,
    isTextStream: (platform, stream) => (deps.platformTextStreams(platform) ?? []).includes(stream),
  });
  return {
    service,
    accept,
    routes: (app: Api) => {
      ingestRoutes(app, service);
      otlpRoutes(app, service, { jsonMaxDepth: deps.jsonMaxDepth });
      esBulkRoutes(app, service);
      firehoseRoutes(app, service);
      sampleEventRoutes(app, samples);
    },
  };
}

export type Ingest = Omit<ReturnType<typeof wireIngest>, 'routes'>;
