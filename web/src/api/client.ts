// The console's one API client: openapi-fetch over the types generated from Weir's own
// OpenAPI document (scripts/console-api.ts), with the session cookie. Every call goes
// through `call()`, which returns the body or throws an ApiError carrying the API's `detail`.
import createClient, { type Middleware } from 'openapi-fetch';
import type { operations, paths } from './schema';

export type { paths };

type Success<R> = 200 extends keyof R ? R[200] : 201 extends keyof R ? R[201] : 202 extends keyof R ? R[202] : never;
/** The JSON body of an operation's success answer, by operationId: `Ok<'auth.status'>`. */
export type Ok<Op extends keyof operations> =
  Success<operations[Op]['responses']> extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON request body of an operation, by operationId. */
export type In<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly code?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(detail);
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();
/** Called when a call answers 401: the session ended (expired, revoked, signed out elsewhere). */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

const sessionWatch: Middleware = {
  onResponse({ response, request }) {
    if (response.status === 401 && !new URL(request.url).pathname.startsWith('/api/auth/login')) {
      for (const l of unauthorizedListeners) l();
    }
    return undefined;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });
api.use(sessionWatch);

interface ErrorBody {
  detail?: unknown;
  error?: { code?: string; details?: Record<string, unknown> };
}

/** The body of a successful answer, or an ApiError with the API's `detail`. */
export async function call<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await pending;
  } catch (err) {
    throw new ApiError(0, `The server could not be reached (${err instanceof Error ? err.message : String(err)})`);
  }
  const { data, error, response } = result;
  if (response.ok) return data as T;
  const body = (error ?? {}) as ErrorBody;
  const detail = typeof body.detail === 'string' ? body.detail : `${response.status} ${response.statusText}`;
  throw new ApiError(response.status, detail, body.error?.code, body.error?.details);
}

/** Like call(), with the answer's headers (listings that count in X-Total-Count). */
export async function callWithHeaders<T>(
  pending: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<{ data: T; headers: Headers }> {
  let headers: Headers | undefined;
  const data = await call(pending.then((r) => ((headers = r.response.headers), r)));
  return { data, headers: headers ?? new Headers() };
}

/** Text answers (CSV, NDJSON) and downloads: same-origin fetch with the session cookie. */
export async function fetchText(path: string, init?: RequestInit): Promise<string> {
  const response = await fetch(path, { credentials: 'same-origin', ...init });
  const text = await response.text();
  if (!response.ok) {
    let detail = `${response.status} ${response.statusText}`;
    try {
      const body = JSON.parse(text) as ErrorBody;
      if (typeof body.detail === 'string') detail = body.detail;
    } catch {
      // not JSON: keep the status line
    }
    throw new ApiError(response.status, detail);
  }
  return text;
}
