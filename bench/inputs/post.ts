// What the HTTP input benches share (not a bench itself: it exports no InputBench): the
// events cut into requests of `batch`, and a POST resent while the input says "retry later".

/** Hands the events to `send` in slices of `batch`, one after the other. */
export async function eachBatch<T>(
  events: readonly T[],
  batch: number,
  send: (slice: readonly T[]) => Promise<void>,
): Promise<void> {
  for (let i = 0; i < events.length; i += batch) await send(events.slice(i, i + batch));
}

/**
 * POSTs `body` until it is answered 200: 429 and 503 (an HTTP input's "retry later") are
 * sent again after their Retry-After (0.1 to 5 s, 1 s when absent), `maxAttempts` times at
 * most; any other answer throws, named `what`, with the start of its body.
 */
export async function postRetrying(
  what: string,
  url: string,
  headers: Record<string, string>,
  body: string | Uint8Array,
  maxAttempts = 60,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, { method: 'POST', headers, body });
    const answer = Buffer.from(await res.arrayBuffer());
    if (res.status === 200) return;
    if ((res.status !== 429 && res.status !== 503) || attempt >= maxAttempts)
      throw new Error(`${what} answered ${res.status}: ${answer.toString('latin1').slice(0, 300)}`);
    const wait = Number(res.headers.get('retry-after') ?? '1');
    await new Promise((r) => setTimeout(r, Math.max(0.1, Math.min(wait, 5)) * 1000));
  }
}
