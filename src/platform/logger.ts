import pino, { type DestinationStream, type Logger } from 'pino';
import { currentCorrelationId } from './context.js';

export type { Logger } from 'pino';

// Secrets never reach a log line: credentials in headers, bodies and config are censored
// by path wherever they appear.
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-ingest-token"]',
  'req.headers["x-amz-firehose-access-key"]',
  'req.headers["x-internal-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.secret',
  '*.api_key',
  '*.client_secret',
  '*.credential',
  '*.license_token',
];

export interface LoggerOptions {
  level: string;
  role: string;
  /** Extra fields per line (trace_id/span_id from telemetry). */
  mixin?: () => Record<string, unknown>;
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  const extra = options.mixin;
  return pino(
    {
      level: options.level,
      base: { role: options.role, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      mixin() {
        const correlationId = currentCorrelationId();
        const fields = extra ? extra() : {};
        return correlationId ? { correlation_id: correlationId, ...fields } : fields;
      },
    },
    options.destination,
  );
}
