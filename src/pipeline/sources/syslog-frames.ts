// Syslog over a stream (TCP, TLS): the frames of RFC 6587 as senders mix them on one
// connection. A frame that starts with a digit is octet-counted (`MSG-LEN SP SYSLOG-MSG`:
// rsyslog's and syslog-ng's RFC 5424 framing, logger --octet-count); any other is
// non-transparent, ended by LF (CRLF and a trailing NUL tolerated). The decoder keeps the
// bytes of an unfinished frame between chunks and never copies a finished one more than once.
import { MAX_TEXT_LINE_BYTES } from './text.js';

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const NUL = 0x00;

export interface FrameOutput {
  /** The messages of the chunk, in order (bytes: their UTF-8 is checked by the caller). */
  messages: Buffer[];
  /** Frames refused (too long); `fatal` when the octet count is unusable and the connection must close. */
  refused: number;
  fatal?: string;
}

export class SyslogFrameDecoder {
  private pending: Buffer | null = null;
  /** Non-transparent frame longer than the limit: skip to its LF. */
  private skipping = false;

  constructor(private readonly maxMessageBytes = MAX_TEXT_LINE_BYTES) {}

  /** Bytes received but not yet a complete frame. */
  get buffered(): number {
    return this.pending?.length ?? 0;
  }

  push(chunk: Buffer): FrameOutput {
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = null;
    const out: FrameOutput = { messages: [], refused: 0 };
    let i = 0;
    while (i < buf.length) {
      if (this.skipping) {
        const lf = buf.indexOf(LF, i);
        if (lf < 0) return out;
        this.skipping = false;
        i = lf + 1;
        continue;
      }
      const c = buf[i]!;
      if (c === LF || c === CR || c === NUL) {
        i++;
        continue;
      }
      if (c >= 0x30 && c <= 0x39) {
        // Octet counting: digits, a space, then exactly that many bytes.
        let j = i;
        while (j < buf.length && j - i < 10 && buf[j]! >= 0x30 && buf[j]! <= 0x39) j++;
        if (j >= buf.length) break; // the count is not complete yet
        if (buf[j] !== SP) {
          out.fatal = 'a frame starts with digits not followed by a space (neither octet-counted nor a syslog message)';
          return out;
        }
        const len = Number(buf.toString('latin1', i, j));
        if (len === 0 || len > this.maxMessageBytes) {
          out.fatal = `an octet-counted frame of ${len} bytes (the limit is ${this.maxMessageBytes})`;
          return out;
        }
        if (j + 1 + len > buf.length) break; // wait for the rest
        out.messages.push(buf.subarray(j + 1, j + 1 + len));
        i = j + 1 + len;
        continue;
      }
      const lf = buf.indexOf(LF, i);
      if (lf < 0) {
        if (buf.length - i > this.maxMessageBytes) {
          out.refused++;
          this.skipping = true;
          return out;
        }
        break;
      }
      let end = lf;
      while (end > i && (buf[end - 1] === CR || buf[end - 1] === NUL)) end--;
      if (end - i > this.maxMessageBytes) out.refused++;
      else out.messages.push(buf.subarray(i, end));
      i = lf + 1;
    }
    if (i < buf.length) this.pending = Buffer.from(buf.subarray(i));
    return out;
  }

  /** At the end of the stream: a last non-transparent frame without its LF is still a message. */
  end(): Buffer[] {
    const rest = this.pending;
    this.pending = null;
    if (!rest || this.skipping) return [];
    let end = rest.length;
    while (end > 0 && (rest[end - 1] === CR || rest[end - 1] === NUL)) end--;
    if (end === 0 || (rest[0]! >= 0x30 && rest[0]! <= 0x39)) return []; // an unfinished octet-counted frame is lost with the connection
    return [rest.subarray(0, end)];
  }
}
