// Destination type `s3`: objects in Amazon S3 or an S3-compatible store (MinIO, Ceph, R2...),
// as gzipped NDJSON under hive-style time partitions, or as Parquet in the layout of Amazon
// Security Lake custom sources. User guide: docs/destinations-s3.md.
import { Type } from 'typebox';
import { credentialStrings } from '../../../core/credentials.js';
import { urlTarget, type SinkType } from '../types.js';
import { createS3Sink } from './sink.js';

const SecurityLakeSchema = Type.Object(
  {
    source_name: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9_.:{}-]+$',
      errorMessage: {
        pattern: 'may hold only letters, digits, "_", ".", ":", "-" and the placeholders {class_name} and {class_uid}',
      },
      description:
        'Name of the custom source registered in Security Lake: objects go under ext/<source_name>/. Security Lake wants one OCSF class per custom source: ' +
        'put {class_name} (e.g. authentication) or {class_uid} (e.g. 3002) in the name to send each class to its own source, e.g. "weir_{class_name}".',
    }),
    source_version: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 32,
        pattern: '^[A-Za-z0-9_.:-]+$',
        errorMessage: { pattern: 'may hold only letters, digits, "_", ".", ":" and "-"' },
        description:
          'Version of the custom source, when it was registered with one (adds /<source_version>/ after the source name).',
      }),
    ),
    account_id: Type.String({
      minLength: 2,
      maxLength: 128,
      pattern: '^[A-Za-z0-9_+=,.@:-]+$',
      errorMessage: { pattern: 'may hold only letters, digits and "_", "+", "=", ",", ".", "@", ":", "-"' },
      description:
        'Value of the accountId= partition: the AWS account id (or the external id) given as the source provider when the custom source was created.',
    }),
  },
  {
    additionalProperties: false,
    description: 'Amazon Security Lake custom source (required with the parquet_security_lake format).',
  },
);

export const S3ConfigSchema = Type.Object(
  {
    bucket: Type.String({
      pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$',
      errorMessage: {
        pattern:
          'must be an S3 bucket name: 3 to 63 lowercase letters, digits, "." and "-", starting and ending with a letter or a digit',
      },
      description: 'Bucket name (for Security Lake: aws-security-data-lake-<region>-<id>).',
    }),
    region: Type.String({
      default: 'us-east-1',
      pattern: '^[a-z0-9-]{2,32}$',
      errorMessage: { pattern: 'must be a region name such as "us-east-1": 2 to 32 lowercase letters, digits and "-"' },
      description: 'Region of the bucket (used to sign requests and, for Security Lake, in the region= partition).',
    }),
    endpoint: Type.Optional(
      Type.String({
        pattern: '^https?://[^\\s/?#]+/?$',
        errorMessage: { pattern: 'must be http(s)://host[:port], without a path or query' },
        description:
          'Endpoint of an S3-compatible store (MinIO, Ceph, Cloudflare R2...), e.g. https://minio.example.net:9000. Leave empty for Amazon S3.',
      }),
    ),
    force_path_style: Type.Optional(
      Type.Boolean({
        description:
          'Address the bucket in the path (https://host/bucket/key) instead of the host name (https://bucket.host/key). Default: true when an endpoint is set, false for Amazon S3.',
      }),
    ),
    tls_ca: Type.Optional(
      Type.String({
        maxLength: 65_536,
        description:
          'PEM certificate(s) of the authority that signed the endpoint certificate, for a store whose certificate no public authority signed.',
      }),
    ),
    prefix: Type.String({
      default: 'weir/',
      maxLength: 512,
      description:
        'Folder of the ndjson_gz objects (a trailing / is added). Not used by parquet_security_lake, whose objects go under ext/ as Security Lake requires.',
    }),
    format: Type.Union([Type.Literal('ndjson_gz'), Type.Literal('parquet_security_lake')], {
      default: 'ndjson_gz',
      description:
        'ndjson_gz: one gzipped NDJSON object per batch under <prefix>year=/month=/day=/hour=/. parquet_security_lake: Parquet (GZIP) objects in the Amazon Security Lake custom source layout, one per OCSF class and event day.',
    }),
    security_lake: Type.Optional(SecurityLakeSchema),
    storage_class: Type.Optional(
      Type.Union(
        [
          'STANDARD',
          'STANDARD_IA',
          'ONEZONE_IA',
          'INTELLIGENT_TIERING',
          'GLACIER_IR',
          'GLACIER',
          'DEEP_ARCHIVE',
          'REDUCED_REDUNDANCY',
        ].map((c) => Type.Literal(c)),
        { description: 'Storage class of the objects (default: the bucket default, STANDARD).' },
      ),
    ),
    sse: Type.Optional(
      Type.Union([Type.Literal('AES256'), Type.Literal('aws:kms')], {
        description:
          'Server-side encryption: AES256 (S3-managed keys) or aws:kms (KMS key). Default: the bucket default.',
      }),
    ),
    kms_key_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'KMS key id or ARN, with sse aws:kms (default: the AWS-managed aws/s3 key).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const S3CredentialSchema = Type.Object(
  {
    access_key_id: Type.String({
      minLength: 3,
      maxLength: 128,
      description:
        'Access key id (for Security Lake: of a principal that may assume or is the custom source provider role).',
    }),
    secret_access_key: Type.String({ minLength: 8, maxLength: 256, description: 'Secret access key.' }),
    session_token: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description:
          'Session token, for temporary credentials only (they expire: prefer long-lived keys of a dedicated user).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const s3SinkType: SinkType = {
  type: 's3',
  title: 'Amazon S3 / S3-compatible storage',
  description:
    'Writes batches as objects to Amazon S3 or an S3-compatible store: gzipped NDJSON in hive-style time partitions, or Parquet in the Amazon Security Lake custom source layout. ' +
    'Object keys derive from the events, so a batch sent again overwrites its own objects.',
  configSchema: S3ConfigSchema,
  credentialSchema: S3CredentialSchema,
  credentialRequired: true,
  // The access key id names the key and shows in the store's own error messages; it is not secret.
  secretValues: (c) => credentialStrings(c, ['access_key_id']),
  targets: (config) => urlTarget(config, 'endpoint'),
  create: createS3Sink,
};
