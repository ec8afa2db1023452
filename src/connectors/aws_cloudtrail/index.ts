// AWS CloudTrail connector: the management events of one account and region from the
// LookupEvents API (the last 90 days of event history, no trail or bucket needed). The event
// collected is the CloudTrail record itself (the JSON string CloudTrailEvent), keyed by EventId.
//
// LookupEvents' StartTime and EndTime are both inclusive and in whole seconds, so the window
// [from, to) is asked with the seconds around it and trimmed here on EventTime: an event on a
// window edge lands in exactly one window.
import {
  HOUR_MS,
  MINUTE_MS,
  VendorError,
  pullConfigSchema,
  urlField,
  type Connector,
  type ConnectorContext,
  type FetchRequest,
  type Page,
} from '../sdk.js';
import { MAX_RESULTS, endpointOf, lookupEvents, regionOf } from './client.js';
import { cloudtrailQuery } from './query.js';

const STREAM = 'cloudtrail';

function encodeToken(nextToken: string): string {
  return Buffer.from(JSON.stringify({ n: nextToken })).toString('base64url');
}

function decodeToken(cursor: string): string {
  try {
    const t = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { n?: unknown };
    if (typeof t.n === 'string' && t.n !== '') return t.n;
  } catch {
    // falls through to the error below
  }
  throw new VendorError('bad_request', 'the stored page token is not one this connector wrote; reset the cursor');
}

async function fetchEvents(ctx: ConnectorContext, req: FetchRequest): Promise<Page> {
  const to = req.to ?? ctx.now();
  const input = {
    StartTime: Math.floor(req.from.getTime() / 1000),
    EndTime: Math.ceil(to.getTime() / 1000),
    MaxResults: Math.min(Math.max(1, Math.floor(req.pageSize)), MAX_RESULTS),
    ...(req.filter?.LookupAttributes
      ? {
          LookupAttributes: JSON.parse(req.filter.LookupAttributes) as {
            AttributeKey: string;
            AttributeValue: string;
          }[],
        }
      : {}),
  };
  // A refused NextToken restarts the window: what was already taken comes again under the same EventIds, which dedup drops.
  const page =
    (req.cursor ? await lookupEvents(ctx, { ...input, NextToken: decodeToken(req.cursor) }) : null) ??
    (await lookupEvents(ctx, input));
  if (!page)
    throw new VendorError(
      'invalid_response',
      'LookupEvents refused a request without NextToken as having an invalid NextToken',
    );
  const inWindow = page.events.filter(
    (e) => e.EventTime * 1000 >= req.from.getTime() && e.EventTime * 1000 < to.getTime(),
  );
  return {
    events: inWindow.map((e) => e.record),
    keys: inWindow.map((e) => e.EventId),
    next: page.nextToken === undefined ? null : encodeToken(page.nextToken),
  };
}

export const awsCloudtrailConnector: Connector = {
  platform: 'aws_cloudtrail',
  display_name: 'AWS CloudTrail',
  vendor: 'Amazon Web Services',
  description:
    'CloudTrail management events of one AWS account and region, from the LookupEvents API (IAM permission cloudtrail:LookupEvents). ' +
    'Global services (IAM, STS, CloudFront) are recorded in us-east-1.',
  auth: 'aws_sigv4',
  config_schema: pullConfigSchema(
    {
      region: {
        type: 'string',
        pattern: '^[a-z]{2}(-[a-z]+)+-\\d{1,2}$',
        errorMessage: { pattern: 'must be an AWS region such as "us-east-1"' },
        default: 'us-east-1',
        description: 'AWS region whose event history is collected (one integration per region)',
      },
      access_key_id: {
        type: 'string',
        pattern: '^[A-Z0-9]{16,128}$',
        errorMessage: { pattern: 'must be an access key id: 16 to 128 uppercase letters and digits' },
        description: 'Access key id of an IAM user or role with cloudtrail:LookupEvents',
      },
      secret_access_key: {
        type: 'string',
        minLength: 16,
        maxLength: 256,
        writeOnly: true,
        description: 'Secret access key',
      },
      session_token: {
        type: 'string',
        minLength: 1,
        maxLength: 4096,
        writeOnly: true,
        description: 'Session token of temporary credentials (ASIA... keys)',
      },
      endpoint: urlField(
        'CloudTrail endpoint override (a VPC endpoint or FIPS endpoint); default https://cloudtrail.{region}.amazonaws.com/',
      ),
    },
    ['access_key_id', 'secret_access_key'],
  ),
  streams: [
    {
      name: STREAM,
      display_name: 'CloudTrail event history',
      description:
        'Management events (API calls and console sign-ins), newest first from LookupEvents; CloudTrail makes an event queryable within about 15 minutes.',
      cursor: 'date',
      defaultWindowMs: HOUR_MS,
      intervalMs: 5 * MINUTE_MS,
      retentionDays: 90,
      pageSize: MAX_RESULTS,
      maxWindowMs: HOUR_MS,
      // CloudTrail delivers an event to the event history within about 15 minutes of the API call.
      settleMs: 15 * MINUTE_MS,
    },
  ],
  query: cloudtrailQuery,
  async fetchPage(ctx, req) {
    if (req.stream !== STREAM) throw new VendorError('config', `aws_cloudtrail has no stream ${req.stream}`);
    return fetchEvents(ctx, req);
  },
  async test(ctx) {
    const page = await lookupEvents(ctx, { MaxResults: 1 });
    const found = page?.events.length
      ? 'the latest event of the last 90 days was returned'
      : 'no event in the last 90 days';
    return `LookupEvents answered in ${regionOf(ctx)} (${endpointOf(ctx).host}): ${found}`;
  },
};
