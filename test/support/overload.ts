// The overload scenario of issue 28 against a running Weir over HTTP (the overload e2e test
// and bench/overload.ts): one integration feeds a destination that answers in 5 s, another
// feeds one that is down; pushers send real Okta events as fast as they are let for a fixed
// time, honouring Retry-After (at most 1 s, to keep the pressure on). A sampler reads each
// destination's backlog from the health API, the RSS of the Weir process and the size of its
// data. Then both destinations recover and the run waits until every acknowledged event is
// delivered and the ledger (through the API) balances.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { createDestination, createRoute, ledgerTotals, seqOf, waitFor, type LedgerTotals } from './delivery-api.js';
import { http, setUpIngestion } from './ingest.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

type Json = Record<string, unknown>;
const okta = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../src/connectors/okta/fixtures/system_log.json'), 'utf8'),
) as Json[];

export interface OverloadOptions {
  url: string;
  /** The Weir process whose RSS is sampled (Linux /proc). */
  pid: number;
  /** What its data takes on disk: a directory (embedded) or a query (PostgreSQL). */
  dataSize: () => Promise<number>;
  pushMs: number;
  /** Concurrent pushers per integration. */
  pushers: number;
  eventsPerPush: number;
  /** Each destination's backlog_max_events; 0: not set (a build before backlog budgets refuses the setting). */
  budgetEvents: number;
  /** How long recovery may take. */
  drainTimeoutMs?: number;
}

export interface OverloadFigures {
  acknowledged: number;
  /** Refused pushes by error code, each with Retry-After. */
  refusals: Record<string, number>;
  refusalsWithoutRetryAfter: number;
  otherFailures: number;
  delivered: number;
  /** Peak backlog (events) per destination name, from the health API. */
  backlogPeak: Record<string, number>;
  rssPeakMiB: number;
  rssStartMiB: number;
  dataPeakMiB: number;
  dataStartMiB: number;
  drainSeconds: number;
  ledger: LedgerTotals;
  /** Acknowledged events the receivers never got (must be empty). */
  missing: string[];
}

const MiB = 1_048_576;

export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status);
  return kb ? Number(kb[1]) * 1024 : 0;
}

export function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    try {
      if (entry.isDirectory()) total += directoryBytes(p);
      else if (entry.isFile()) total += statSync(p).blocks * 512;
    } catch {
      // A file removed while walking (a segment collected, a WAL file recycled).
    }
  }
  return total;
}

