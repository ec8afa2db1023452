import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RelpDecoder, RelpError, relpOpenResponse, relpResponse } from './relp.js';
import { SyslogFrameDecoder } from './syslog-frames.js';

const text = (b: Buffer[]) => b.map((m) => m.toString('utf8'));

describe('syslog stream framing', () => {
  it('reads octet-counted and LF-ended frames mixed, across chunk boundaries', () => {
    const d = new SyslogFrameDecoder();
    const wire = Buffer.from('13 <13>1 - - a\nb<14>plain line\r\n5 x y z<15>last\n');
    const got: string[] = [];
    for (let i = 0; i < wire.length; i += 3) got.push(...text(d.push(wire.subarray(i, i + 3)).messages));
    expect(got).toEqual(['<13>1 - - a\nb', '<14>plain line', 'x y z', '<15>last']);
    expect(d.buffered).toBe(0);
  });

  it('ends with a last LF frame without its LF, but not with half an octet-counted one', () => {
    const d = new SyslogFrameDecoder();
    expect(d.push(Buffer.from('<13>no newline')).messages).toEqual([]);
    expect(text(d.end())).toEqual(['<13>no newline']);
    const e = new SyslogFrameDecoder();
    e.push(Buffer.from('100 <13>short'));
    expect(e.end()).toEqual([]);
  });

  it('refuses frames over the limit: an LF frame is skipped, an octet count is fatal', () => {
    const d = new SyslogFrameDecoder(10);
    const out = d.push(Buffer.from('<13>this is too long\n<13>ok\n'));
    expect(out).toEqual({ messages: [Buffer.from('<13>ok')], refused: 1 });
    const long = new SyslogFrameDecoder(10);
    expect(long.push(Buffer.from('<13>this is too long and has no end yet')).refused).toBe(1);
    expect(text(long.push(Buffer.from(' still\n<13>next\n')).messages)).toEqual(['<13>next']);
    expect(new SyslogFrameDecoder(10).push(Buffer.from('99 x')).fatal).toContain('99 bytes');
    expect(new SyslogFrameDecoder().push(Buffer.from('12x')).fatal).toContain('digits not followed by a space');
  });

  it('gives back every message whatever the chunking', () => {
    const msg = fc.string({ minLength: 1, maxLength: 40 }).map((s) => `<13>${s.replace(/[\r\n\0]/g, ' ')}`);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(msg, fc.boolean()), { minLength: 1, maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 10 }),
        (messages, cuts) => {
          const wire = Buffer.concat(
            messages.map(([m, counted]) => Buffer.from(counted ? `${Buffer.byteLength(m)} ${m}` : `${m}\n`)),
          );
          const d = new SyslogFrameDecoder();
          const got: string[] = [];
          let i = 0;
          for (let k = 0; i < wire.length; k++) {
            const n = cuts[k % cuts.length]!;
            got.push(...text(d.push(wire.subarray(i, i + n)).messages));
            i += n;
          }
          got.push(...text(d.end()));
          expect(got).toEqual(messages.map(([m]) => m.replace(/\s+$/, (s) => s)));
        },
      ),
    );
  });
});

describe('RELP', () => {
  it('reads frames with and without data across chunks', () => {
    const d = new RelpDecoder();
    const wire = Buffer.from('1 open 30 relp_version=0\ncommands=syslog\n2 syslog 9 <13>hello\n3 close 0\n');
    const frames = [];
    for (let i = 0; i < wire.length; i += 7) frames.push(...d.push(wire.subarray(i, i + 7)));
    expect(frames.map((f) => [f.txnr, f.command, f.data.toString()])).toEqual([
      [1, 'open', 'relp_version=0\ncommands=syslog'],
      [2, 'syslog', '<13>hello'],
      [3, 'close', ''],
    ]);
  });

  it('refuses a broken frame', () => {
    expect(() => new RelpDecoder().push(Buffer.from('x syslog 1 a\n'))).toThrow(RelpError);
    expect(() => new RelpDecoder().push(Buffer.from('1 syslog 1 ab\n'))).toThrow('does not end with LF');
  });

  it('answers in the frame format', () => {
    expect(relpResponse(2, 200, 'OK').toString()).toBe('2 rsp 6 200 OK\n');
    expect(relpOpenResponse(1, Buffer.from('relp_version=0\nrelp_software=x\ncommands=syslog')).toString()).toBe(
      '1 rsp 56 200 OK\nrelp_version=0\nrelp_software=weir\ncommands=syslog\n',
    );
  });
});
