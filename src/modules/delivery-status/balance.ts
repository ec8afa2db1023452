// The accounting ledger's equation (docs/delivery.md, The ledger), from grouped counts:
//   events_in + copies_added + replayed = delivered + filtered + quarantined + dead_lettered + dropped + pending
// with copies_added = copies − routed, replayed the copies of stored events a replay sent
// again (docs/search.md, Replay), dead_lettered net of DLQ reprocess, and pending
// measured (accepted batches not yet normalized + routing backlog + outbox). Events still
// waiting for normalization are in events_in and in pending (they were accepted, and are
// nowhere else yet). `unaccounted` is the difference: 0 when every event is somewhere.
// Pure, so the arithmetic is tested without a database. The one calculation of the ledger:
// the health answers use it, and the tests read it through them (test/support/ledger.ts).

export interface StreamKey {
  organization_id: number;
  integration_id: number;
  stream: string;
}

export interface LedgerEntry extends StreamKey {
  outcome: string;
  reason: string;
  count: number;
}

export interface LedgerCounts {
  events_in: number;
  quarantined: number;
  filtered: number;
  filtered_by_reason: Record<string, number>;
  routed: number;
  copies_added: number;
  /** Copies of stored events replayed to a destination: they enter the equation beside copies_added. */
  replayed: number;
  delivered: number;
  dead_lettered: number;
  dead_lettered_by_reason: Record<string, number>;
  dlq_reprocessed: number;
  /** Copies a full drop_newest destination did not take, by reason (backlog budgets, docs/delivery.md). */
  dropped: number;
  dropped_by_reason: Record<string, number>;
  pending: number;
  /** Of pending: events accepted and not yet normalized (queued ingest batches). */
  pending_normalization: number;
  unaccounted: number;
  shadow_delivered: number;
  shadow_dropped: number;
}

export type LedgerRow = StreamKey & LedgerCounts;

export interface DestinationLedgerRow extends StreamKey {
  copies: number;
  delivered: number;
  dead_lettered: number;
  dead_lettered_by_reason: Record<string, number>;
  dlq_reprocessed: number;
  dropped: number;
  dropped_by_reason: Record<string, number>;
  pending: number;
  shadow_delivered: number;
  shadow_dropped: number;
}

export interface BalanceInput {
  counters: (StreamKey & { events_in: number; quarantined: number })[];
  ledger: LedgerEntry[];
  /** Accepted batches not yet normalized (accepted_batches). */
  pendingNormalization: (StreamKey & { events: number })[];
  pendingRouting: (StreamKey & { events: number })[];
  pendingOutbox: (StreamKey & { events: number })[];
}

const keyOf = (k: StreamKey) => `${k.organization_id}\u0000${k.integration_id}\u0000${k.stream}`;
const add = (m: Record<string, number>, reason: string, n: number) => {
  m[reason] = (m[reason] ?? 0) + n;
};
const nonZero = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== 0));

interface Acc {
  key: StreamKey;
  events_in: number;
  quarantined: number;
  filtered: Record<string, number>;
  routed: number;
  copies: number;
  replayed: number;
  delivered: number;
  dead: Record<string, number>;
  reprocessed: Record<string, number>;
  dropped: Record<string, number>;
  pending: number;
  queued: number;
  shadow_delivered: number;
  shadow_dropped: number;
}

function accumulator(key: StreamKey): Acc {
  const k = { organization_id: key.organization_id, integration_id: key.integration_id, stream: key.stream };
  return {
    key: k,
    events_in: 0,
    quarantined: 0,
    filtered: {},
    routed: 0,
    copies: 0,
    replayed: 0,
    delivered: 0,
    dead: {},
    reprocessed: {},
    dropped: {},
    pending: 0,
    queued: 0,
    shadow_delivered: 0,
    shadow_dropped: 0,
  };
}