export async function runOverload(o: OverloadOptions): Promise<OverloadFigures> {
  const setup = await setUpIngestion(o.url, ['okta', 'okta']);
  const headers = { cookie: setup.cookie };
  const slow = await startWebhookReceiver({ keyOf: (event) => seqOf(event), responseDelayMs: 5_000 });
  const down = await startWebhookReceiver({ keyOf: (event) => seqOf(event), faults: { ratio: 1, modes: ['5xx'] } });
  const receivers: WebhookReceiver[] = [slow, down];
  try {
    const budget = {
      ...(o.budgetEvents > 0 ? { backlog_max_events: o.budgetEvents } : {}),
      max_wait_ms: 200,
      backoff_base_ms: 200,
      backoff_max_ms: 2_000,
      max_attempts: 100,
      timeout_ms: 10_000,
      breaker_cooldown_ms: 1_000,
    };
    const destinations: { id: string; name: string }[] = [];
    for (const [i, [name, receiver]] of (
      [
        ['slow', slow],
        ['down', down],
      ] as const
    ).entries()) {
      const integration = setup.integrations[i]!;
      const id = await createDestination(o.url, headers, {
        name,
        type: 'http',
        organization_id: setup.organizationId,
        config: { url: receiver.url },
        delivery: budget,
      });
      await createRoute(o.url, headers, {
        name,
        organization_id: setup.organizationId,
        destination_ids: [id],
        condition: { field: 'envelope.integration_id', op: 'eq', value: integration.id },
        final: false,
      });
      destinations.push({ id, name });
    }

    const figures: OverloadFigures = {
      acknowledged: 0,
      refusals: {},
      refusalsWithoutRetryAfter: 0,
      otherFailures: 0,
      delivered: 0,
      backlogPeak: { slow: 0, down: 0 },
      rssPeakMiB: 0,
      rssStartMiB: rssBytes(o.pid) / MiB,
      dataPeakMiB: 0,
      dataStartMiB: (await o.dataSize()) / MiB,
      drainSeconds: 0,
      ledger: { events_in: 0, quarantined: 0, filtered: 0, delivered: 0, dead_lettered: 0, pending: 0, unaccounted: 0 },
      missing: [],
    };
    const acknowledged = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        figures.rssPeakMiB = Math.max(figures.rssPeakMiB, rssBytes(o.pid) / MiB);
        figures.dataPeakMiB = Math.max(figures.dataPeakMiB, (await o.dataSize()) / MiB);
        const h = await http(o.url, 'GET', '/api/collectors/destinations/health', undefined, headers);
        for (const item of (h.json.items ?? []) as { name: string; backlog?: { events: number | null } }[]) {
          if (item.name in figures.backlogPeak)
            figures.backlogPeak[item.name] = Math.max(figures.backlogPeak[item.name]!, item.backlog?.events ?? 0);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();

    const until = Date.now() + o.pushMs;
    let pushNo = 0;
    async function pusher(token: string, tag: string): Promise<void> {
      while (Date.now() < until) {
        const n = pushNo++;
        const seqs = Array.from({ length: o.eventsPerPush }, (_, i) => `${tag}-${n}-${i}`);
        const body = seqs.map((seq, i) => JSON.stringify({ ...okta[i % okta.length], weir_test_seq: seq })).join('\n');
        const res = await fetch(`${o.url}/api/ingest/system_log`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body,
        }).catch(() => undefined);
        if (!res) {
          figures.otherFailures++;
          continue;
        }
        const answer = (await res.json().catch(() => ({}))) as { accepted?: number; error?: { code?: string } };
        if (res.status === 200) {
          for (const s of seqs) acknowledged.add(s);
          continue;
        }
        if (res.status === 429 || res.status === 503) {
          const code = answer.error?.code ?? String(res.status);
          figures.refusals[code] = (figures.refusals[code] ?? 0) + 1;
          const retryAfter = Number(res.headers.get('retry-after'));
          if (!(retryAfter > 0)) figures.refusalsWithoutRetryAfter++;
          await new Promise((r) => setTimeout(r, Math.min(1, retryAfter || 1) * 1000));
          continue;
        }
        figures.otherFailures++;
      }
    }
    await Promise.all(
      setup.integrations.flatMap((integration, i) =>
        Array.from({ length: o.pushers }, () => pusher(integration.token, `${destinations[i]!.name}`)),
      ),
    );
    figures.acknowledged = acknowledged.size;

    // Recovery: the slow destination answers at once, the one that was down comes back.
    const recoveredAt = Date.now();
    slow.setResponseDelay(0);
    down.setFaults(null);
    const settled = await waitFor(
      'every acknowledged event delivered',
      async () => {
        const totals = await ledgerTotals(o.url, headers);
        return totals.pending === 0 ? totals : undefined;
      },
      o.drainTimeoutMs ?? 300_000,
      500,
    );
    figures.drainSeconds = (Date.now() - recoveredAt) / 1000;
    sampling = false;
    await sampler;
    figures.ledger = settled;
    // The event store gets a copy of every event too: the webhook copies are the acknowledged ones.
    figures.delivered = slow.received.size + down.received.size;
    figures.missing = [...acknowledged].filter((s) => !slow.received.has(s) && !down.received.has(s)).slice(0, 10);
    return figures;
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
  }
}
