// Destination type `otlp`: OCSF events as OpenTelemetry log records over OTLP/HTTP (protobuf,
// gzip) to a collector or any OTLP logs receiver (docs/destinations-otlp.md).
import { Type } from 'typebox';
import { HttpUrlField, TlsConfigFields } from '../http-common.js';
import { urlTarget, type SinkType } from '../types.js';
import { createOtlpSink } from './sink.js';

const HEADER_NAME = "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$";
const HeaderName = Type.String({
  pattern: HEADER_NAME,
  errorMessage: { pattern: "must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)" },
});

export const OtlpConfigSchema = Type.Object(
  {
    url: HttpUrlField(
      'The logs endpoint, used as is (like OTEL_EXPORTER_OTLP_LOGS_ENDPOINT): for a collector, http://collector:4318/v1/logs',
    ),
    body: Type.Union([Type.Literal('kvlist'), Type.Literal('json')], {
      default: 'kvlist',
      description:
        'The log record body: kvlist = the OCSF event as a structured AnyValue (maps, arrays, numbers kept); json = the OCSF event as one JSON string',
    }),
    gzip: Type.Boolean({ default: true, description: 'Compress requests with gzip (Content-Encoding: gzip)' }),
    service_name: Type.String({
      default: 'weir',
      minLength: 1,
      maxLength: 256,
      description: 'The resource attribute service.name of the records',
    }),
    resource_attributes: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.String({ maxLength: 4096 }), {
        maxProperties: 32,
        description: 'More resource attributes (string values), for example {"deployment.environment": "prod"}',
      }),
    ),
    headers: Type.Optional(
      Type.Record(HeaderName, Type.String({ maxLength: 4096 }), {
        additionalProperties: false,
        description: 'Extra plain headers (not secret: they are shown; put secret ones in the credential)',
      }),
    ),
    ...TlsConfigFields,
  },
  { additionalProperties: false },
);

export const OtlpCredentialSchema = Type.Object(
  {
    bearer_token: Type.Optional(
      Type.String({ minLength: 1, maxLength: 8192, description: 'Sent as Authorization: Bearer <token>' }),
    ),
    secret_headers: Type.Optional(
      Type.Record(HeaderName, Type.String({ minLength: 1, maxLength: 8192 }), {
        additionalProperties: false,
        maxProperties: 16,
        description:
          'Headers whose values are secret (for example {"api-key": "..."} or {"Authorization": "Basic ..."}), sent with every request. Write-only like every credential field.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const otlpSink: SinkType = {
  type: 'otlp',
  title: 'OpenTelemetry (OTLP/HTTP logs)',
  description:
    'Sends OCSF events as OTLP log records (protobuf over HTTP, gzip) to an OpenTelemetry Collector or any OTLP logs receiver: body = the OCSF event, severity from severity_id, time from time, ocsf.* attributes. Delivered on a 2xx without partial_success rejections.',
  configSchema: OtlpConfigSchema,
  credentialSchema: OtlpCredentialSchema,
  credentialRequired: false,
  targets: (config) => urlTarget(config, 'url'),
  create: createOtlpSink,
};
