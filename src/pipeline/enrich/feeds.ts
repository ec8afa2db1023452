// Indicator feeds: a URL fetched on a schedule (a newline list or a CSV of IPs, CIDRs,
// domains, URLs, hashes), turned into a table version that policies match events against.
// This file holds the config, the parse into TableData and the fetch; the schedule and the
// stored versions belong to the module that calls them.
import { createGuardedPool } from '../../platform/net/http.js';
import { classifyIndicator, readCsv, type IndicatorType } from './indicators.js';
import {
  checkUrlShape,
  credentialIssues,
  failureText,
  fetchCapped,
  intIssue,
  requestHeaders,
  TooLargeError,
  type GuardDeps,
  type HeaderCredential,
  type Issue,
} from './outbound.js';
import type { Row, TableData } from './types.js';

export const FEED_FORMATS = ['csv', 'lines', 'auto'] as const;
export type FeedFormat = (typeof FEED_FORMATS)[number];

export interface FeedConfig {
  url: string;
  /** auto: csv when indicator_column is set or the first line holds a comma, else lines. */
  format: FeedFormat;
  /** The CSV column holding the indicator (default: a column named "indicator", else the first). */
  indicator_column?: string;
  interval_minutes?: number;
  max_bytes?: number;
}

export const FEED_DEFAULTS = { interval_minutes: 60, max_bytes: 50 * 1024 * 1024 } as const;
const MAX_MAX_BYTES = 512 * 1024 * 1024;
/** Problems described one by one; past that, the count in `skipped` says the rest. */
const MAX_PROBLEMS = 20;
const FETCH_TIMEOUT_MS = 60_000;

export function validateFeedConfig(config: unknown): Issue[] {
  if (!config || typeof config !== 'object' || Array.isArray(config)) return [{ at: '', message: 'must be an object' }];
  const c = config as Record<string, unknown>;
  const issues: Issue[] = [];
  if (typeof c.url !== 'string' || c.url === '') issues.push({ at: 'url', message: 'is required' });
  else {
    try {
      issues.push(...checkUrlShape(new URL(c.url), 'url'));
    } catch {
      issues.push({ at: 'url', message: 'is not a valid URL' });
    }
  }
  if (!FEED_FORMATS.includes(c.format as FeedFormat))
    issues.push({ at: 'format', message: `must be one of ${FEED_FORMATS.join(', ')}` });
  if (c.indicator_column !== undefined) {
    if (typeof c.indicator_column !== 'string' || c.indicator_column.trim() === '')
      issues.push({ at: 'indicator_column', message: 'must be a column name' });
    else if (c.format === 'lines') issues.push({ at: 'indicator_column', message: 'applies to CSV feeds only' });
  }
  issues.push(...intIssue(c, 'interval_minutes', 5, 7 * 24 * 60), ...intIssue(c, 'max_bytes', 1, MAX_MAX_BYTES));
  return issues;
}

export interface ParsedFeed {
  data: TableData;
  /** Lines or rows whose indicator has no recognized shape, and repeated indicators. */
  skipped: number;
  /** The first few reasons, by line, for a person to read. */
  problems: string[];
}

/**
 * The feed as a table keyed by `indicator`, with its `type`. It matches as `cidr` when every
 * indicator is an IP or a CIDR; otherwise `case_insensitive`, which suits domains and hashes
 * but compares a mixed list's IPs as text: `10.0.0.0/8` then matches only that very text, not
 * the addresses inside it. Feeds of both kinds are best split in two.
 */
export function parseFeed(text: string, config: FeedConfig): ParsedFeed {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const out = new FeedBuilder();
  if (isCsv(body, config)) readCsvFeed(body, config, out);
  else readLines(body, out);
  return out.result();
}

