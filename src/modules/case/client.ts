// The DFIR-IRIS REST client (API v2.0.x, docs.dfir-iris.org): Bearer API key, answers in the
// envelope {status, message, data}. Every call goes through the vendor HTTP client of the
// connectors, so the SSRF guard applies on each connection, with a timeout per request and
// the key stripped from any error text. One attempt per call: a probe or a sync that waits
// through retries is worse than a clear "down" the caller can retry.
import { createVendorHttp, type VendorResponse } from '../../connectors/http.js';
import { createRedactor } from '../../core/redaction.js';
import { VendorError } from '../../connectors/sdk.js';
import type { NetPolicy } from '../../platform/net/policy.js';

export interface IrisCustomer {
  id: string;
  name: string;
}

export interface IrisVersions {
  iris: string | null;
  api: string | null;
}

export interface CaseClientOptions {
  url: string;
  apiKey: string;
  timeoutMs: number;
  net: NetPolicy;
}

/** The message of a failed call, fit for a response (the key is never in it). */
export class CaseSystemError extends Error {}

interface Envelope {
  status?: unknown;
  message?: unknown;
  data?: unknown;
}

const MAX_NAME = 200;

function customerOf(v: unknown): IrisCustomer | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  const id = r.customer_id;
  const name = r.customer_name;
  if ((typeof id !== 'number' && typeof id !== 'string') || typeof name !== 'string') return undefined;
  return { id: String(id), name: name.slice(0, MAX_NAME) };
}

export function createIrisClient(options: CaseClientOptions) {
  // IRIS's own text goes into answers and logs: a server that echoes the request's
  // Authorization header must not disclose the key through it.
  const redact = createRedactor([options.apiKey]);
  const base = options.url.replace(/\/+$/, '');
  const host = new URL(base).host;

  async function call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    accept: number[] = [],
  ): Promise<{ status: number; envelope: Envelope }> {
    const http = createVendorHttp({
      net: options.net,
      signal: new AbortController().signal,
      requestTimeoutMs: options.timeoutMs,
      maxRetryWaitMs: 0,
      attempts: 1,
      secrets: () => [options.apiKey],
    });
    let res: VendorResponse;
    try {
      res = await http.request({
        method,
        url: `${base}${path}`,
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        accept,
      });
    } catch (err) {
      if (err instanceof VendorError) {
        const why = err.kind === 'auth' ? `${err.message}; check WEIR_CASE_API_KEY` : err.message;
        throw new CaseSystemError(why);
      }
      throw err;
    } finally {
      await http.close().catch(() => undefined);
    }
    let envelope: Envelope;
    try {
      envelope = res.json<Envelope>() ?? {};
    } catch (err) {
      throw new CaseSystemError(err instanceof Error ? err.message : `${host}: the answer is not JSON`);
    }
    if (typeof envelope !== 'object' || envelope === null)
      throw new CaseSystemError(`${host}: the answer is not an IRIS envelope`);
    return { status: res.status, envelope };
  }

  const success = (e: Envelope) => e.status === 'success';

  return {
    system: 'dfir-iris' as const,
    host,

    /** GET /api/ping: answers "pong" when the server and the key are good. */
    async ping(): Promise<void> {
      const { envelope } = await call('GET', '/api/ping');
      if (!success(envelope))
        throw new CaseSystemError(`${host}: ping answered ${String(envelope.status ?? 'no status')}`);
    },

    /** GET /api/versions: the IRIS and API versions. */
    async versions(): Promise<IrisVersions> {
      const { envelope } = await call('GET', '/api/versions');
      const d = (envelope.data ?? {}) as Record<string, unknown>;
      const text = (v: unknown) => (typeof v === 'string' && v.length <= 50 ? v : null);
      return { iris: text(d.iris_current), api: text(d.api_current) };
    },

    /** GET /manage/customers/{id}: the customer, or undefined when IRIS does not know the id. */
    async customer(id: string): Promise<IrisCustomer | undefined> {
      if (!/^\d{1,10}$/.test(id)) return undefined; // IRIS ids are integers: another value names nothing there
      const { status, envelope } = await call('GET', `/manage/customers/${id}`, undefined, [400, 404]);
      if (status === 400 || status === 404 || !success(envelope)) return undefined;
      return customerOf(envelope.data);
    },

    /** GET /manage/customers/list. */
    async customers(): Promise<IrisCustomer[]> {
      const { envelope } = await call('GET', '/manage/customers/list');
      if (!success(envelope) || !Array.isArray(envelope.data))
        throw new CaseSystemError(`${host}: the customer list is not a list`);
      return envelope.data.map(customerOf).filter((c): c is IrisCustomer => c !== undefined);
    },

    /** POST /manage/customers/add. */
    async addCustomer(name: string, description: string): Promise<IrisCustomer> {
      const { status, envelope } = await call(
        'POST',
        '/manage/customers/add',
        { customer_name: name, customer_description: description, customer_sla: '', custom_attributes: {} },
        [400],
      );
      const created = success(envelope) ? customerOf(envelope.data) : undefined;
      if (status === 400 || !created) {
        const reason =
          typeof envelope.message === 'string' && envelope.message
            ? redact(envelope.message).slice(0, 200)
            : `HTTP ${status}`;
        const fields =
          envelope.data && typeof envelope.data === 'object'
            ? ` ${redact(JSON.stringify(envelope.data)).slice(0, 300)}`
            : '';
        throw new CaseSystemError(`${host}: IRIS refused to add customer "${name}": ${reason}${fields}`);
      }
      return created;
    },

    /** POST /manage/cases/add: a case for the customer; its id. */
    async addCase(input: {
      customerId: string;
      name: string;
      description: string;
      socId: string;
    }): Promise<{ id: string }> {
      const { status, envelope } = await call(
        'POST',
        '/manage/cases/add',
        {
          case_soc_id: input.socId,
          case_customer: Number(input.customerId),
          case_name: input.name,
          case_description: input.description,
          custom_attributes: {},
        },
        [400],
      );
      const data = (envelope.data ?? {}) as Record<string, unknown>;
      const id = data.case_id;
      if (status === 400 || !success(envelope) || (typeof id !== 'number' && typeof id !== 'string')) {
        const reason =
          typeof envelope.message === 'string' && envelope.message
            ? redact(envelope.message).slice(0, 200)
            : `HTTP ${status}`;
        throw new CaseSystemError(`${host}: IRIS refused to add the case: ${reason}`);
      }
      return { id: String(id) };
    },
  };
}

export type IrisClient = ReturnType<typeof createIrisClient>;
