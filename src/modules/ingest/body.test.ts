import { PassThrough, Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.js';
import { bodyEncoding, readBody, type ReadBodyOptions } from './body.js';

const limits = { maxBodyBytes: 1000, maxDecodedBytes: 5000, maxEventsPerRequest: 1000 };
const opts = (over: Partial<ReadBodyOptions> = {}): ReadBodyOptions => ({
  ...limits,
  encoding: 'identity',
  admit: () => undefined,
  ...over,
});
const chunks = (...parts: (string | Buffer)[]) =>
  Readable.from(
    parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p))),
    { objectMode: false },
  );

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('bodyEncoding', () => {
  it('knows identity and gzip (x-gzip too), case-insensitively', () => {
    expect(bodyEncoding(undefined)).toBe('identity');
    expect(bodyEncoding('')).toBe('identity');
    expect(bodyEncoding('Identity')).toBe('identity');
    expect(bodyEncoding('GZIP')).toBe('gzip');
    expect(bodyEncoding('x-gzip')).toBe('gzip');
    expect(bodyEncoding('identity, gzip')).toBe('gzip');
  });

  it('refuses anything else with 415', () => {
    for (const h of ['br', 'deflate', 'gzip, gzip', 'zstd']) {
      expect(() => bodyEncoding(h)).toThrow(
        expect.objectContaining({ code: 'ingest.unsupported_encoding', status: 415 }) as Error,
      );
    }
  });
});

describe('readBody', () => {
  it('returns an empty buffer without a body', async () => {
    expect((await readBody(undefined, opts())).length).toBe(0);
  });

  it('joins the chunks of an identity body', async () => {
    const body = await readBody(chunks('{"a"', ':1}', '\n'), opts());
    expect(body.toString()).toBe('{"a":1}\n');
  });

  it('refuses a declared Content-Length over the limit before reading', async () => {
    const source = new PassThrough();
    const err = await refusal(readBody(source, opts({ contentLength: 1001 })));
    expect(err.code).toBe('request.body_too_large');
    expect(source.readableFlowing).toBeNull(); // never read
  });

  it('stops at the body limit when the length was not declared', async () => {
    const err = await refusal(readBody(chunks('x'.repeat(600), 'x'.repeat(600)), opts()));
    expect(err).toMatchObject({ code: 'request.body_too_large', status: 413, headers: { connection: 'close' } });
  });

  it('decompresses gzip and counts admitted bytes decompressed', async () => {
    const text = '{"n":1}\n'.repeat(300);
    const admitted: number[] = [];
    const body = await readBody(chunks(gzipSync(text)), opts({ encoding: 'gzip', admit: (n) => admitted.push(n) }));
    expect(body.toString()).toBe(text);
    expect(admitted.reduce((a, b) => a + b, 0)).toBe(text.length);
  });

  it('stops decompressing at the decoded limit (zip bomb)', async () => {
    const bomb = gzipSync('x'.repeat(10_000_000));
    expect(bomb.length).toBeLessThan(limits.maxBodyBytes * 20);
    let admitted = 0;
    const err = await refusal(
      readBody(chunks(bomb), {
        maxBodyBytes: 100_000,
        maxDecodedBytes: 50_000,
        maxEventsPerRequest: 1000,
        encoding: 'gzip',
        admit: (n) => (admitted += n),
      }),
    );
    expect(err.message).toMatch(/decompressed body/);
    expect(admitted).toBeLessThanOrEqual(50_000);
  });

  it('refuses more lines than the per-request event limit while it decompresses, before the rest is inflated', async () => {
    // 2,000,000 tiny NDJSON events in a few KB of gzip: the limit stops it at 1,001 lines.
    const small = gzipSync('{"a":1}\n'.repeat(2_000_000));
    let admitted = 0;
    const err = await refusal(
      readBody(chunks(small), {
        maxBodyBytes: 1_000_000,
        maxDecodedBytes: 50_000_000,
        maxEventsPerRequest: 1000,
        encoding: 'gzip',
        admit: (n) => (admitted += n),
      }),
    );
    expect(err.code).toBe('request.too_many_events');
    expect(err.status).toBe(413);
    expect(err.message).toMatch(/more than 1000 events/);
    expect(admitted).toBeLessThan(200_000);
  });

  it('counts a JSON array by its events, not its lines (pretty-printed), and a text body by its lines whatever they start with', async () => {
    const pretty = JSON.stringify(
      Array.from({ length: 10 }, (_, i) => ({ i, a: { b: [1, 2, 3] } })),
      null,
      2,
    );
    expect(pretty.split('\n').length).toBeGreaterThan(50);
    await expect(
      readBody(chunks(pretty), opts({ maxBodyBytes: 100_000, maxEventsPerRequest: 20 })),
    ).resolves.toHaveLength(pretty.length);
    const text = '[2026-11-28] a\n'.repeat(30);
    const err = await refusal(readBody(chunks(text), opts({ maxEventsPerRequest: 20, text: true })));
    expect(err.code).toBe('request.too_many_events');
  });

  it('bounds the compressed side too', async () => {
    const err = await refusal(readBody(chunks(Buffer.alloc(1500)), opts({ encoding: 'gzip' })));
    expect(err.details).toMatchObject({ measured: 'as sent' });
  });

  it('answers 400 for data that is not gzip, and for a truncated gzip body', async () => {
    expect((await refusal(readBody(chunks('{"a":1}'), opts({ encoding: 'gzip' })))).status).toBe(400);
    const full = gzipSync('{"a":1}');
    const err = await refusal(readBody(chunks(full.subarray(0, full.length - 6)), opts({ encoding: 'gzip' })));
    expect(err).toMatchObject({ code: 'request.invalid' });
  });

  it('stops when admit refuses, and answers with its error', async () => {
    const busy = new AppError('rate_limit.exceeded', { detail: 'busy' });
    const err = await refusal(
      readBody(
        chunks('a', 'b'),
        opts({
          admit: () => {
            throw busy;
          },
        }),
      ),
    );
    expect(err).toBe(busy);
  });

  it('answers 400 when the client goes away mid-body', async () => {
    const source = new PassThrough();
    const reading = readBody(source, opts());
    source.write('{"a":');
    source.destroy();
    const err = await refusal(reading);
    expect(err.message).toMatch(/ended before/);
  });
});
