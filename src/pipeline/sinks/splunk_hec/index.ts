// Destination type `splunk_hec`: Splunk's HTTP Event Collector (/services/collector/event).
// Each OCSF event becomes one HEC event object; a batch is one request of concatenated objects.
// With use_ack, delivered means indexed: acknowledged at /services/collector/ack (ack.ts).
import { Type } from 'typebox';
import { HttpUrlField, TlsConfigFields } from '../http-common.js';
import { urlTarget, type SinkType } from '../types.js';
import { createHecSink } from './hec.js';

export const HecConfigSchema = Type.Object(
  {
    url: HttpUrlField(
      'Base URL of the collector, for example https://splunk.example.com:8088 (the /services/collector/event path is added)',
    ),
    index: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: "Splunk index; the token's default index when empty" }),
    ),
    sourcetype: Type.String({
      default: 'ocsf',
      minLength: 1,
      maxLength: 256,
      description:
        'Source type of the events. {class_uid} is replaced per event by its OCSF class, for example "ocsf:{class_uid}"',
    }),
    source: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'Source field of the events (default: none, Splunk uses the token name)',
      }),
    ),
    host: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'Host field of the events (default: none, Splunk uses the sender address)',
      }),
    ),
    gzip: Type.Boolean({ default: false, description: 'Compress request bodies with gzip' }),
    use_ack: Type.Boolean({
      default: false,
      description:
        'Indexer acknowledgement: a batch is delivered only once HEC acknowledges it (the token must have it turned on); without it, once HEC accepts it',
    }),
    ack_timeout_seconds: Type.Integer({
      default: 20,
      minimum: 1,
      maximum: 600,
      description:
        'With use_ack: how long to wait for the acknowledgement before the batch goes again (HEC may then index it twice); keep it below the delivery timeout',
    }),
    ...TlsConfigFields,
  },
  { additionalProperties: false },
);

export const HecCredentialSchema = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'HEC token (sent as Authorization: Splunk <token>)',
    }),
  },
  { additionalProperties: false },
);

export const splunkHecSink: SinkType = {
  type: 'splunk_hec',
  title: 'Splunk HTTP Event Collector',
  description:
    'Sends OCSF events to Splunk HEC as JSON events with the OCSF time, an index, a source type and the indexed field weir_event_id (deduplicate redeliveries on it).',
  configSchema: HecConfigSchema,
  credentialSchema: HecCredentialSchema,
  credentialRequired: true,
  targets: (config) => urlTarget(config, 'url'),
  create: createHecSink,
};
