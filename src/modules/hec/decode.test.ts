// HEC bodies into Weir events: envelope boundaries, the event and its metadata, the stream
// name, and where decoding stops.
import { describe, expect, it } from 'vitest';
import { decodeEvents, decodeRaw, envelopeSpans, streamOf } from './decode.js';

const texts = (body: string) => decodeEvents(Buffer.from(body), {}, 32);

describe('HEC decoding', () => {
  it('finds envelopes back to back, across lines, with braces inside strings', () => {
    const body = Buffer.from('{"event":"a}{"}{"event":{"b":[1,{}]}}\n\n  {"event":"c\\"}"}');
    expect(envelopeSpans(body).spans.map(([s, e]) => body.toString('utf8', s, e))).toEqual([
      '{"event":"a}{"}',
      '{"event":{"b":[1,{}]}}',
      '{"event":"c\\"}"}',
    ]);
    expect(envelopeSpans(Buffer.from('{"event":"a"} x')).bad).toBe(true);
  });

  it('keeps an object event as it is and wraps any other in message, with the metadata under hec', () => {
    const { events, problem } = texts(
      '{"event":{"a":1}}{"event":"text","time":"1426279439.5","host":"h","fields":{"k":["x"]}}{"event":42,"sourcetype":"aws:cloudtrail"}{"event":{"hec":"mine"},"host":"h"}',
    );
    expect(problem).toBeUndefined();
    expect(events.map((e) => [e.stream, JSON.parse(e.text) as unknown])).toEqual([
      ['hec', { a: 1 }],
      ['hec', { message: 'text', hec: { time: 1426279439.5, host: 'h', fields: { k: ['x'] } } }],
      ['aws_cloudtrail', { message: '42', hec: { sourcetype: 'aws:cloudtrail' } }],
      ['hec', { hec: 'mine' }],
    ]);
  });

  it('takes query defaults for events that name none', () => {
    const { events } = decodeEvents(
      Buffer.from('{"event":"x"}{"event":"y","sourcetype":"own"}'),
      { sourcetype: 'q' },
      32,
    );
    expect(events.map((e) => e.stream)).toEqual(['q', 'own']);
  });

  it('stops at the first bad envelope with its code and number', () => {
    expect(texts('{"event":1}{"nope":1}{"event":2}')).toMatchObject({ events: [{}], problem: { code: 12, at: 1 } });
    expect(texts('{"event":1}{"event":null}').problem).toMatchObject({ code: 13, at: 1 });
    expect(texts('{"event":1,"fields":{"a":{"b":1}}}').problem).toMatchObject({ code: 15, at: 0 });
    expect(texts('{"event":1,"__proto__":{"x":1}}').problem).toMatchObject({ code: 6, at: 0 });
    expect(texts(`${'{"event":'.repeat(40)}1${'}'.repeat(40)}`).problem).toMatchObject({ code: 6, at: 0 });
    expect(texts(' \n ').problem).toMatchObject({ code: 5 });
  });

  it('makes a sourcetype a stream name', () => {
    expect(['linux:auth', '_json', 'WinEventLog:Security', '::', '', 'x'.repeat(80)].map(streamOf)).toEqual([
      'linux_auth',
      'json',
      'WinEventLog_Security',
      'hec',
      'hec',
      'x'.repeat(64),
    ]);
  });

  it('reads raw text line by line with the query metadata', () => {
    const { events } = decodeRaw(Buffer.from('one\r\n\ntwo "quoted"\n'), { sourcetype: 'syslog', host: 'h' });
    expect(events.map((e) => [e.stream, JSON.parse(e.text) as unknown])).toEqual([
      ['syslog', { message: 'one', hec: { host: 'h', sourcetype: 'syslog' } }],
      ['syslog', { message: 'two "quoted"', hec: { host: 'h', sourcetype: 'syslog' } }],
    ]);
    expect(decodeRaw(Buffer.from('a\nb\u0000c\nd'), {})).toMatchObject({ events: [{}], problem: { code: 6, at: 1 } });
  });
});
