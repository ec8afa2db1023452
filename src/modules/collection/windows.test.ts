import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../connectors/sdk.js';
import { backoffMs, encodeDateCursor, intervalMs, parseDateCursor, planWindow, redact } from './windows.js';

const spec = { defaultWindowMs: HOUR_MS, retentionDays: 7, maxWindowMs: 6 * HOUR_MS, settleMs: 2 * MINUTE_MS };
const now = new Date('2026-03-01T12:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);

describe('planWindow', () => {
  it('starts a first run (or a reset) at now - defaultWindow and ends at now - settle', () => {
    expect(planWindow(spec, { cursor: null, watermark_at: null }, now)).toEqual({
      from: ago(HOUR_MS),
      to: ago(2 * MINUTE_MS),
      page: null,
    });
  });

  it('continues from the watermark, at most maxWindow at a time', () => {
    expect(planWindow(spec, { cursor: null, watermark_at: ago(2 * DAY_MS) }, now)).toEqual({
      from: ago(2 * DAY_MS),
      to: ago(2 * DAY_MS - 6 * HOUR_MS),
      page: null,
    });
  });

  it('is caught up when nothing older than now - settle is left', () => {
    expect(planWindow(spec, { cursor: null, watermark_at: ago(MINUTE_MS) }, now)).toBeNull();
    expect(planWindow(spec, { cursor: null, watermark_at: ago(2 * MINUTE_MS) }, now)).toBeNull();
  });

  it('resumes an open window with its page token', () => {
    const cursor = encodeDateCursor(ago(3 * HOUR_MS), ago(2 * HOUR_MS), 'p2');
    expect(planWindow(spec, { cursor, watermark_at: ago(3 * HOUR_MS) }, now)).toEqual({
      from: ago(3 * HOUR_MS),
      to: ago(2 * HOUR_MS),
      page: 'p2',
    });
  });

  it('records a gap and starts at the retention limit when the watermark is older than the retention', () => {
    const plan = planWindow(spec, { cursor: null, watermark_at: ago(10 * DAY_MS) }, now);
    expect(plan).toEqual({
      from: ago(7 * DAY_MS),
      to: ago(7 * DAY_MS - 6 * HOUR_MS),
      page: null,
      gap: { from: ago(10 * DAY_MS), to: ago(7 * DAY_MS) },
    });
    const open = encodeDateCursor(ago(9 * DAY_MS), ago(8 * DAY_MS), 'p5');
    expect(planWindow(spec, { cursor: open, watermark_at: ago(9 * DAY_MS) }, now)?.gap).toEqual({
      from: ago(9 * DAY_MS),
      to: ago(7 * DAY_MS),
    });
  });

  it('treats an unreadable cursor as none', () => {
    expect(parseDateCursor('not json')).toBeNull();
    expect(parseDateCursor('{"from":"x","to":"y"}')).toBeNull();
    expect(parseDateCursor(encodeDateCursor(ago(1), now, null))).toEqual({
      from: ago(1).toISOString(),
      to: now.toISOString(),
      page: null,
    });
  });
});

describe('backoff, interval, redaction', () => {
  it('doubles from 30 s up to an hour, and takes the vendor Retry-After when given', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n))).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(backoffMs(30)).toBe(HOUR_MS);
    expect(backoffMs(1, 7_200_000)).toBe(7_200_000);
  });

  it('takes the integration interval, else the stream one, else the default', () => {
    expect(intervalMs({ interval_seconds: 120 }, { intervalMs: 60_000 }, 300)).toBe(120_000);
    expect(intervalMs({}, { intervalMs: 60_000 }, 300)).toBe(60_000);
    expect(intervalMs({}, { intervalMs: 0 }, 300)).toBe(300_000);
  });

  it('strips secret values from messages', () => {
    expect(redact('token sekret-123 refused', ['sekret-123'])).toBe('token [redacted] refused');
  });
});
