import { describe, expect, it } from 'vitest';
import { COMPRESS_FROM_BYTES, decodePayload, encodePayload } from './payload-codec.js';

const roundTrip = async (value: unknown) => {
  const e = await encodePayload(value);
  return decodePayload(JSON.parse(e.json), e.gz);
};

describe('queue payload codec', () => {
  it('keeps small payloads as readable JSON', async () => {
    const e = await encodePayload({ a: 1, events: ['{"x":1}'] });
    expect(e).toEqual({ json: '{"a":1,"events":["{\\"x\\":1}"]}', gz: null });
  });

  it('carries a large batch of one-line texts as lines, unescaped, and gives back the same payload', async () => {
    const events = Array.from({ length: 500 }, (_, i) =>
      JSON.stringify({ i, text: `é "quoted" \\ ${'x'.repeat(60)}`, emoji: '🙂' }),
    );
    const value = { id: 'b', organization_id: 1, ids: events.map((_, i) => `e${i}`), events };
    const e = await encodePayload(value);
    expect(e.json).toBe('null');
    const { gunzipSync } = await import('node:zlib');
    const text = gunzipSync(e.gz!).toString('utf8');
    expect(text.split('\n')).toHaveLength(501);
    expect(text.split('\n')[1]).toBe(events[0]); // as it is, not a JSON string of it
    expect(await roundTrip(value)).toEqual(value);
  });

  it('falls back to JSON when an element is not a one-line string, and reads it back', async () => {
    const big = 'y'.repeat(COMPRESS_FROM_BYTES);
    for (const value of [{ events: [`{"a":"${big}"}`, 'two\nlines'] }, { events: [{ obj: big }] }, { other: big }]) {
      const e = await encodePayload(value);
      expect(e.gz).not.toBeNull();
      expect(await roundTrip(value)).toEqual(value);
    }
  });
});
