import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCef, parseLeef } from './cef.js';
import { parseCsv, splitCsv } from './csv.js';
import { ParseError } from './errors.js';
import { parseKv } from './kv.js';
import { parseSyslog } from './syslog.js';
import { parseXml } from './xml.js';

function failure(fn: () => unknown): ParseError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ParseError) return e;
    throw e;
  }
  throw new Error('no failure');
}

describe('syslog', () => {
  it('reads RFC 5424 with structured data and a BOM', () => {
    const h = parseSyslog(
      '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Appl\\"ication" eventID="1011"][x@1 a="]\\]"] \ufeffAn application event',
    );
    expect(h).toEqual({
      message: 'An application event',
      priority: 165,
      facility: 20,
      severity: 5,
      version: 1,
      timestamp: '2003-10-11T22:14:15.003Z',
      hostname: 'mymachine.example.com',
      app_name: 'evntslog',
      msgid: 'ID47',
      structured_data: {
        'exampleSDID@32473': { iut: '3', eventSource: 'Appl"ication', eventID: '1011' },
        'x@1': { a: ']]' },
      },
    });
  });

  it('reads RFC 5424 with no structured data and no message', () => {
    expect(parseSyslog('<34>1 2003-10-11T22:14:15Z host su 77 - -')).toMatchObject({ procid: '77', message: '' });
    expect(parseSyslog('<34>1 - - - - - - hello')).toEqual({
      priority: 34,
      facility: 4,
      severity: 2,
      version: 1,
      message: 'hello',
    });
  });

  it('reads RFC 3164 as senders write it', () => {
    expect(parseSyslog("<34>Oct 11 22:14:15 mymachine su[42]: 'su root' failed for lonvick")).toEqual({
      priority: 34,
      facility: 4,
      severity: 2,
      timestamp: 'Oct 11 22:14:15',
      hostname: 'mymachine',
      app_name: 'su',
      procid: '42',
      message: "'su root' failed for lonvick",
    });
    // No hostname: the first word is the tag.
    expect(parseSyslog('<13>Jan  2 03:04:05 sshd: Accepted key')).toMatchObject({
      timestamp: 'Jan  2 03:04:05',
      app_name: 'sshd',
      message: 'Accepted key',
    });
    expect(parseSyslog('<13>Jan  2 03:04:05 sshd: Accepted key').hostname).toBeUndefined();
    // An ISO timestamp, no tag.
    expect(parseSyslog('<189>2024-03-05T14:22:31+01:00 fw01 date=2024-03-05 devname="fw01"')).toMatchObject({
      hostname: 'fw01',
      message: 'date=2024-03-05 devname="fw01"',
    });
    // No PRI at all: read from a file.
    expect(parseSyslog('just text')).toEqual({ message: 'just text' });
  });

  it('fails on a bad priority and on broken structured data, with the position', () => {
    expect(failure(() => parseSyslog('<999>1 - - - - - -')).where()).toBe(' at character 2');
    const e = failure(() => parseSyslog('<1>1 - h a - - [id k="v] msg'));
    expect(e.reason).toBe('unterminated structured data value');
    expect(e.position).toBe(22); // the opening quote
  });
});

