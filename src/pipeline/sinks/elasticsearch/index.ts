// Destination type `elasticsearch` (Elasticsearch 7/8 and OpenSearch): the `_bulk` API with
// the envelope id as `_id`, so a redelivered event finds its earlier copy instead of doubling.
import { Type } from 'typebox';
import { credentialStrings } from '../../../core/credentials.js';
import { HttpUrlField, TlsConfigFields } from '../http-common.js';
import { basicPair } from '../secrets.js';
import { urlTarget, type SinkType } from '../types.js';
import { apiKeyParts, createBulkSink } from './bulk.js';

export const EsConfigSchema = Type.Object(
  {
    url: HttpUrlField('Base URL of the cluster, for example https://es.example.com:9200'),
    index: Type.String({
      default: 'ocsf-events',
      minLength: 1,
      maxLength: 255,
      description:
        'Target index, data stream or alias (lowercase). A {yyyy.MM.dd} part (also {yyyy.MM}, {yyyy}) is replaced by the UTC date of each event\'s OCSF time, for example "ocsf-{yyyy.MM.dd}"',
    }),
    pipeline: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'Ingest pipeline applied to the documents' }),
    ),
    op_type: Type.Union([Type.Literal('create'), Type.Literal('index')], {
      default: 'create',
      description:
        'create: a document whose _id exists is kept (a redelivery counts as delivered; required for data streams); index: it is overwritten',
    }),
    data_stream: Type.Boolean({
      default: false,
      description:
        'The index is a data stream: documents are sent with create, and the template Weir puts declares the data stream (the index must have no date parts)',
    }),
    manage_template: Type.Boolean({
      default: true,
      description:
        'Put an index template with the OCSF mappings (time and @timestamp as dates, ip fields as ip) before the first delivery; false: the index or data stream and its template exist already',
    }),
    gzip: Type.Boolean({
      default: false,
      description:
        'Compress request bodies with gzip (the cluster must accept Content-Encoding: gzip; both Elasticsearch and OpenSearch do)',
    }),
    ...TlsConfigFields,
  },
  { additionalProperties: false },
);

export const EsCredentialSchema = Type.Object(
  {
    username: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1024, description: 'Basic authentication user (with password)' }),
    ),
    password: Type.Optional(Type.String({ maxLength: 1024, description: 'Basic authentication password' })),
    api_key: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: 'API key instead of a user: the "encoded" value Elasticsearch returns, or "id:api_key"',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Either username and password, or api_key; none for a cluster without security',
  },
);

export const elasticsearchSink: SinkType = {
  type: 'elasticsearch',
  title: 'Elasticsearch / OpenSearch',
  description:
    'Indexes OCSF events with the _bulk API, one document per event with the event id as _id and @timestamp from the OCSF time; puts an index template with the OCSF mappings first unless manage_template is false. Items refused for mapping reasons are dead-lettered; items throttled (429) or failing on the cluster side (5xx) are retried.',
  configSchema: EsConfigSchema,
  credentialSchema: EsCredentialSchema,
  credentialRequired: false,
  secretValues: (c) => [
    ...credentialStrings(c, ['username']),
    ...basicPair(c.username, c.password),
    ...apiKeyParts(c.api_key),
  ],
  targets: (config) => urlTarget(config, 'url'),
  create: createBulkSink,
};
