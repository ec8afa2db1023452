// The command line's side of the HTTP API: base URL and token from flags or the
// environment, JSON in and out, the API's `detail` on errors. The token is sent and never
// printed: error texts are built from the status and the API's own words only.
export const DEFAULT_URL = 'http://127.0.0.1:8080';

export interface Connection {
  url: string;
  token: string;
}

/** A failure the command reports as `weir: <message>` and exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export function connection(flags: { url?: string; token?: string }, env: NodeJS.ProcessEnv): Connection {
  const url = (flags.url ?? env.WEIR_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`--url is not a URL: ${url}`, 2);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new CliError('--url must be http:// or https://', 2);
  const token = flags.token ?? env.WEIR_TOKEN;
  if (!token) throw new CliError('an API token is needed: --token or WEIR_TOKEN', 2);
  return { url, token };
}

export interface ApiAnswer {
  status: number;
  json: unknown;
}

/** The API's `detail` (or the status) of an error answer. */
export function detailOf(answer: ApiAnswer): string {
  const d = (answer.json as { detail?: unknown } | null)?.detail;
  return typeof d === 'string' && d ? `${d} (HTTP ${answer.status})` : `HTTP ${answer.status}`;
}

export async function request(
  c: Connection,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<Response> {
  try {
    return await fetch(`${c.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${c.token}`,
        accept: 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new CliError(`cannot reach ${c.url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
}

export async function jsonRequest(
  c: Connection,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<ApiAnswer> {
  const res = await request(c, method, path, body);
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: res.status, json };
}