describe('kv', () => {
  const opts = { maxFields: 100 };
  it('reads FortiGate-style pairs, quoted values and values holding the separator', () => {
    expect(parseKv("date=2024-03-05 devname=\"FG 100\" msg='it\\'s ok' url=/a?b=c  empty= x=1", opts)).toEqual({
      date: '2024-03-05',
      devname: 'FG 100',
      msg: "it's ok",
      url: '/a?b=c',
      empty: '',
      x: '1',
    });
  });
  it('keeps every value of a repeated key', () => {
    expect(parseKv('a=1 a=2 a=3', opts)).toEqual({ a: ['1', '2', '3'] });
  });
  it('takes custom separators', () => {
    expect(parseKv('a:1|b: two |c:"x|y"', { ...opts, pairSeparator: '|', valueSeparator: ':' })).toEqual({
      a: '1',
      b: 'two',
      c: 'x|y',
    });
  });
  it('reads a quote written twice inside a quoted value as one, when asked', () => {
    const text = 'ref="http://x/?q=""weir""" ua="a ""b"" c"\tn="" m=""""';
    expect(parseKv(text, { ...opts, doubledQuotes: true })).toEqual({
      ref: 'http://x/?q="weir"',
      ua: 'a "b" c',
      n: '',
      m: '"',
    });
    expect(failure(() => parseKv(text, opts))).toMatchObject({ reason: 'expected a separator after a quoted value' });
    expect(failure(() => parseKv('a="x""', { ...opts, doubledQuotes: true }))).toMatchObject({
      reason: 'unterminated quoted value',
      position: 3,
    });
  });
  it('leniently, reads a line cut inside a quoted value and a trailer glued to a closing quote', () => {
    // FortiGate lines as relays deliver them: cut at a size limit, or with a shipper's "|" after the last value.
    expect(
      parseKv('action="Cellular Connecting" msg="FX04 STATE: sim in slot:2 on carrier:Rogers ', {
        ...opts,
        lenient: true,
      }),
    ).toEqual({ action: 'Cellular Connecting', msg: 'FX04 STATE: sim in slot:2 on carrier:Rogers ' });
    expect(
      parseKv('profile="super_admin" msg="logged in from https(172.16.1.2)"| n=1', { ...opts, lenient: true }),
    ).toEqual({ profile: 'super_admin', msg: 'logged in from https(172.16.1.2)|', n: '1' });
    expect(failure(() => parseKv('msg="cut', opts))).toMatchObject({ reason: 'unterminated quoted value' });
  });
  it('fails where the text stops making sense', () => {
    expect(failure(() => parseKv('a=1 bare c=2', opts)).position).toBe(9);
    expect(failure(() => parseKv('a="open', opts))).toMatchObject({ reason: 'unterminated quoted value', position: 3 });
    expect(failure(() => parseKv('a=1 b=2 c=3', { maxFields: 2 }))).toMatchObject({
      reason: 'more than 2 fields',
      position: 9,
    });
  });
  it('reads back any map it is given as quoted pairs', () => {
    const key = fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/);
    fc.assert(
      fc.property(fc.dictionary(key, fc.string({ maxLength: 30 }), { maxKeys: 20 }), (m) => {
        const text = Object.entries(m)
          .map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)
          .join(' ');
        expect(parseKv(text, opts)).toEqual(m);
      }),
    );
  });
  it('never throws anything but a ParseError with a position inside the text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        try {
          parseKv(text, { maxFields: 5 });
        } catch (e) {
          expect(e).toBeInstanceOf(ParseError);
          const p = (e as ParseError).position;
          expect(p === undefined || (p >= 1 && p <= text.length + 1)).toBe(true);
        }
      }),
    );
  });
});

describe('csv', () => {
  const columns = ['a', 'b', '_', 'd'];
  it('reads quoted fields, doubled quotes and empty fields', () => {
    expect(parseCsv('1,"x, ""y""",skip,', { columns, maxFields: 100 })).toEqual({ a: '1', b: 'x, "y"' });
    expect(parseCsv('1', { columns, maxFields: 100 })).toEqual({ a: '1' });
  });
  it('refuses more fields than columns unless told to ignore them', () => {
    expect(failure(() => parseCsv('1,2,3,4,5', { columns, maxFields: 100 }))).toMatchObject({
      reason: 'more than 4 fields',
      position: 9,
    });
    expect(parseCsv('1,2,3,4,5', { columns, maxFields: 100, allowExtra: true })).toEqual({ a: '1', b: '2', d: '4' });
  });
  it('fails on an unterminated quote at the quote', () => {
    expect(failure(() => splitCsv('a,"b'))).toMatchObject({ reason: 'unterminated quoted field', position: 3 });
    expect(failure(() => splitCsv('a,"b"c'))).toMatchObject({ position: 6 });
  });
  it('reads back any record written with RFC 4180 quoting', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 20 }), { minLength: 1, maxLength: 30 }), (fields) => {
        const line = fields.map((f) => `"${f.replace(/"/g, '""')}"`).join(',');
        expect(splitCsv(line)).toEqual(fields);
      }),
    );
  });
});

