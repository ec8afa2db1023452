// RELP, the Reliable Event Logging Protocol of rsyslog (omrelp/imrelp): every frame is
//   TXNR SP COMMAND SP DATALEN [SP DATA] LF
// and the receiver answers each `syslog` frame with `TXNR rsp ... 200 OK` once it holds the
// message durably; the sender keeps (and resends after a reconnect) every message not yet
// answered. That acknowledgement is what lets a syslog sender lose nothing that Weir has not
// durably accepted (docs/decisions/0040-syslog-receiver.md).

export interface RelpFrame {
  txnr: number;
  command: string;
  data: Buffer;
}

const SP = 0x20;
const LF = 0x0a;
/** Longest DATALEN accepted: a message up to the text limit plus room for the header. */
export const RELP_MAX_DATA = 1_048_576 + 1024;

export class RelpError extends Error {}

export class RelpDecoder {
  private pending: Buffer | null = null;

  push(chunk: Buffer): RelpFrame[] {
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = null;
    const frames: RelpFrame[] = [];
    let i = 0;
    while (i < buf.length) {
      // Tolerate a stray LF between frames.
      if (buf[i] === LF) {
        i++;
        continue;
      }
      const a = buf.indexOf(SP, i);
      if (a < 0 || a - i > 10) {
        if (a < 0 && buf.length - i <= 10) break;
        throw new RelpError('a frame does not start with a transaction number');
      }
      const b = buf.indexOf(SP, a + 1);
      if (b < 0 || b - a > 33) {
        if (b < 0 && buf.length - a <= 33) break;
        throw new RelpError('a frame has no command');
      }
      const txnrText = buf.toString('latin1', i, a);
      if (!/^\d{1,9}$/.test(txnrText)) throw new RelpError('a frame does not start with a transaction number');
      const command = buf.toString('latin1', a + 1, b);
      if (!/^[a-z]{1,32}$/.test(command)) throw new RelpError('a frame has an invalid command');
      let j = b + 1;
      while (j < buf.length && j - b <= 10 && buf[j]! >= 0x30 && buf[j]! <= 0x39) j++;
      if (j >= buf.length) break;
      const len = Number(buf.toString('latin1', b + 1, j));
      if (j === b + 1 || len > RELP_MAX_DATA) throw new RelpError('a frame has an invalid data length');
      let dataStart = j;
      if (len > 0) {
        if (buf[j] !== SP) throw new RelpError("a frame's data does not follow its length");
        dataStart = j + 1;
      }
      if (dataStart + len >= buf.length) break; // the data and its LF trailer are not all here
      if (buf[dataStart + len] !== LF) throw new RelpError('a frame does not end with LF');
      frames.push({ txnr: Number(txnrText), command, data: buf.subarray(dataStart, dataStart + len) });
      i = dataStart + len + 1;
    }
    if (i < buf.length) this.pending = Buffer.from(buf.subarray(i));
    return frames;
  }
}

/** A `rsp` frame: `TXNR rsp LEN CODE TEXT[\nEXTRA]\n`. */
export function relpResponse(txnr: number, code: number, text: string, extra = ''): Buffer {
  const data = `${code} ${text}${extra ? `\n${extra}` : ''}`;
  return Buffer.from(`${txnr} rsp ${Buffer.byteLength(data)} ${data}\n`);
}

/** The answer to `open`: the offers this receiver supports. */
export function relpOpenResponse(txnr: number, offers: Buffer): Buffer {
  const version = /relp_version=(\d+)/.exec(offers.toString('latin1'))?.[1] ?? '0';
  return relpResponse(txnr, 200, 'OK', `relp_version=${version}\nrelp_software=weir\ncommands=syslog`);
}

/** What the server sends before it closes a session (after answering `close`). */
export const RELP_SERVER_CLOSE = Buffer.from('0 serverclose 0\n');
