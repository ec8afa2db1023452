// A DFIR-IRIS simulator, written from IRIS's public API reference (docs.dfir-iris.org, API
// v2.0.x) and its REST routes: every request carries `Authorization: Bearer <API key>`
// (401 otherwise); every answer is the envelope {status: "success"|"error", message, data}.
//   GET  /api/ping                 -> message "pong", data []
//   GET  /api/versions             -> data {iris_current, api_min, api_current}
//   GET  /manage/customers/list    -> data [{customer_id, customer_name, customer_description, customer_uuid}]
//   GET  /manage/customers/{id}    -> data {customer_id, customer_name, ...}; an unknown id is 400 "Invalid Customer ID"
//   POST /manage/customers/add     -> body {customer_name, customer_description?, customer_sla?, custom_attributes?};
//                                     data: the customer; a blank or taken name (case-insensitive) is 400 with
//                                     data {customer_name: [reason]}
//   POST /manage/cases/add         -> body {case_soc_id, case_customer (a customer id), case_name, case_description,
//                                     custom_attributes?}; data: the case {case_id, case_uuid, case_name, ...};
//                                     a missing field or an unknown customer is 400 with data {field: [reason]}
// Switches for the tests: down() answers 503 to everything, hang() never answers.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface IrisCustomer {
  customer_id: number;
  customer_name: string;
  customer_description: string;
  customer_uuid: string;
}

export interface IrisSimulator {
  readonly url: string;
  readonly apiKey: string;
  readonly customers: IrisCustomer[];
  /** Requests received, as "METHOD /path". */
  readonly requests: string[];
  /** Authorization headers received, to check what was sent. */
  readonly authorizations: string[];
  addCustomer(name: string): IrisCustomer;
  /** Cases added through the API. */
  readonly cases: {
    case_id: number;
    case_uuid: string;
    case_name: string;
    case_description: string;
    case_customer: number;
    case_soc_id: string;
  }[];
  down(on?: boolean): void;
  hang(on?: boolean): void;
  close(): Promise<void>;
}

export const IRIS_VERSION = 'v2.4.20';

export async function startIrisSimulator(options: { apiKey?: string } = {}): Promise<IrisSimulator> {
  const apiKey = options.apiKey ?? `iris-${randomUUID()}`;
  const customers: IrisCustomer[] = [];
  const cases: IrisSimulator['cases'][number][] = [];
  const requests: string[] = [];
  const authorizations: string[] = [];
  let nextId = 1;
  let isDown = false;
  let hanging = false;

  const add = (name: string, description = ''): IrisCustomer => {
    const c = {
      customer_id: nextId++,
      customer_name: name,
      customer_description: description,
      customer_uuid: randomUUID(),
    };
    customers.push(c);
    return c;
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const ok = (res: ServerResponse, data: unknown, message = '') => send(res, 200, { status: 'success', message, data });
  const error = (res: ServerResponse, message: string, data: unknown = [], status = 400) =>
    send(res, status, { status: 'error', message, data });

  async function body(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return text ? JSON.parse(text) : undefined;
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://iris');
    requests.push(`${req.method} ${url.pathname}`);
    authorizations.push(req.headers.authorization ?? '');
    if (hanging) return; // the client's timeout must end it
    if (isDown) return send(res, 503, { status: 'error', message: 'Service Unavailable', data: [] });
    if (req.headers.authorization !== `Bearer ${apiKey}`) return error(res, 'Authentication required', [], 401);
    void (async () => {
      const path = url.pathname;
      if (req.method === 'GET' && path === '/api/ping') return ok(res, [], 'pong');
      if (req.method === 'GET' && path === '/api/versions')
        return ok(res, { iris_current: IRIS_VERSION, api_min: '2.0.0', api_current: '2.0.5' });
      if (req.method === 'GET' && path === '/manage/customers/list') return ok(res, customers);
      const one = /^\/manage\/customers\/(\d+)$/.exec(path);
      if (req.method === 'GET' && one) {
        const c = customers.find((x) => x.customer_id === Number(one[1]));
        return c ? ok(res, c) : error(res, 'Invalid Customer ID');
      }
      if (req.method === 'POST' && path === '/manage/cases/add') {
        if (!String(req.headers['content-type'] ?? '').includes('application/json'))
          return error(res, 'Invalid request');
        const b = ((await body(req)) ?? {}) as Record<string, unknown>;
        const problems: Record<string, string[]> = {};
        for (const f of ['case_soc_id', 'case_name', 'case_description'])
          if (typeof b[f] !== 'string' || !(b[f] as string).trim()) problems[f] = ['Missing data for required field.'];
        if (!customers.some((c) => c.customer_id === b.case_customer)) problems.case_customer = ['Invalid customer ID'];
        if (Object.keys(problems).length) return error(res, 'Data error', problems);
        const made = {
          case_id: cases.length + 1,
          case_uuid: randomUUID(),
          case_name: `#${cases.length + 1} - ${String(b.case_name)}`,
          case_description: String(b.case_description),
          case_customer: b.case_customer as number,
          case_soc_id: String(b.case_soc_id),
        };
        cases.push(made);
        return ok(res, made, 'Case created');
      }
      if (req.method === 'POST' && path === '/manage/customers/add') {
        if (!String(req.headers['content-type'] ?? '').includes('application/json'))
          return error(res, 'Invalid request');
        const b = (await body(req)) as { customer_name?: unknown; customer_description?: unknown } | undefined;
        const name = typeof b?.customer_name === 'string' ? b.customer_name.trim() : '';
        if (!name) return error(res, 'Error adding customer', { customer_name: ['Missing data for required field.'] });
        if (customers.some((c) => c.customer_name.toLowerCase() === name.toLowerCase())) {
          return error(res, 'Error adding customer', { customer_name: ['Customer already exists'] });
        }
        return ok(
          res,
          add(name, typeof b?.customer_description === 'string' ? b.customer_description : ''),
          'Added successfully',
        );
      }
      return error(res, 'Not found', [], 404);
    })().catch(() => error(res, 'Invalid request'));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    customers,
    cases,
    requests,
    authorizations,
    addCustomer: (name) => add(name),
    down: (on = true) => void (isDown = on),
    hang: (on = true) => void (hanging = on),
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
