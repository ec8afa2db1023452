// Splunk HEC's request and answer shapes as the routes declare them (the OpenAPI document).
import { Type } from 'typebox';

export const HecResult = Type.Object(
  {
    text: Type.String({ description: "HEC's text for the code, e.g. Success, Invalid data format" }),
    code: Type.Integer({ description: "HEC's status code (0 success, 17 healthy; see docs/inputs-splunk-hec.md)" }),
    'invalid-event-number': Type.Optional(
      Type.Integer({
        description: 'Codes 6, 12, 13, 15: the 0-based event at fault; the events before it were accepted',
      }),
    ),
    ackId: Type.Optional(
      Type.Integer({ description: 'With a data channel: the id to query at /services/collector/ack' }),
    ),
    detail: Type.Optional(Type.String({ description: "Weir's word on a refusal (always present on a 4xx or 5xx)" })),
  },
  { $id: 'HecResult', description: "Splunk HTTP Event Collector's answer" },
);

export const HecAckResult = Type.Object(
  {
    acks: Type.Record(Type.String(), Type.Boolean(), {
      description: 'Each queried ackId: true once every event of its request is processed (normalized and routed)',
    }),
  },
  { description: 'Indexer acknowledgement' },
);

const meta = (what: string) => Type.Optional(Type.String({ maxLength: 1024, description: what }));

export const HecQuery = Type.Object({
  channel: Type.Optional(
    Type.String({ maxLength: 64, description: 'Data channel (a UUID), when X-Splunk-Request-Channel cannot be sent' }),
  ),
  sourcetype: meta('Source type of events that name none: it names their stream (default stream "hec")'),
  source: meta('Source of events that name none'),
  host: meta('Host of events that name none'),
  index: meta('Index of events that name none (kept in the metadata; Weir has no indexes)'),
});

export const HecAckQuery = Type.Object({
  channel: Type.Optional(Type.String({ maxLength: 64, description: 'Data channel, when the header cannot be sent' })),
});

export const HecBody = Type.Unknown({
  description:
    'Concatenated HEC event envelopes {time?, host?, source?, sourcetype?, index?, fields?, event} (whitespace between them optional); gzip with Content-Encoding: gzip',
});

export const HecRawBody = Type.Unknown({ description: 'Text, one event per line; gzip with Content-Encoding: gzip' });

export const HecAckBody = Type.Unknown({ description: '{"acks": [ackId, ...]}' });