describe('cef and leef', () => {
  it('reads a CEF line behind a syslog header, with escapes and values holding spaces', () => {
    const line =
      '<134>Mar  5 14:22:31 host CEF:0|Trend Micro|Deep Security Agent|10.0|4000000|Eicar\\|test|6|cn1=1 cn1Label=Host ID dvc=10.0.0.1 msg=a\\=b c\\\\d\\nnext act=blocked';
    expect(parseCef(line, 100)).toEqual({
      prefix: '<134>Mar  5 14:22:31 host',
      version: '0',
      device_vendor: 'Trend Micro',
      device_product: 'Deep Security Agent',
      device_version: '10.0',
      device_event_class_id: '4000000',
      name: 'Eicar|test',
      severity: '6',
      extension: { cn1: '1', cn1Label: 'Host ID', dvc: '10.0.0.1', msg: 'a=b c\\d\nnext', act: 'blocked' },
    });
  });
  it('fails on a short header with the position', () => {
    expect(failure(() => parseCef('CEF:0|a|b|c', 100))).toMatchObject({
      reason: 'the header has 4 of its 8 fields',
      position: 12,
    });
    expect(failure(() => parseCef('no header here', 100)).reason).toBe('no "CEF:" header');
  });
  it('reads LEEF 1.0 (tabs) and LEEF 2.0 with its own delimiter', () => {
    expect(parseLeef('LEEF:1.0|Microsoft|MSExchange|2016|15345|src=10.0.1.8\tdst=10.0.0.5\tusrName=a=b', 100)).toEqual({
      version: '1.0',
      vendor: 'Microsoft',
      product: 'MSExchange',
      product_version: '2016',
      event_id: '15345',
      attributes: { src: '10.0.1.8', dst: '10.0.0.5', usrName: 'a=b' },
    });
    expect(parseLeef('LEEF:2.0|Lancope|StealthWatch|1.0|41|^|src=10.0.1.8^dst=10.0.0.5', 100).attributes).toEqual({
      src: '10.0.1.8',
      dst: '10.0.0.5',
    });
    expect(parseLeef('LEEF:2.0|V|P|1|E|0x7c|a=1|b=2', 100).attributes).toEqual({ a: '1', b: '2' });
  });
});

describe('xml', () => {
  const limits = { maxDepth: 32, maxFields: 1000 };
  const windows = `<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event"><System><Provider Name="Microsoft-Windows-Security-Auditing" Guid="{54849625-5478-4994-a5ba-3e3b0328c30d}"/><EventID>4624</EventID><TimeCreated SystemTime="2024-03-05T14:22:31.1234567Z"/><Computer>DC01.corp.example</Computer></System><EventData><Data Name="TargetUserName">alice</Data><Data Name="IpAddress">10.0.0.7</Data><Data Name="Empty"/></EventData></Event>`;
  it('reads Windows event XML as System and named EventData fields', () => {
    expect(parseXml(windows, 'windows_event', limits)).toEqual({
      System: {
        Provider: { Name: 'Microsoft-Windows-Security-Auditing', Guid: '{54849625-5478-4994-a5ba-3e3b0328c30d}' },
        EventID: '4624',
        TimeCreated: { SystemTime: '2024-03-05T14:22:31.1234567Z' },
        Computer: 'DC01.corp.example',
      },
      EventData: { TargetUserName: 'alice', IpAddress: '10.0.0.7', Empty: '' },
    });
  });
  it('reads generic XML with @attributes and #text', () => {
    expect(parseXml('<a id="1"><b>x</b><b>y</b><c k="v">t</c></a>', 'generic', limits)).toEqual({
      a: { b: ['x', 'y'], c: { '#text': 't', '@k': 'v' }, '@id': '1' },
    });
  });
  it('fails with the line and column, and on depth and entity bombs', () => {
    expect(failure(() => parseXml('<a>\n<b></a>', 'generic', limits)).where()).toBe(' at line 2, column 4');
    expect(failure(() => parseXml('<a><b><c><d/></c></b></a>', 'generic', { maxDepth: 3, maxFields: 10 })).reason).toBe(
      'nested deeper than 3 elements',
    );
    const bomb = `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">${Array.from({ length: 30 }, (_, i) => `<!ENTITY e${i} "&a;&a;">`).join('')}]><l>&e29;</l>`;
    // Declared entities are never expanded: the document stays its own size.
    expect(parseXml(bomb, 'generic', limits)).toEqual({ l: '&e29;' });
    expect(parseXml('<a x="&lt;&#x41;">&amp;b&#65;&#0;</a>', 'generic', limits)).toEqual({
      a: { '#text': '&bA\ufffd', '@x': '<A' },
    });
    expect(failure(() => parseXml('<Other/>', 'windows_event', limits)).reason).toBe(
      'the document is not a Windows <Event>',
    );
  });
});
