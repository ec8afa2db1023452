// The sample events of a built-in source (samples.ts): what there is, and sending them.
import { Type } from 'typebox';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { STREAM_NAME_PATTERN, STREAM_NAME_RULE } from '../../pipeline/sources/push.js';
import { IntegrationParams } from './schema.js';
import type { SampleEvents } from './samples.js';

const SampleList = Type.Object({
  integration_id: Type.Integer(),
  platform: Type.String(),
  ingest_url: Type.String({ description: 'Where a sender pushes, relative to this server: replace {stream}' }),
  streams: Type.Array(
    Type.Object({
      stream: Type.String({ description: "A stream of the platform's built-in mapping" }),
      text: Type.Boolean({ description: 'A text stream: send one event per line (text/plain), not JSON' }),
      events: Type.Integer({ description: 'Sample events of the stream' }),
      example: Type.String({
        description: 'One event as a sender sends it: a JSON object, or a line of a text stream',
      }),
    }),
    {
      description: "Empty for a platform without a built-in mapping (custom, syslog): any stream name of the sender's",
    },
  ),
});

const SendBody = Type.Object({
  stream: Type.Optional(
    Type.String({
      pattern: STREAM_NAME_PATTERN,
      errorMessage: STREAM_NAME_RULE,
      description: "One stream's samples; every stream's when left out",
    }),
  ),
});

const SendResult = Type.Object({
  integration_id: Type.Integer(),
  platform: Type.String(),
  accepted: Type.Integer({ description: 'Events accepted in all' }),
  streams: Type.Array(
    Type.Object({
      stream: Type.String(),
      accepted: Type.Integer(),
      batch_id: Type.String({
        description: "The accepted batch: the ledger counts its events as in and pending until they're normalized",
      }),
    }),
  ),
});

export function sampleEventRoutes(app: Api, samples: SampleEvents): void {
  route(app, {
    method: 'GET',
    url: '/api/integrations/:integration_id/sample-events',
    operationId: 'integrations.sample_events',
    summary: "The sample events of the integration's platform, stream by stream, with one example each",
    description:
      "The samples are the raw events of the test cases of the platform's built-in mappings (docs/builtin-mappings.md).",
    addition: true,
    access: { requires: 'integration.read' },
    schema: { params: IntegrationParams, response: { 200: SampleList } },
    handler: async (req) => samples.list(scopeOf(req.actor!), req.params.integration_id),
  });

  route(app, {
    method: 'POST',
    url: '/api/integrations/:integration_id/sample-events',
    operationId: 'integrations.send_sample_events',
    summary: "Push the platform's sample events to the integration, as a sender would",
    description:
      "The raw events of the test cases of the platform's built-in mappings are accepted like a push (counted by the ledger, " +
      'normalized, routed, stored): one stream, or every stream of the platform when stream is left out. 422 for a platform ' +
      'without built-in samples (custom, syslog) or a stream that has none; 409 when the integration is not active.',
    addition: true,
    access: { requires: 'integration.write' },
    optionalBody: true,
    schema: { params: IntegrationParams, body: SendBody, response: { 200: SendResult } },
    handler: async (req) => samples.send(scopeOf(req.actor!), req.params.integration_id, req.body.stream),
  });
}