function isCsv(text: string, config: FeedConfig): boolean {
  if (config.format !== 'auto') return config.format === 'csv';
  if (config.indicator_column) return true;
  const first = text.split('\n').find((l) => l.trim() !== '' && !/^\s*[#;]/.test(l));
  return first?.includes(',') ?? false;
}

class FeedBuilder {
  columns: string[] = ['indicator', 'type'];
  rows: Row[] = [];
  skipped = 0;
  problems: string[] = [];
  #seen = new Set<string>();
  #types = new Set<IndicatorType>();

  add(line: number, raw: string, extra: Row = {}): void {
    const indicator = raw.trim();
    const type = classifyIndicator(indicator);
    if (!type) return this.skip(`line ${line}: not an indicator: ${JSON.stringify(indicator.slice(0, 80))}`);
    // A table key is unique; the case-insensitive form catches EVIL.com after evil.com.
    const key = indicator.toLowerCase();
    if (this.#seen.has(key)) return this.skip(`line ${line}: repeats ${JSON.stringify(indicator.slice(0, 80))}`);
    this.#seen.add(key);
    this.#types.add(type);
    this.rows.push({ indicator, type, ...extra });
  }

  skip(problem: string): void {
    this.skipped++;
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(problem);
  }

  result(): ParsedFeed {
    const ipOnly = this.#types.size > 0 && [...this.#types].every((t) => t === 'ipv4' || t === 'ipv6' || t === 'cidr');
    return {
      data: {
        key_column: 'indicator',
        match: ipOnly ? 'cidr' : 'case_insensitive',
        columns: this.columns,
        rows: this.rows,
      },
      skipped: this.skipped,
      problems: this.problems,
    };
  }
}

/**
 * One indicator per line. Comment lines (`#`, `;`, `//`) and blank lines are skipped; a
 * comment after whitespace is cut, and of what is left the first word is the indicator (so
 * "1.2.3.4  scanner" keeps the address; a hosts-file line "0.0.0.0 evil.com" would keep the
 * address, which is why such lists are better read as CSV or cleaned first).
 */
function readLines(text: string, out: FeedBuilder): void {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\s[#;].*$/, '').trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';') || line.startsWith('//')) continue;
    out.add(i + 1, line.split(/\s/)[0]!);
  }
}

function readCsvFeed(text: string, config: FeedConfig, out: FeedBuilder): void {
  const { records, leadingComments } = readCsv(text);
  if (!records.length) return;
  let header = records[0]!.cells.map((c) => c.trim());
  let data = records.slice(1);
  const wanted = config.indicator_column?.trim();
  if (wanted && indexOf(header, wanted) < 0) {
    // The header commented out above the data (abuse.ch: "# id,dateadded,url,...").
    const commented = leadingComments.length
      ? readCsv(leadingComments.at(-1)!.trim()).records[0]?.cells.map((c) => c.trim())
      : undefined;
    if (!commented || indexOf(commented, wanted) < 0) {
      out.problems.push(`no column named ${JSON.stringify(wanted)} in the header (${header.slice(0, 10).join(', ')})`);
      return;
    }
    header = commented;
    data = records;
  }
  const at = wanted ? indexOf(header, wanted) : Math.max(indexOf(header, 'indicator'), 0);
  const names = columnNames(header, at);
  out.columns.push(...names.filter((n): n is string => n !== null));
  for (const record of data) {
    if (record.cells.length !== header.length) {
      out.skip(`line ${record.line}: ${record.cells.length} fields where the header has ${header.length}`);
      continue;
    }
    const extra: Row = {};
    record.cells.forEach((cell, i) => {
      const name = names[i];
      if (name) extra[name] = cell === '' ? null : cell;
    });
    out.add(record.line, record.cells[at] ?? '', extra);
  }
}

function indexOf(header: readonly string[], name: string): number {
  const exact = header.indexOf(name);
  return exact >= 0 ? exact : header.findIndex((h) => h.toLowerCase() === name.toLowerCase());
}

/** The table's name of each CSV column (null for the indicator column): unique, never `indicator` or `type`. */
function columnNames(header: readonly string[], indicatorAt: number): (string | null)[] {
  const used = new Set(['indicator', 'type']);
  return header.map((h, i) => {
    if (i === indicatorAt) return null;
    const base = h === '' ? `column_${i + 1}` : h;
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    return name;
  });
}

export type FeedFetchResult =
  | {
      ok: true;
      not_modified?: false;
      text: string;
      bytes: number;
      etag?: string;
      last_modified?: string;
      fetched_at: string;
    }
  | { ok: true; not_modified: true; fetched_at: string }
  | { ok: false; error: string; status?: number };

export interface FeedFetchDeps extends GuardDeps {
  /** Epoch milliseconds. */
  now: () => number;
  /** Default 60 s: a feed of 50 MiB needs time on a slow link. */
  timeoutMs?: number;
}

/**
 * One fetch of the feed through the SSRF guard. With the previous version's validators it
 * is a conditional GET, and an unchanged feed answers not_modified. Beyond max_bytes the
 * download stops. Never throws; no error names the credential.
 */
export async function fetchFeed(
  config: FeedConfig,
  credential: HeaderCredential | null | undefined,
  deps: FeedFetchDeps,
  previous: { etag?: string; last_modified?: string } = {},
): Promise<FeedFetchResult> {
  const issues = validateFeedConfig(config).concat(credentialIssues(credential));
  if (issues.length) return { ok: false, error: issues.map((i) => `${i.at}: ${i.message}`).join('; ') };
  const url = new URL(config.url);
  url.hash = '';
  const maxBytes = config.max_bytes ?? FEED_DEFAULTS.max_bytes;
  const headers = requestHeaders({ accept: 'text/plain, text/csv;q=0.9, */*;q=0.5' }, credential);
  if (previous.etag) headers['if-none-match'] = previous.etag;
  if (previous.last_modified) headers['if-modified-since'] = previous.last_modified;
  const pool = createGuardedPool(url.origin, deps, { connections: 1 });
  try {
    const answer = await fetchCapped(pool, {
      method: 'GET',
      path: `${url.pathname}${url.search}`,
      headers,
      timeoutMs: deps.timeoutMs ?? FETCH_TIMEOUT_MS,
      maxBytes,
    });
    const fetched_at = new Date(deps.now()).toISOString();
    if (answer.status === 304) return { ok: true, not_modified: true, fetched_at };
    // Server answers are not quoted: one may echo the request, credential included.
    if (answer.status < 200 || answer.status >= 300) {
      const redirect =
        answer.status >= 300 && answer.status < 400 ? ' (redirects are not followed: set the final URL)' : '';
      return { ok: false, status: answer.status, error: `HTTP ${answer.status}${redirect}` };
    }
    const etag = header(answer.headers.etag);
    const lastModified = header(answer.headers['last-modified']);
    return {
      ok: true,
      text: answer.body.toString('utf8'),
      bytes: answer.body.length,
      ...(etag ? { etag } : {}),
      ...(lastModified ? { last_modified: lastModified } : {}),
      fetched_at,
    };
  } catch (err) {
    if (err instanceof TooLargeError)
      return { ok: false, error: `the feed is larger than max_bytes (${maxBytes} bytes): the download was stopped` };
    return { ok: false, error: failureText(err) };
  } finally {
    await pool.destroy().catch(() => undefined);
  }
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
