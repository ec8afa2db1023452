// Search and the services around it: the event store, e-mail and case management.
import path from 'node:path';
import type { CaseManagementConfig } from '../modules/case/index.js';
import type { EmailConfig } from '../modules/email/index.js';
import type { SearchConfig } from '../modules/search/index.js';
import { byteSize, ConfigError, int, memorySize, secret, str, url, type Env } from './env.js';

function eventStoreKind(env: Env): 'duckdb' | 'postgres' | undefined {
  const v = env.WEIR_EVENT_STORE?.trim();
  if (v === undefined || v === '') return undefined;
  if (v === 'duckdb' || v === 'postgres') return v;
  throw new ConfigError(`WEIR_EVENT_STORE must be duckdb or postgres, not ${JSON.stringify(v)}`);
}

function eventStorePath(env: Env): string {
  const v = env.WEIR_EVENT_STORE_PATH?.trim();
  if (v === ':memory:') return v;
  return path.resolve(v || path.join(str(env, 'WEIR_DATA_DIR', './data'), 'events.duckdb'));
}

export function search(env: Env): SearchConfig {
  const resultHours = int(env, 'WEIR_SEARCH_RESULT_HOURS', 168, 1, 24 * 3650);
  const csvHours = int(env, 'WEIR_SEARCH_CSV_HOURS', 24, 1, 24 * 3650);
  if (csvHours > resultHours)
    throw new ConfigError(
      `WEIR_SEARCH_CSV_HOURS (${csvHours}) must not exceed WEIR_SEARCH_RESULT_HOURS (${resultHours}): the CSV expires before the result`,
    );
  return Object.freeze({
    maxRows: int(env, 'WEIR_SEARCH_MAX_ROWS', 10_000, 1, 1_000_000),
    resultHours,
    csvHours,
    historyDays: int(env, 'WEIR_SEARCH_HISTORY_DAYS', 90, 1, 3650),
    statementTimeoutMs: int(env, 'WEIR_SEARCH_STATEMENT_TIMEOUT_MS', 60_000, 100, 3_600_000),
    concurrency: int(env, 'WEIR_SEARCH_CONCURRENCY', 2, 1, 64),
    publicUrl: url(env, 'WEIR_PUBLIC_URL', ['http:', 'https:']),
    detectionNotifyMs: int(env, 'WEIR_DETECTION_NOTIFY_MINUTES', 15, 1, 1440) * 60_000,
    liveMaxPages: int(env, 'WEIR_SEARCH_LIVE_MAX_PAGES', 20, 1, 1000),
    maxBytes: byteSize(env, 'WEIR_SEARCH_MAX_BYTES', 0),
    eventStore: eventStoreKind(env),
    eventStorePath: eventStorePath(env),
    eventStoreMemory: memorySize(env, 'WEIR_EVENT_STORE_MEMORY', '128MB'),
    eventStoreThreads: int(env, 'WEIR_EVENT_STORE_THREADS', 2, 1, 64),
    exportRoot: path.resolve(str(env, 'WEIR_EXPORT_ROOT', path.join(str(env, 'WEIR_DATA_DIR', './data'), 'exports'))),
  });
}

export function email(env: Env): Readonly<EmailConfig> {
  return Object.freeze({
    attempts: int(env, 'WEIR_EMAIL_ATTEMPTS', 6, 1, 20),
    backoffMs: int(env, 'WEIR_EMAIL_BACKOFF_MS', 30_000, 10, 3_600_000),
    timeoutMs: int(env, 'WEIR_EMAIL_TIMEOUT_MS', 15_000, 500, 120_000),
  });
}

export function caseManagement(env: Env): CaseManagementConfig {
  const caseUrl = url(env, 'WEIR_CASE_URL', ['http:', 'https:']);
  const apiKey = secret(env, 'WEIR_CASE_API_KEY');
  if (caseUrl !== undefined && apiKey === undefined)
    throw new ConfigError('WEIR_CASE_URL needs WEIR_CASE_API_KEY or WEIR_CASE_API_KEY_FILE');
  return Object.freeze({ url: caseUrl, apiKey, timeoutMs: int(env, 'WEIR_CASE_TIMEOUT_MS', 5_000, 100, 60_000) });
}
