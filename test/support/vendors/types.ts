// The shape every vendor simulator has, so the engine, backfill and kill tests can drive any
// of them the same way. A simulator is a loopback HTTP server implementing the vendor API's
// documented behaviour (pagination, cursors, auth, 429 + Retry-After, 5xx, expired tokens).
/** Changes a cloned fixture event before it is stored (its id and time are set after). */
export type EventPatch = (raw: Record<string, unknown>, i: number) => void;

/** A simulator that reads the vendor filters of live queries. */
export interface FilteringSimulator {
  /** The vendor filter each data request carried, in order, as sent (requests without one add nothing). */
  readonly filters: string[];
  /** addEvents, each cloned event changed by `patch` first. */
  addPatched(stream: string, n: number, window: { from: Date; to: Date }, patch: EventPatch): string[];
}

export interface VendorSimulator {
  /** Base URL of the simulator (http://127.0.0.1:<port>). */
  readonly url: string;
  /** Platform name (okta, microsoft_graph, ...). */
  readonly platform: string;
  /** An integration config that collects from this simulator (collect: true, credentials that it accepts). */
  config(): Record<string, unknown>;
  /** Adds n events to a stream, timestamps spread evenly over [from, to) (default: the last 30 minutes, ending 2 minutes ago). Returns their vendor ids. */
  addEvents(stream: string, n: number, window?: { from: Date; to: Date }): string[];
  /** Vendor ids of every event of the stream, oldest first. */
  eventIds(stream: string): string[];
  /** The next `count` data requests answer 429 with Retry-After: seconds. */
  rateLimit(count: number, retryAfterSeconds: number): void;
  /** The next `count` data requests answer 500/503. */
  serverError(count: number): void;
  /** Every access token issued so far stops working (401) — OAuth vendors; no-op for static tokens. */
  expireTokens(): void;
  /** Data requests served so far (not counting token requests). */
  readonly requests: number;
  close(): Promise<void>;
}
