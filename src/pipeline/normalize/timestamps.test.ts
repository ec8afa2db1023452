import { describe, expect, it } from 'vitest';
import { formatDatetime, parseTimestamp } from './timestamps.js';
import type { TimestampFormat } from './types.js';

const T = Date.UTC(2024, 0, 2, 3, 4, 5); // 2024-01-02T03:04:05Z
const NOW = Date.UTC(2024, 5, 15, 12, 0, 0); // syslog has no year: parsed relative to this

type Row = [input: unknown, format: TimestampFormat, expected: number | undefined];

const rows: Row[] = [
  // numbers by magnitude
  [1704164645, 'auto', T],
  [1704164645.123, 'auto', T + 123],
  [1704164645123, 'auto', T + 123],
  [1704164645123456, 'auto', T + 123],
  [1704164645123456e3, 'auto', T + 123],
  [0, 'auto', 0],
  [-86400, 'auto', -86_400_000],
  [Number.NaN, 'auto', undefined],
  [Number.POSITIVE_INFINITY, 'auto', undefined],
  // numeric text, with nanosecond precision kept by cutting digits
  ['1704164645', 'auto', T],
  ['1704164645123', 'auto', T + 123],
  ['1704164645123456', 'auto', T + 123],
  ['1704164645123456789', 'auto', T + 123],
  ['1704164645.5', 'auto', T + 500],
  [' 1704164645 ', 'auto', T],
  // explicit epoch units
  [1704164645, 'epoch_s', T],
  [1704164645000, 'epoch_ms', T],
  ['1704164645000000', 'epoch_us', T],
  ['1704164645000000000', 'epoch_ns', T],
  [5, 'epoch_ms', 5],
  ['abc', 'epoch_s', undefined],
  ['2024-01-02T03:04:05Z', 'epoch_s', undefined],
  // RFC 3339 / ISO 8601
  ['2024-01-02T03:04:05Z', 'auto', T],
  ['2024-01-02T03:04:05.678Z', 'auto', T + 678],
  ['2024-01-02T03:04:05.123456789Z', 'auto', T + 123],
  ['2024-01-02t03:04:05z', 'auto', T],
  ['2024-01-02T04:04:05+01:00', 'auto', T],
  ['2024-01-01T22:04:05-05:00', 'auto', T],
  ['2024-01-02T08:34:05+0530', 'auto', T],
  ['2024-01-02T05:04:05+02', 'auto', T],
  ['2024-01-02T03:04:05', 'auto', T],
  ['2024-01-02T03:04', 'auto', T - 5000],
  ['2024-01-02', 'auto', Date.UTC(2024, 0, 2)],
  ['2024-01-02T03:04:05,678Z', 'auto', T + 678],
  ['2016-12-31T23:59:60Z', 'auto', Date.UTC(2016, 11, 31, 23, 59, 59, 999)],
  ['2024-01-02T24:00:00Z', 'auto', Date.UTC(2024, 0, 3)],
  ['2024-01-02T03:04:05Z', 'rfc3339', T],
  ['2024-01-02T03:04:05.000001Z', 'auto', T],
  ['2024-01-02T03:04:05.999999999+00:00', 'auto', T + 999],
  ['2024-01-02T03:34:05.5+00:30', 'auto', T + 500],
  ['2024-01-02 03:04:05.120Z', 'auto', T + 120],
  ['2024-01-02T03:04:05.Z', 'auto', undefined],
  ['2024-01-02T03:04:0xZ', 'auto', undefined],
  ['2024-01-02T03:04:05+01:60', 'auto', undefined],
  ['2024-01-02T03:04:05Zjunk', 'auto', undefined],
  ['0099-01-02T03:04:05Z', 'auto', new Date('0099-01-02T03:04:05Z').getTime()], // not 1999
  // `YYYY-MM-DD HH:MM:SS[.fff]` is UTC; slashes and a trailing UTC are common vendor spellings
  ['2024-01-02 03:04:05', 'auto', T],
  ['2024-01-02 03:04:05.250', 'auto', T + 250],
  ['2024/01/02 03:04:05', 'auto', T],
  ['2024-01-02 03:04:05 UTC', 'auto', T],
  ['2024-01-02 04:04:05 +01:00', 'auto', T],
  // ISO basic and LDAP generalized time
  ['20240102T030405Z', 'auto', T],
  ['20240102T040405+0100', 'auto', T],
  ['20240102030405.0Z', 'auto', T],
  ['20240102030405Z', 'auto', T],
  // invalid dates are errors, not rolled over
  ['2024-02-30T00:00:00Z', 'auto', undefined],
  ['2023-02-29', 'auto', undefined],
  ['2024-02-29', 'auto', Date.UTC(2024, 1, 29)],
  ['2024-13-01', 'auto', undefined],
  ['2024-01-02T25:00:00Z', 'auto', undefined],
  ['2024-01-02T03:60:00Z', 'auto', undefined],
  ['2024-01-02T03:04:05+24:00', 'auto', undefined],
  // RFC 2822 and HTTP dates
  ['Tue, 02 Jan 2024 03:04:05 +0000', 'auto', T],
  ['Tue, 2 Jan 2024 04:04:05 +0100', 'auto', T],
  ['02 Jan 2024 03:04:05 GMT', 'auto', T],
  ['Tue, 02 Jan 2024 03:04 GMT', 'auto', T - 5000],
  ['Mon, 01 Jan 2024 22:04:05 EST', 'auto', T],
  ['Mon, 01 Jan 2024 19:04:05 PST', 'auto', T],
  ['Tuesday, 02-Jan-24 03:04:05 GMT', 'auto', T],
  ['Sun, 06 Nov 94 08:49:37 GMT', 'auto', Date.UTC(1994, 10, 6, 8, 49, 37)],
  ['Tue Jan  2 03:04:05 2024', 'auto', T],
  ['Tue Jan  2 03:04:05 UTC 2024', 'auto', T],
  ['Tue, 02 Jan 2024 03:04:05 XYZ', 'auto', undefined],
  ['Tue, 02 Foo 2024 03:04:05 GMT', 'auto', undefined],
  ['Tue, 02 Jan 2024 03:04:05 +0000', 'rfc2822', T],
  ['2024-01-02T03:04:05Z', 'rfc2822', undefined],
  // Common Log Format
  ['02/Jan/2024:03:04:05 +0000', 'auto', T],
  ['[02/Jan/2024:04:04:05 +0100]', 'auto', T],
  ['02/Jan/2024:03:04:05.5 +0000', 'clf', T + 500],
  ['02/Jan/2024:03:04:05', 'clf', undefined],
  // syslog (RFC 3164): this year, or last year when that would be over a day ahead
  ['Jan  2 03:04:05', 'auto', T],
  ['Jan 2 03:04:05', 'syslog', T],
  ['Jun 16 11:00:00', 'auto', Date.UTC(2024, 5, 16, 11)],
  ['Jun 17 12:00:01', 'auto', Date.UTC(2023, 5, 17, 12, 0, 1)],
  ['Dec 31 23:59:59.250', 'auto', Date.UTC(2023, 11, 31, 23, 59, 59, 250)],
  ['Feb 30 00:00:00', 'auto', undefined],
  // with a year, as Cisco ASA writes it: the year as written, even far from now
  ['Jan 02 2024 03:04:05', 'auto', T],
  ['Jan 02 2019 03:04:05.120', 'syslog', Date.UTC(2019, 0, 2, 3, 4, 5, 120)],
  ['Feb 29 2023 00:00:00', 'syslog', undefined],
  // Microsoft JSON dates and Windows FILETIME
  ['/Date(1704164645000)/', 'auto', T],
  ['/Date(1704164645000+0100)/', 'auto', T],
  ['133486382450000000', 'filetime', T],
  [133486382450000000, 'filetime', T],
  ['-5', 'filetime', undefined],
  // not timestamps
  ['yesterday', 'auto', undefined],
  ['', 'auto', undefined],
  ['   ', 'auto', undefined],
  [true, 'auto', undefined],
  [null, 'auto', undefined],
  [{ t: 1 }, 'auto', undefined],
  ['9'.repeat(80), 'auto', undefined],
  [1e30, 'auto', undefined],
];

describe('parseTimestamp', () => {
  it.each(rows)('%j (%s)', (input, format, expected) => {
    expect(parseTimestamp(input, format, NOW)).toBe(expected);
  });

  it('defaults to auto and the current time for syslog', () => {
    expect(parseTimestamp('2024-01-02T03:04:05Z')).toBe(T);
    const now = new Date();
    const text = `${now.toUTCString().slice(8, 11)} ${String(now.getUTCDate()).padStart(2, ' ')} 00:00:00`;
    expect(parseTimestamp(text)).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  });

  it('formats datetime_t text in UTC', () => {
    expect(formatDatetime(T + 5)).toBe('2024-01-02T03:04:05.005Z');
  });
});
