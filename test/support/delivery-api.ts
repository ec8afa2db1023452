// Routing and delivery through the HTTP API for end-to-end tests and benchmarks:
// destinations, routes, the ledger from the destinations health answer, and the test
// sequence number the pushed events carry (it lands in the OCSF event's `unmapped`).
import { http } from './ingest.js';

type Json = Record<string, unknown>;

export async function createDestination(base: string, headers: Record<string, string>, body: Json): Promise<string> {
  const res = await http(base, 'POST', '/api/collectors/destinations', body, headers);
  if (res.status !== 201) throw new Error(`destination: ${res.status} ${JSON.stringify(res.json)}`);
  return String(res.json.id);
}

export async function createRoute(base: string, headers: Record<string, string>, body: Json): Promise<string> {
  const res = await http(base, 'POST', '/api/collectors/routes', body, headers);
  if (res.status !== 201) throw new Error(`route: ${res.status} ${JSON.stringify(res.json)}`);
  return String(res.json.id);
}

/**
 * A webhook destination `receiver` at `url` (batches sent within 20 ms) and a route
 * `everything` to it in the organization; the destination's id.
 */
export async function routeEverythingTo(
  base: string,
  headers: Record<string, string>,
  organizationId: number,
  url: string,
): Promise<string> {
  const destination = await createDestination(base, headers, {
    name: 'receiver',
    type: 'http',
    organization_id: organizationId,
    config: { url },
    delivery: { max_wait_ms: 20 },
  });
  await createRoute(base, headers, {
    name: 'everything',
    organization_id: organizationId,
    destination_ids: [destination],
  });
  return destination;
}

export interface LedgerTotals {
  events_in: number;
  quarantined: number;
  filtered: number;
  delivered: number;
  dead_lettered: number;
  pending: number;
  unaccounted: number;
  [key: string]: unknown;
}

/** The caller's ledger totals, from the batch health endpoint. */
export async function ledgerTotals(base: string, headers: Record<string, string>): Promise<LedgerTotals> {
  const res = await http(base, 'GET', '/api/collectors/destinations/health', undefined, headers);
  if (res.status !== 200) throw new Error(`health: ${res.status} ${JSON.stringify(res.json)}`);
  return (res.json.ledger as { totals: LedgerTotals }).totals;
}

/** The weir_test_seq an event carries, from its OCSF JSON text. */
export function seqOf(event: unknown): string {
  const unmapped = (event as { unmapped?: { weir_test_seq?: unknown } } | null)?.unmapped;
  return typeof unmapped?.weir_test_seq === 'string' ? unmapped.weir_test_seq : '';
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
