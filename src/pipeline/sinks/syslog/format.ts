// RFC 5424 messages for the syslog sink, and their framing on a stream (RFC 6587 octet
// counting or LF-terminated) or as datagrams (RFC 5426). Pure functions: the transport is in
// transport.ts.
import { DeliveryError, type SinkBatch, type SinkResult } from '../types.js';

/** RFC 5424 section 6.2.1 facility names (the usual syslog.h spellings). */
export const FACILITIES: Readonly<Record<string, number>> = Object.freeze({
  kern: 0,
  user: 1,
  mail: 2,
  daemon: 3,
  auth: 4,
  syslog: 5,
  lpr: 6,
  news: 7,
  uucp: 8,
  cron: 9,
  authpriv: 10,
  ftp: 11,
  ntp: 12,
  audit: 13,
  alert: 14,
  clock: 15,
  local0: 16,
  local1: 17,
  local2: 18,
  local3: 19,
  local4: 20,
  local5: 21,
  local6: 22,
  local7: 23,
});

/**
 * OCSF severity_id → syslog severity. OCSF ranks upwards (1 Informational … 6 Fatal), syslog
 * downwards (0 Emergency … 7 Debug). Unknown (0), Other (99) and absent are Informational (6):
 * there is nothing to escalate on.
 */
export const SEVERITY_BY_OCSF: Readonly<Record<number, number>> = Object.freeze({
  0: 6,
  1: 6,
  2: 5,
  3: 4,
  4: 3,
  5: 2,
  6: 0,
  99: 6,
});

export function syslogSeverity(severityId: unknown): number {
  return typeof severityId === 'number' ? (SEVERITY_BY_OCSF[severityId] ?? 6) : 6;
}

export function facilityNumber(value: unknown): number {
  if (value === undefined || value === null) return 16;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 23) return value;
  if (typeof value === 'string' && FACILITIES[value.toLowerCase()] !== undefined)
    return FACILITIES[value.toLowerCase()] as number;
  throw new DeliveryError('config', `facility must be 0-23 or one of ${Object.keys(FACILITIES).join(', ')}`);
}

/** SD-PARAM values escape ", \ and ] (RFC 5424 section 6.3.3). */
export function escapeSdValue(value: string): string {
  return /["\\\]]/.test(value) ? value.replace(/["\\\]]/g, '\\$&') : value;
}

/** Header fields are PRINTUSASCII without spaces, limited in length; "-" when empty. */
export function headerField(value: string, maxLength: number): string {
  const clean = value.replace(/[^!-~]/g, '_').slice(0, maxLength);
  return clean === '' ? '-' : clean;
}

/** OCSF `time` (epoch ms) as an RFC 5424 TIMESTAMP; now when absent or out of range. */
export function timestamp(time: unknown, now: number): string {
  const ms = typeof time === 'number' && Number.isFinite(time) && time > 0 && time < 253_402_300_800_000 ? time : now;
  return new Date(ms).toISOString();
}

/**
 * A structured-data id of the operator's own: `name@<private enterprise number>` (RFC 5424
 * section 6.3.2; SD-NAME is 1 to 32 printable ASCII characters without "=", space, "]", '"').
 * 32473 is refused: IANA reserves it for examples in documentation (RFC 5612), so an SD-ID
 * under it names nobody and a receiver cannot trust whose parameters these are.
 */
export const SD_ID_PATTERN = '^(?=.{3,32}$)[!#-<>?A-Z\\[\\\\^-~]+@(?!32473$)[1-9][0-9]*$';
export const SD_ID_RULE =
  'must be name@<your private enterprise number> (RFC 5424 section 6.3.2), e.g. acme@41234, at most 32 printable ASCII characters without "=", space, "]" or \'"\'; 32473 is the example number reserved for documentation (RFC 5612) and cannot be used';
const sdIdRegex = new RegExp(SD_ID_PATTERN);

export function sdIdProblem(id: string): string | undefined {
  return sdIdRegex.test(id) ? undefined : `structured_data_id ${SD_ID_RULE}`;
}

/** The parts of a message shared by every event of a sink (computed once). */
export interface MessageHeader {
  facility: number;
  /** "HOSTNAME APP-NAME PROCID MSGID", already cleaned. */
  fields: string;
  /** The operator's SD-ID; without it a message has no structured data (NILVALUE). */
  sdId?: string;
}

export function messageHeader(options: {
  facility: number;
  hostname: string;
  appName: string;
  procId: string;
  msgId: string;
  sdId?: string;
}): MessageHeader {
  const fields = [
    headerField(options.hostname, 255),
    headerField(options.appName, 48),
    headerField(options.procId, 128),
    headerField(options.msgId, 32),
  ].join(' ');
  return { facility: options.facility, fields, ...(options.sdId ? { sdId: options.sdId } : {}) };
}

/**
 * One event as an RFC 5424 message: `<PRI>1 TIMESTAMP HOST APP PROCID MSGID SD MSG`, SD being
 * `[<sd id> event_id=".." org=".." class_uid=".."]` with the operator's SD-ID, else `-`.
 */
export function formatMessage(
  header: MessageHeader,
  event: Record<string, unknown>,
  line: string,
  id: string,
  org: number,
  now: number,
): string {
  const pri = header.facility * 8 + syslogSeverity(event.severity_id);
  const classUid = typeof event.class_uid === 'number' ? String(event.class_uid) : '';
  const sd = header.sdId
    ? `[${header.sdId} event_id="${escapeSdValue(id)}" org="${org}" class_uid="${escapeSdValue(classUid)}"]`
    : '-';
  return `<${pri}>1 ${timestamp(event.time, now)} ${header.fields} ${sd} ${line}`;
}

export type Framing = 'octet_counting' | 'non_transparent';

/** Messages of a batch, ready for the wire, and the events that could not be sent. */
export interface Encoded {
  /** Framed messages (stream) or one message per datagram (udp), in batch order. */
  frames: Buffer[];
  rejected: NonNullable<SinkResult['rejected']>;
}

/**
 * Formats a whole batch. An event whose message exceeds maxBytes is refused (dead-lettered by
 * the engine), never truncated: a cut JSON text would be silently corrupt downstream.
 */
export function encodeBatch(
  batch: SinkBatch,
  header: MessageHeader,
  framing: Framing | 'datagram',
  maxBytes: number,
  now = Date.now(),
): Encoded {
  const events = batch.events();
  const frames: Buffer[] = [];
  const rejected: Encoded['rejected'] = [];
  for (let i = 0; i < batch.lines.length; i++) {
    const line = batch.lines[i] as string;
    if (framing === 'non_transparent' && line.includes('\n')) {
      rejected.push({
        index: i,
        reason: 'event contains a line feed, which LF framing cannot carry (use octet_counting)',
      });
      continue;
    }
    const msg = formatMessage(
      header,
      events[i] ?? {},
      line,
      batch.ids[i] ?? '',
      batch.meta[i]?.organization_id ?? 0,
      now,
    );
    const bytes = Buffer.byteLength(msg);
    if (bytes > maxBytes) {
      rejected.push({ index: i, reason: `syslog message of ${bytes} bytes is above max_message_bytes (${maxBytes})` });
      continue;
    }
    if (framing === 'octet_counting') frames.push(Buffer.from(`${bytes} ${msg}`));
    else if (framing === 'non_transparent') frames.push(Buffer.from(`${msg}\n`));
    else frames.push(Buffer.from(msg));
  }
  return { frames, rejected };
}
