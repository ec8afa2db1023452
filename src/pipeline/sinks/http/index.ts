// Destination type `http`: a generic webhook. The batch goes out as one request (NDJSON or a
// JSON array), optionally gzipped and HMAC-signed, with a batch id receivers can deduplicate
// on. How a receiver verifies the signature: docs in the `hmac_secret` description below.
import { Type } from 'typebox';
import { credentialStrings } from '../../../core/credentials.js';
import { HttpUrlField, TlsConfigFields } from '../http-common.js';
import { basicPair } from '../secrets.js';
import { urlTarget, type SinkType } from '../types.js';
import { createWebhookSink } from './webhook.js';

const HEADER_NAME = "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$";

export const HttpConfigSchema = Type.Object(
  {
    url: HttpUrlField('Where batches are sent: an http:// or https:// URL (path and query kept)'),
    method: Type.Union([Type.Literal('POST'), Type.Literal('PUT')], {
      default: 'POST',
      description: 'HTTP method of each delivery',
    }),
    format: Type.Union([Type.Literal('ndjson'), Type.Literal('json')], {
      default: 'ndjson',
      description:
        'Body of a request: ndjson = one OCSF event per line (application/x-ndjson); json = one JSON array of events (application/json)',
    }),
    gzip: Type.Boolean({ default: false, description: 'Compress bodies with gzip (Content-Encoding: gzip)' }),
    headers: Type.Optional(
      Type.Record(
        Type.String({
          pattern: HEADER_NAME,
          errorMessage: { pattern: "must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)" },
        }),
        Type.String({ maxLength: 4096 }),
        {
          additionalProperties: false,
          description:
            'Extra plain headers sent with every request (not secret: they are shown; put secret ones in the credential)',
        },
      ),
    ),
    ...TlsConfigFields,
  },
  { additionalProperties: false },
);

export const HttpCredentialSchema = Type.Object(
  {
    bearer_token: Type.Optional(
      Type.String({ minLength: 1, maxLength: 8192, description: 'Sent as Authorization: Bearer <token>' }),
    ),
    basic_username: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: 'HTTP basic authentication user name (with basic_password)',
      }),
    ),
    basic_password: Type.Optional(
      Type.String({ maxLength: 1024, description: 'HTTP basic authentication password (with basic_username)' }),
    ),
    hmac_secret: Type.Optional(
      Type.String({
        minLength: 16,
        maxLength: 1024,
        description:
          'Signs every request. Headers: X-Weir-Timestamp (unix seconds) and X-Weir-Signature: sha256=<hex HMAC-SHA256(secret, timestamp + "." + body bytes as sent, gzipped when gzip is on)>. ' +
          'A receiver recomputes the HMAC over the raw body, compares in constant time, and refuses timestamps older than a few minutes (replay).',
      }),
    ),
    secret_headers: Type.Optional(
      Type.Record(
        Type.String({
          pattern: HEADER_NAME,
          errorMessage: { pattern: "must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)" },
        }),
        Type.String({ minLength: 1, maxLength: 8192 }),
        {
          additionalProperties: false,
          maxProperties: 16,
          description:
            'Headers whose values are secret, as an object of header name to value (for example {"X-Api-Key": "..."}), sent with every request. Write-only like every credential field.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const httpSink: SinkType = {
  type: 'http',
  title: 'Webhook (HTTP)',
  description:
    'Sends each batch as one HTTP request (NDJSON or JSON array). 2xx means delivered. X-Weir-Batch-Id is the same for a resend of the same batch, so receivers can deduplicate.',
  configSchema: HttpConfigSchema,
  credentialSchema: HttpCredentialSchema,
  credentialRequired: false,
  secretValues: (c) => [...credentialStrings(c, ['basic_username']), ...basicPair(c.basic_username, c.basic_password)],
  targets: (config) => urlTarget(config, 'url'),
  create: createWebhookSink,
};
