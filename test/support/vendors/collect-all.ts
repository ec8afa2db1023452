// Drives a connector through a whole window the way the engine does, page by page, for
// connector tests: returns every event and key and the number of pages.
import { createNetPolicy } from '../../../src/platform/net/ssrf.js';
import { createConnectorRuntime } from '../../../src/connectors/runtime.js';
import type { Connector, ConnectorContext } from '../../../src/connectors/sdk.js';

export function testRuntime(options: { maxRetryWaitMs?: number; requestTimeoutMs?: number } = {}) {
  return createConnectorRuntime({
    net: createNetPolicy({ allowCidrs: ['127.0.0.0/8', '::1/128'] }),
    requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
    maxRetryWaitMs: options.maxRetryWaitMs ?? 5_000,
  });
}

/** A context for one integration config (secrets are the string values of `secrets`). */
export function testContext(config: Record<string, unknown>, options: { key?: string; tenantId?: string | null; maxRetryWaitMs?: number; secrets?: string[] } = {}) {
  const runtime = testRuntime({ maxRetryWaitMs: options.maxRetryWaitMs });
  const controller = new AbortController();
  const open = runtime.open({ key: options.key ?? 'test', config, secrets: options.secrets ?? [], tenantId: options.tenantId ?? null }, controller.signal);
  return { ...open, abort: () => controller.abort() };
}

export interface Collected {
  events: Record<string, unknown>[];
  keys: string[];
  pages: number;
}

/** Every page of [from, to) of a stream (date streams), following `next` until null. */
export async function collectWindow(connector: Connector, ctx: ConnectorContext, stream: string, from: Date, to: Date, pageSize?: number): Promise<Collected> {
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
export async function collectOpaque(connector: Connector, ctx: ConnectorContext, stream: string, from: Date, cursor: string | null = null, pageSize?: number): Promise<Collected & { cursor: string | null }> {
  const spec = connector.streams.find((s) => s.name === stream);
  if (!spec) throw new Error(`no stream ${stream}`);
  const out: Collected & { cursor: string | null } = { events: [], keys: [], pages: 0, cursor };
  for (let i = 0; i < 10_000; i++) {
    const page = await connector.fetchPage(ctx, { stream, cursor: out.cursor, from, to: null, pageSize: pageSize ?? spec.pageSize });
    out.pages += 1;
    out.events.push(...page.events);
    out.keys.push(...page.keys);
    if (page.next !== null) out.cursor = page.next;
    if (!page.more) return out;
  }
  throw new Error('collectOpaque: more than 10000 pages');
}
