// Connector test helpers: contexts against a simulator (closed after each test), the
// VendorError a call rejects with, and a connector driven through a whole window the way the
// engine does, page by page (every event and key and the number of pages).
import { expect } from 'vitest';
import { createNetPolicy } from '../../../src/platform/net/ssrf.js';
import { createConnectorRuntime } from '../../../src/connectors/runtime.js';
import { VendorError, type Connector, type ConnectorContext } from '../../../src/connectors/sdk.js';

const MIN = 60_000;

export function testRuntime(options: { maxRetryWaitMs?: number; requestTimeoutMs?: number } = {}) {
  return createConnectorRuntime({
    net: createNetPolicy({ allowCidrs: ['127.0.0.0/8', '::1/128'] }),
    requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
    maxRetryWaitMs: options.maxRetryWaitMs ?? 5_000,
  });
}

/** A context for one integration config (secrets are the string values of `secrets`). */
export function testContext(
  config: Record<string, unknown>,
  options: { key?: string; tenantId?: string | null; maxRetryWaitMs?: number; secrets?: string[] } = {},
) {
  const runtime = testRuntime({ maxRetryWaitMs: options.maxRetryWaitMs });
  const controller = new AbortController();
  const open = runtime.open(
    { key: options.key ?? 'test', config, secrets: options.secrets ?? [], tenantId: options.tenantId ?? null },
    controller.signal,
  );
  return { ...open, abort: () => controller.abort() };
}

type PoolOptions = Omit<NonNullable<Parameters<typeof testContext>[1]>, 'secrets'>;

/**
 * Contexts a test file opens, all closed by `closeAll` (in afterEach). `ctx()` without a config
 * opens `defaultConfig()` (read when called, since simulators start in beforeAll); the string
 * values of `secretFields` are the context's secrets.
 */
export function contextPool(defaultConfig: () => Record<string, unknown>, secretFields: string[]) {
  const open: { close(): Promise<void> }[] = [];
  return {
    ctx(config: Record<string, unknown> = defaultConfig(), options: PoolOptions = {}): ConnectorContext {
      const secrets = secretFields.map((f) => config[f]).filter((s): s is string => typeof s === 'string');
      const c = testContext(config, { ...options, secrets });
      open.push(c);
      return c.ctx;
    },
    async closeAll(): Promise<void> {
      await Promise.all(open.splice(0).map((c) => c.close()));
    },
  };
}

/** The VendorError `p` rejects with (the test fails when it resolves or throws anything else). */
export async function vendorRejection(p: Promise<unknown>): Promise<VendorError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VendorError);
  return err as VendorError;
}

/** Successive windows of `minutes` from `start`, 5 minutes apart, so that tests sharing one simulator do not see each other's events. */
export function windowSequence(start: number) {
  let base = start;
  return (minutes = 60): { from: Date; to: Date } => {
    const from = new Date(base);
    base += (minutes + 5) * MIN;
    return { from, to: new Date(from.getTime() + minutes * MIN) };
  };
}

export interface Collected {
  events: Record<string, unknown>[];
  keys: string[];
  pages: number;
}

/** Every page of [from, to) of a stream (date streams), following `next` until null. */
export async function collectWindow(
  connector: Connector,
  ctx: ConnectorContext,
  stream: string,
  from: Date,
  to: Date,
  pageSize?: number,
): Promise<Collected> {
  const spec = connector.streams.find((s) => s.name === stream);
  if (!spec) throw new Error(`no stream ${stream}`);
  const out: Collected = { events: [], keys: [], pages: 0 };
  let cursor: string | null = null;
  for (let i = 0; i < 10_000; i++) {
    const page = await connector.fetchPage(ctx, { stream, cursor, from, to, pageSize: pageSize ?? spec.pageSize });
    out.pages += 1;
    out.events.push(...page.events);
    out.keys.push(...page.keys);
    if (page.next === null) return out;
    cursor = page.next;
  }
  throw new Error('collectWindow: more than 10000 pages');
}

/** Opaque streams: follows the vendor cursor while `more` is true. */
export async function collectOpaque(
  connector: Connector,
  ctx: ConnectorContext,
  stream: string,
  from: Date,
  cursor: string | null = null,
  pageSize?: number,
): Promise<Collected & { cursor: string | null }> {
  const spec = connector.streams.find((s) => s.name === stream);
  if (!spec) throw new Error(`no stream ${stream}`);
  const out: Collected & { cursor: string | null } = { events: [], keys: [], pages: 0, cursor };
  for (let i = 0; i < 10_000; i++) {
    const page = await connector.fetchPage(ctx, {
      stream,
      cursor: out.cursor,
      from,
      to: null,
      pageSize: pageSize ?? spec.pageSize,
    });
    out.pages += 1;
    out.events.push(...page.events);
    out.keys.push(...page.keys);
    if (page.next !== null) out.cursor = page.next;
    if (!page.more) return out;
  }
  throw new Error('collectOpaque: more than 10000 pages');
}
