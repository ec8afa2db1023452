// `weir tap <destination_id>`: follows the destination's live masked tap
// (GET /api/collectors/destinations/{id}/tap, NDJSON) and prints each line as it comes. A tap
// session lasts at most 60 s on the server, so the command opens the next one when a session
// ends, until Ctrl-C (exit 0), --limit lines, or --once.
import { CliError, detailOf, request, type Connection } from './api.js';

export interface TapOptions {
  seconds: number;
  limit?: number;
  once: boolean;
}

export async function tap(
  c: Connection,
  destinationId: string,
  opts: TapOptions,
  out: (line: string) => void,
  signal: AbortSignal,
): Promise<number> {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(destinationId)) throw new CliError(`not a destination id: "${destinationId}"`, 2);
  let printed = 0;
  for (;;) {
    const left = opts.limit === undefined ? 1000 : Math.min(1000, opts.limit - printed);
    const path = `/api/collectors/destinations/${encodeURIComponent(destinationId)}/tap?seconds=${opts.seconds}&limit=${left}`;
    let res: Response;
    try {
      res = await request(c, 'GET', path, undefined, signal);
    } catch (err) {
      if (signal.aborted) return 0;
      throw err;
    }
    if (res.status !== 200) {
      const text = await res.text();
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {
        /* not JSON: the status says it */
      }
      throw new CliError(detailOf({ status: res.status, json }));
    }
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let i;
        while ((i = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, i).trim();
          buffer = buffer.slice(i + 1);
          if (!line) continue;
          out(line);
          printed += 1;
          if (opts.limit !== undefined && printed >= opts.limit) return 0;
        }
      }
    } catch (err) {
      if (signal.aborted) return 0;
      throw new CliError(`the tap stream broke: ${(err as Error).message}`);
    }
    if (signal.aborted || opts.once) return 0;
  }
}
