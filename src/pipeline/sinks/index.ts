// Every destination type. Each sink lives in its own folder under pipeline/sinks/ and adds
// one line here.
import { elasticsearchSink } from './elasticsearch/index.js';
import { fileSink } from './file/index.js';
import { httpSink } from './http/index.js';
import { natsSink } from './nats/index.js';
import { otlpSink } from './otlp/index.js';
import { postgresSink } from './postgres/index.js';
import { rabbitmqSink } from './rabbitmq/index.js';
import { s3SinkType } from './s3/index.js';
import { splunkHecSink } from './splunk_hec/index.js';
import { syslogSink } from './syslog/index.js';
import type { SinkType } from './types.js';

export const SINK_TYPES: readonly SinkType[] = [
  httpSink,
  splunkHecSink,
  elasticsearchSink,
  s3SinkType,
  syslogSink,
  fileSink,
  postgresSink,
  rabbitmqSink,
  natsSink,
  otlpSink,
];

export function sinkType(type: string): SinkType | undefined {
  return SINK_TYPES.find((t) => t.type === type);
}
