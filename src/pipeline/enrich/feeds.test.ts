import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guarded, loopbackAllowed, startTestServer, type TestServer } from '../../../test/support/enrich-server.js';
import { fetchFeed, parseFeed, validateFeedConfig, type FeedConfig } from './feeds.js';

const lines = (text: string) => parseFeed(text, { url: 'https://x/feed', format: 'lines' });

describe('validateFeedConfig', () => {
  it('accepts a feed and names what is wrong', () => {
    expect(
      validateFeedConfig({
        url: 'https://feeds.example.com/ips.txt',
        format: 'auto',
        interval_minutes: 5,
        max_bytes: 1024,
      }),
    ).toEqual([]);
    expect(
      validateFeedConfig({ url: 'file:///etc/passwd', format: 'xml', interval_minutes: 4, max_bytes: 0 }).map(
        (i) => i.at,
      ),
    ).toEqual(['url', 'format', 'interval_minutes', 'max_bytes']);
    expect(validateFeedConfig({ url: 'https://x/', format: 'lines', indicator_column: 'ip' }).map((i) => i.at)).toEqual(
      ['indicator_column'],
    );
  });
});

describe('parseFeed', () => {
  it('reads a newline list: comments, blank lines and trailing comments skipped, each indicator typed', () => {
    const r = lines(
      '\uFEFF# blocklist\n; generated\n\n198.51.100.7\n10.0.0.0/8  # whole range\n2001:db8::1 ; v6\n  \n198.51.100.8\tscanner\n',
    );
    expect(r.skipped).toBe(0);
    expect(r.data).toEqual({
      key_column: 'indicator',
      match: 'cidr',
      columns: ['indicator', 'type'],
      rows: [
        { indicator: '198.51.100.7', type: 'ipv4' },
        { indicator: '10.0.0.0/8', type: 'cidr' },
        { indicator: '2001:db8::1', type: 'ipv6' },
        { indicator: '198.51.100.8', type: 'ipv4' },
      ],
    });
  });

  it('matches case-insensitively once a list holds more than IPs, and counts what it skipped', () => {
    const r = lines(
      'evil.example.com\n198.51.100.7\nEVIL.example.com\nnot an indicator\nd41d8cd98f00b204e9800998ecf8427e\n',
    );
    expect(r.data.match).toBe('case_insensitive');
    expect(r.data.rows.map((row) => row.type)).toEqual(['domain', 'ipv4', 'md5']);
    expect(r.skipped).toBe(2);
    expect(r.problems).toEqual(['line 3: repeats "EVIL.example.com"', 'line 4: not an indicator: "not"']);
  });

  it('reads a CSV feed: the indicator column, the other columns kept, names kept apart from indicator and type', () => {
    const config: FeedConfig = { url: 'https://x/', format: 'csv', indicator_column: 'ioc' };
    const r = parseFeed(
      'first_seen,ioc,type,note\n2026-01-01,evil.example.com,c2,"a, b"\n2026-01-02,198.51.100.7,scanner,\nbad,row\n',
      config,
    );
    expect(r.data.columns).toEqual(['indicator', 'type', 'first_seen', 'type_2', 'note']);
    expect(r.data.rows).toEqual([
      { indicator: 'evil.example.com', type: 'domain', first_seen: '2026-01-01', type_2: 'c2', note: 'a, b' },
      { indicator: '198.51.100.7', type: 'ipv4', first_seen: '2026-01-02', type_2: 'scanner', note: null },
    ]);
    expect(r.data.match).toBe('case_insensitive');
    expect(r.skipped).toBe(1);
    expect(r.problems[0]).toMatch(/^line 4: 2 fields/);
  });

  it('auto-detects CSV and finds a header commented out above the data', () => {
    const text =
      '# abuse feed\n# id,dateadded,url,threat\n"1","2026-01-01","http://evil.example.com/x.exe","malware_download"\n';
    const r = parseFeed(text, { url: 'https://x/', format: 'auto', indicator_column: 'url' });
    expect(r.data.rows).toEqual([
      {
        indicator: 'http://evil.example.com/x.exe',
        type: 'url',
        id: '1',
        dateadded: '2026-01-01',
        threat: 'malware_download',
      },
    ]);
    expect(parseFeed('a,b\n198.51.100.7,x\n', { url: 'https://x/', format: 'auto' }).data.rows).toEqual([
      { indicator: '198.51.100.7', type: 'ipv4', b: 'x' },
    ]);
    expect(parseFeed('198.51.100.7\n', { url: 'https://x/', format: 'auto' }).data.match).toBe('cidr');
  });

  it('says so when the indicator column is missing', () => {
    const r = parseFeed('a,b\n1,2\n', { url: 'https://x/', format: 'csv', indicator_column: 'ioc' });
    expect(r.data.rows).toEqual([]);
    expect(r.problems).toEqual(['no column named "ioc" in the header (a, b)']);
  });
});