function collect(input: Partial<BalanceInput>): Acc[] {
  const byKey = new Map<string, Acc>();
  const at = (k: StreamKey) => {
    const key = keyOf(k);
    let acc = byKey.get(key);
    if (!acc) byKey.set(key, (acc = accumulator(k)));
    return acc;
  };
  for (const c of input.counters ?? []) {
    const acc = at(c);
    acc.events_in += c.events_in;
    acc.quarantined += c.quarantined;
  }
  for (const e of input.ledger ?? []) {
    const acc = at(e);
    switch (e.outcome) {
      case 'filtered':
        add(acc.filtered, e.reason, e.count);
        break;
      case 'routed':
        acc.routed += e.count;
        break;
      case 'copies':
        acc.copies += e.count;
        break;
      case 'replayed':
        acc.replayed += e.count;
        break;
      case 'delivered':
        acc.delivered += e.count;
        break;
      case 'dead_lettered':
        add(acc.dead, e.reason, e.count);
        break;
      case 'dlq_reprocessed':
        add(acc.reprocessed, e.reason, e.count);
        break;
      case 'dropped':
        add(acc.dropped, e.reason, e.count);
        break;
      case 'shadow_delivered':
        acc.shadow_delivered += e.count;
        break;
      case 'shadow_dropped':
        acc.shadow_dropped += e.count;
        break;
      default:
        break; // an outcome this version does not know is outside the equation
    }
  }
  for (const p of input.pendingNormalization ?? []) {
    const acc = at(p);
    acc.events_in += p.events;
    acc.queued += p.events;
    acc.pending += p.events;
  }
  for (const p of input.pendingRouting ?? []) at(p).pending += p.events;
  for (const p of input.pendingOutbox ?? []) at(p).pending += p.events;
  return [...byKey.values()].sort(
    (a, b) =>
      a.key.organization_id - b.key.organization_id ||
      a.key.integration_id - b.key.integration_id ||
      a.key.stream.localeCompare(b.key.stream),
  );
}

const sum = (m: Record<string, number>) => Object.values(m).reduce((s, v) => s + v, 0);

function netDead(acc: Acc): Record<string, number> {
  const net: Record<string, number> = { ...acc.dead };
  for (const [reason, n] of Object.entries(acc.reprocessed)) add(net, reason, -n);
  return nonZero(net);
}

function countsOf(acc: Acc): LedgerCounts {
  const filtered = sum(acc.filtered);
  const dead = netDead(acc);
  const deadTotal = sum(dead);
  const copiesAdded = acc.copies - acc.routed;
  const dropped = sum(acc.dropped);
  return {
    events_in: acc.events_in,
    quarantined: acc.quarantined,
    filtered,
    filtered_by_reason: nonZero(acc.filtered),
    routed: acc.routed,
    copies_added: copiesAdded,
    replayed: acc.replayed,
    delivered: acc.delivered,
    dead_lettered: deadTotal,
    dead_lettered_by_reason: dead,
    dlq_reprocessed: sum(acc.reprocessed),
    dropped,
    dropped_by_reason: nonZero(acc.dropped),
    pending: acc.pending,
    pending_normalization: acc.queued,
    unaccounted:
      acc.events_in +
      copiesAdded +
      acc.replayed -
      (acc.delivered + filtered + acc.quarantined + deadTotal + dropped + acc.pending),
    shadow_delivered: acc.shadow_delivered,
    shadow_dropped: acc.shadow_dropped,
  };
}

export function emptyCounts(): LedgerCounts {
  return countsOf(accumulator({ organization_id: 0, integration_id: 0, stream: '' }));
}

function addCounts(total: LedgerCounts, c: LedgerCounts): void {
  for (const k of [
    'events_in',
    'quarantined',
    'filtered',
    'routed',
    'copies_added',
    'replayed',
    'delivered',
    'dead_lettered',
    'dlq_reprocessed',
    'dropped',
    'pending',
    'pending_normalization',
    'unaccounted',
    'shadow_delivered',
    'shadow_dropped',
  ] as const) {
    total[k] += c[k];
  }
  for (const [r, n] of Object.entries(c.filtered_by_reason)) add(total.filtered_by_reason, r, n);
  for (const [r, n] of Object.entries(c.dead_lettered_by_reason)) add(total.dead_lettered_by_reason, r, n);
  for (const [r, n] of Object.entries(c.dropped_by_reason)) add(total.dropped_by_reason, r, n);
}

/** The ledger per stream and in total. */
export function balanceLedger(input: BalanceInput): { totals: LedgerCounts; rows: LedgerRow[] } {
  const rows = collect(input).map((acc) => ({ ...acc.key, ...countsOf(acc) }));
  const totals = emptyCounts();
  for (const r of rows) addCounts(totals, r);
  totals.dead_lettered_by_reason = nonZero(totals.dead_lettered_by_reason);
  return { totals, rows };
}

/** One destination's side of the ledger per stream: what was copied to it and where it is now. */
export function destinationLedger(input: {
  ledger: LedgerEntry[];
  pendingOutbox: (StreamKey & { events: number })[];
}): DestinationLedgerRow[] {
  return collect({ ledger: input.ledger, pendingOutbox: input.pendingOutbox }).map((acc) => {
    const dead = netDead(acc);
    return {
      ...acc.key,
      copies: acc.copies,
      delivered: acc.delivered,
      dead_lettered: sum(dead),
      dead_lettered_by_reason: dead,
      dlq_reprocessed: sum(acc.reprocessed),
      dropped: sum(acc.dropped),
      dropped_by_reason: nonZero(acc.dropped),
      pending: acc.pending,
      shadow_delivered: acc.shadow_delivered,
      shadow_dropped: acc.shadow_dropped,
    };
  });
}
