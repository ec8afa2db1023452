// Objects in an S3 bucket (AWS or any S3-compatible store) collected as events: a bucket and
// prefix polled on the collection schedule, each new object read once (cursor.ts), gzip
// recognized by its bytes, and the layouts AWS services write recognized by their keys
// (layouts.ts): CloudTrail log files, VPC Flow Logs text files, Security Lake Parquet (OCSF).
// CloudTrail records and flow log records are normalized by the aws_cloudtrail and
// aws_vpc_flow built-in mappings (StreamSpec.mappingOf). docs/inputs-s3.md.
import { DAY_MS, MINUTE_MS, VendorError, pullConfigSchema, urlField, type Connector, type StreamSpec } from '../sdk.js';
import { openSource } from './client.js';
import { decodeCursor } from './cursor.js';
import { LAYOUTS, STREAM_OF, type LayoutChoice } from './layouts.js';
import { collectPage } from './reader.js';

export const AWS_S3_PLATFORM = 'aws_s3';
const DEFAULT_LOOKBACK_MINUTES = 60;

function stream(
  name: string,
  display_name: string,
  description: string,
  mappingOf?: StreamSpec['mappingOf'],
  ocsf?: true,
): StreamSpec {
  return {
    name,
    display_name,
    description,
    cursor: 'opaque',
    // The first pass (and a cursor reset) reads the objects modified in the last day.
    defaultWindowMs: DAY_MS,
    intervalMs: MINUTE_MS,
    retentionDays: 3650,
    pageSize: 1000,
    maxWindowMs: DAY_MS,
    settleMs: 0,
    ...(mappingOf ? { mappingOf } : {}),
    ...(ocsf ? { ocsf } : {}),
  };
}

function layoutOf(config: Readonly<Record<string, unknown>>): LayoutChoice {
  const v = config.layout;
  return typeof v === 'string' && (LAYOUTS as readonly string[]).includes(v) ? (v as LayoutChoice) : 'auto';
}

function lookbackMs(config: Readonly<Record<string, unknown>>): number {
  const v = config.lookback_minutes;
  return (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : DEFAULT_LOOKBACK_MINUTES) * MINUTE_MS;
}

const STREAMS: StreamSpec[] = [
  stream(
    'cloudtrail',
    'CloudTrail log files',
    'CloudTrail records of the log files a trail delivers (AWSLogs/<account>/CloudTrail/<region>/YYYY/MM/DD/*.json.gz), one event per element of Records[].',
    { platform: 'aws_cloudtrail', stream: 'cloudtrail' },
  ),
  stream(
    'flow_logs',
    'VPC Flow Logs files',
    'VPC flow log records of the text files delivered to S3 (AWSLogs/<account>/vpcflowlogs/<region>/YYYY/MM/DD/*.log.gz), each line an object keyed by the header line.',
    { platform: 'aws_vpc_flow', stream: 'flow_logs' },
  ),
  stream(
    'security_lake',
    'Security Lake (Parquet, OCSF)',
    'Rows of Parquet objects (Amazon Security Lake: aws/<SOURCE>/... and ext/...), each already an OCSF event: passed through as itself and validated, unless a mapping is published for aws_s3/security_lake.',
    undefined,
    true,
  ),
  stream(
    'objects',
    'Other objects',
    'NDJSON (one object per line), a JSON document (an array, {"Records": [...]} or one object) or text ({"message": line}); normalized by the mapping published for aws_s3/objects.',
  ),
];

function streamsFor(config: Readonly<Record<string, unknown>>): string[] {
  const layout = layoutOf(config);
  return layout === 'auto' ? STREAMS.map((s) => s.name) : [STREAM_OF[layout]];
}

export const awsS3Connector: Connector = {
  platform: AWS_S3_PLATFORM,
  display_name: 'Amazon S3 objects',
  vendor: 'Amazon Web Services',
  description:
    'Objects written to an S3 bucket (AWS or an S3-compatible store), polled under a prefix: CloudTrail log files, VPC Flow Logs, ' +
    'Security Lake Parquet and NDJSON, JSON or text objects, gzip or not. Needs s3:ListBucket and s3:GetObject.',
  auth: 'aws_sigv4',
  config_schema: pullConfigSchema(
    {
      bucket: {
        type: 'string',
        pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$',
        errorMessage: { pattern: 'must be an S3 bucket name: 3 to 63 lowercase letters, digits, dots and hyphens' },
        description: 'Bucket to read',
      },
      prefix: {
        type: 'string',
        maxLength: 1024,
        default: '',
        description: 'Only keys under this prefix (e.g. "AWSLogs/123456789012/CloudTrail/")',
      },
      region: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        default: 'us-east-1',
        description: "The bucket's region (any value an S3-compatible store accepts)",
      },
      endpoint: urlField('S3-compatible endpoint (MinIO, Ceph, R2...); default: AWS S3 of the region'),
      force_path_style: {
        type: 'boolean',
        default: false,
        description: 'Address the bucket in the path (http://host/bucket/key), as most S3-compatible stores need',
      },
      access_key_id: {
        type: 'string',
        pattern: '^\\S{3,128}$',
        errorMessage: { pattern: 'must be an access key id: 3 to 128 characters without spaces' },
        description: 'Access key id with s3:ListBucket and s3:GetObject on the bucket',
      },
      secret_access_key: {
        type: 'string',
        minLength: 3,
        maxLength: 256,
        writeOnly: true,
        description: 'Secret access key',
      },
      session_token: {
        type: 'string',
        minLength: 1,
        maxLength: 4096,
        writeOnly: true,
        description: 'Session token of temporary credentials',
      },
      layout: {
        type: 'string',
        enum: [...LAYOUTS],
        default: 'auto',
        description:
          'What the objects are: auto (by key: CloudTrail, VPC Flow Logs, Parquet; else by content), or one layout for every object',
      },
      lookback_minutes: {
        type: 'integer',
        minimum: 1,
        maximum: 10_080,
        default: DEFAULT_LOOKBACK_MINUTES,
        description:
          'An object that appears late is still read when its LastModified is at most this much older than the newest object seen',
      },
    },
    ['bucket', 'access_key_id', 'secret_access_key'],
  ),
  streams: STREAMS,
  streamsFor,
  async fetchPage(ctx, req) {
    if (!STREAMS.some((s) => s.name === req.stream))
      throw new VendorError('config', `aws_s3 has no stream ${req.stream}`);
    const layout = layoutOf(ctx.config);
    if (!streamsFor(ctx.config).includes(req.stream)) return { events: [], keys: [], next: null };
    const lookback = lookbackMs(ctx.config);
    const state = decodeCursor(req.cursor, req.from, lookback);
    const source = openSource(ctx);
    try {
      return await collectPage(
        {
          source,
          store: `${String(ctx.config.endpoint ?? 'aws')}\u0000${source.bucket}`,
          layout,
          lookbackMs: lookback,
          now: ctx.now().getTime(),
        },
        state,
        req,
      );
    } finally {
      source.close();
    }
  },
  async test(ctx) {
    const source = openSource(ctx);
    try {
      const { objects, truncated } = await source.list('', 5);
      const seen = objects.length === 0 ? 'no object yet' : `${objects.length}${truncated ? '+' : ''} objects listed`;
      return `ListObjectsV2 answered for ${source.where}: ${seen}`;
    } finally {
      source.close();
    }
  },
};