describe('fetchFeed', () => {
  let server: TestServer;
  const secret = 'feed-t0ken-abcdef';
  const body = '# ips\n198.51.100.7\n198.51.100.8\n';
  beforeAll(async () => {
    server = await startTestServer((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' }); // chunked: no length to refuse up front
        for (let i = 0; i < 64; i++) res.write(`${'1.2.3.4\n'.repeat(128)}`);
        return res.end();
      }
      if (req.url === '/broken') {
        res.writeHead(500, { 'content-type': 'text/plain' });
        return res.end(`upstream failed for ${req.headers.authorization}`);
      }
      if (req.headers['if-none-match'] === '"v1"') {
        res.writeHead(304);
        return res.end();
      }
      res.writeHead(200, {
        'content-type': 'text/plain',
        etag: '"v1"',
        'last-modified': 'Thu, 01 Jan 2026 00:00:00 GMT',
      });
      res.end(body);
    });
  });
  afterAll(() => server.close());
  const deps = { ...loopbackAllowed, now: () => Date.parse('2026-01-02T00:00:00Z') };
  const config = (path: string, over: Partial<FeedConfig> = {}): FeedConfig => ({
    url: `${server.url}${path}`,
    format: 'lines',
    ...over,
  });

  it('fetches a lines feed with the credential, and parses it', async () => {
    const r = await fetchFeed(config('/ips.txt'), { header: 'Authorization', value: `Bearer ${secret}` }, deps);
    expect(r).toEqual({
      ok: true,
      text: body,
      bytes: body.length,
      etag: '"v1"',
      last_modified: 'Thu, 01 Jan 2026 00:00:00 GMT',
      fetched_at: '2026-01-02T00:00:00.000Z',
    });
    expect(server.seen.at(-1)!.headers.authorization).toBe(`Bearer ${secret}`);
    if (r.ok && !r.not_modified) expect(parseFeed(r.text, config('/ips.txt')).data.rows).toHaveLength(2);
  });

  it('asks conditionally and answers not_modified on 304', async () => {
    const r = await fetchFeed(config('/ips.txt'), null, deps, {
      etag: '"v1"',
      last_modified: 'Thu, 01 Jan 2026 00:00:00 GMT',
    });
    expect(r).toEqual({ ok: true, not_modified: true, fetched_at: '2026-01-02T00:00:00.000Z' });
    expect(server.seen.at(-1)!.headers['if-modified-since']).toBe('Thu, 01 Jan 2026 00:00:00 GMT');
  });

  it('stops past max_bytes with a clear error', async () => {
    const r = await fetchFeed(config('/big', { max_bytes: 10_000 }), null, deps);
    expect(r).toEqual({
      ok: false,
      error: 'the feed is larger than max_bytes (10000 bytes): the download was stopped',
    });
  });

  it('reports a 500 without quoting the answer (nor the credential it echoed)', async () => {
    const r = await fetchFeed(config('/broken'), { header: 'Authorization', value: secret }, deps);
    expect(r).toEqual({ ok: false, status: 500, error: 'HTTP 500' });
  });

  it('times out, and refuses loopback without the allowance', async () => {
    const silent = await startTestServer(() => undefined);
    try {
      const r = await fetchFeed({ url: `${silent.url}/feed`, format: 'lines' }, null, { ...deps, timeoutMs: 200 });
      expect(r).toEqual({ ok: false, error: 'no answer within the time limit' });
    } finally {
      await silent.close();
    }
    const before = server.seen.length;
    const refused = await fetchFeed(config('/ips.txt'), null, { ...guarded, now: deps.now });
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error).toMatch(/refused to connect to 127\.0\.0\.1: loopback address/);
    expect(server.seen.length).toBe(before);
  });
});
