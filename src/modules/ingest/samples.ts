// Sample events for a built-in source: the raw events of the test cases each built-in mapping
// document carries (src/pipeline/normalize/builtin, docs/builtin-mappings.md), written from
// the vendor's documentation with documentation addresses and example.com names. They ship
// with the product, so a new user can see a source's events normalized, routed and searchable
// before a real sender is set up. Sending them takes the path of a push: one accepted batch
// per stream (its ledger row and normalize job, accept.ts), so they are counted like any event.
import type { Scope } from '../../core/scope.js';
import { errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Clock } from '../../core/clock.js';
import type { AcceptBatch, Admission, IngestBatch } from '../../pipeline/envelope.js';
import { BUILTIN_MAPPINGS, type BuiltinMapping } from '../../pipeline/normalize/builtin/index.js';
import { textEvent } from '../../pipeline/sources/text.js';
import { setAuditTarget } from '../audit/service.js';
import { INGEST_URL, type IngestServiceDeps } from './service.js';

export interface SampleStream {
  stream: string;
  /** The events as they are queued: JSON text, `{"message": <line>}` for a text line. */
  events: string[];
  /** The first case's line, when the cases hold lines (a text stream's events). */
  line?: string;
  /** The first case's event object as JSON text, when the cases hold objects. */
  object?: string;
}

/** The sample streams of every built-in platform, from the documents' cases (those not expected to be quarantined). */
export function sampleCatalog(builtins: readonly BuiltinMapping[] = BUILTIN_MAPPINGS): Map<string, SampleStream[]> {
  const out = new Map<string, SampleStream[]>();
  for (const b of builtins) {
    const sample: SampleStream = { stream: b.stream, events: [] };
    for (const c of b.document.tests ?? []) {
      if (c.quarantine !== undefined) continue;
      if (c.input_text !== undefined) {
        sample.events.push(textEvent(c.input_text));
        sample.line ??= c.input_text;
      } else if (c.input !== undefined) {
        const json = JSON.stringify(c.input);
        sample.events.push(json);
        sample.object ??= json;
      }
    }
    if (sample.events.length === 0) continue;
    out.set(b.platform, [...(out.get(b.platform) ?? []), sample]);
  }
  return out;
}

export interface SampleEventsDeps {
  integrations: IngestServiceDeps['integrations'];
  accept: AcceptBatch;
  clock: Clock;
  admission?: Admission | undefined;
  /** Whether the platform declares the stream text (a push reads each line as one event). */
  isTextStream: (platform: string, stream: string) => boolean;
}

export function createSampleEvents(deps: SampleEventsDeps, catalog = sampleCatalog()) {
  async function target(scope: Scope, integrationId: number) {
    const integration = await deps.integrations.find(scope, integrationId);
    if (!integration) throw errors.notFound('Integration');
    return integration;
  }

  return {
    /** What sample events the integration's platform has, stream by stream. */
    async list(scope: Scope, integrationId: number) {
      const integration = await target(scope, integrationId);
      return {
        integration_id: integration.id,
        platform: integration.platform,
        ingest_url: INGEST_URL,
        streams: (catalog.get(integration.platform) ?? []).map((s) => {
          // A sender of a text stream sends lines; of any other, JSON objects (a line of a
          // stream whose cases hold some, such as Windows event XML, travels as {"message": ...}).
          const text = deps.isTextStream(integration.platform, s.stream) && s.line !== undefined;
          return {
            stream: s.stream,
            text,
            events: s.events.length,
            example: text ? s.line! : (s.object ?? JSON.stringify({ message: s.line })),
          };
        }),
      };
    },

    /** Accepts the platform's sample events (one stream's, or every stream's) as pushes to the integration. */
    async send(scope: Scope, integrationId: number, stream?: string) {
      const integration = await target(scope, integrationId);
      const streams = catalog.get(integration.platform) ?? [];
      if (streams.length === 0) {
        throw errors.validation(
          `Platform "${integration.platform}" has no built-in sample events; those that do: ${[...catalog.keys()].sort().join(', ')}`,
          { errors: [{ location: 'params/integration_id', message: 'the platform has no sample events' }] },
        );
      }
      const chosen = stream === undefined ? streams : streams.filter((s) => s.stream === stream);
      if (chosen.length === 0) {
        throw errors.validation(
          `Stream "${stream}" has no sample events for platform ${integration.platform}; its streams: ${streams.map((s) => s.stream).join(', ')}`,
          { errors: [{ location: 'body/stream', message: 'not a sample stream of this platform' }] },
        );
      }
      if (!integration.is_active) {
        throw errors.conflict('The integration is not active: activate it before sending events to it');
      }
      const refused = await deps.admission?.check(integration.id);
      if (refused) throw refused;
      const receivedAt = deps.clock.now().toISOString();
      const accepted: { stream: string; accepted: number; batch_id: string }[] = [];
      for (const s of chosen) {
        const batch: IngestBatch = {
          id: newId(),
          organization_id: integration.organization_id,
          integration_id: integration.id,
          platform: integration.platform,
          stream: s.stream,
          received_at: receivedAt,
          source: 'push',
          ids: s.events.map(() => newId()),
          events: s.events,
          bytes: s.events.reduce((n, e) => n + Buffer.byteLength(e), 0),
        };
        await deps.accept(batch);
        accepted.push({ stream: s.stream, accepted: s.events.length, batch_id: batch.id });
      }
      setAuditTarget({
        organizationId: integration.organization_id,
        details: { streams: accepted.map((a) => ({ stream: a.stream, accepted: a.accepted })) },
      });
      return {
        integration_id: integration.id,
        platform: integration.platform,
        accepted: accepted.reduce((n, a) => n + a.accepted, 0),
        streams: accepted,
      };
    },
  };
}

export type SampleEvents = ReturnType<typeof createSampleEvents>;
