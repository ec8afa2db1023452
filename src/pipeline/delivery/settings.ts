// Per-destination delivery settings (destinations.delivery), with their defaults. Served in
// the destination's representation and in destination-types.
import { Type, type Static } from 'typebox';

export const DeliverySettingsSchema = Type.Object(
  {
    max_events: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 50_000, description: 'Most events in one request (default 500)' }),
    ),
    max_bytes: Type.Optional(
      Type.Integer({
        minimum: 1024,
        maximum: 64 * 1_048_576,
        description: 'About the most bytes in one request (default 4 MiB)',
      }),
    ),
    max_wait_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 300_000,
        description: 'How long a partial batch waits for more events (default 1000)',
      }),
    ),
    max_attempts: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'Attempts before a batch is dead-lettered (default 8)' }),
    ),
    backoff_base_ms: Type.Optional(
      Type.Integer({
        minimum: 10,
        maximum: 600_000,
        description: 'First retry delay; doubles per attempt, with full jitter (default 1000)',
      }),
    ),
    backoff_max_ms: Type.Optional(
      Type.Integer({ minimum: 100, maximum: 3_600_000, description: 'Longest retry delay (default 300000)' }),
    ),
    timeout_ms: Type.Optional(
      Type.Integer({ minimum: 100, maximum: 600_000, description: 'Time limit of one request (default 30000)' }),
    ),
    breaker_threshold: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1000,
        description: 'Consecutive failed requests that open the circuit breaker (default 5)',
      }),
    ),
    breaker_cooldown_ms: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: 3_600_000,
        description: 'How long the breaker stays open before a half-open probe (default 30000)',
      }),
    ),
    concurrency: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 64,
        description: 'Requests in flight to this destination per dispatcher process (default 2)',
      }),
    ),
    backlog_max_events: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: 1_000_000_000,
        description:
          'Backlog budget: events waiting for this destination beyond which when_full applies (default 500000)',
      }),
    ),
    backlog_max_bytes: Type.Optional(
      Type.Integer({
        minimum: 1_048_576,
        maximum: 1_099_511_627_776,
        description:
          'Backlog budget: bytes of events (before compression) waiting for this destination beyond which when_full applies (default 512 MiB)',
      }),
    ),
    when_full: Type.Optional(
      Type.Union([Type.Literal('block'), Type.Literal('drop_newest')], {
        description:
          'Over the backlog budget: block (default) refuses new events from the integrations whose events wait for this destination (push 503 with Retry-After, ' +
          "syslog TCP and RELP stop reading, pull collection pauses); drop_newest keeps taking them and drops this destination's copies, counted in the ledger as dropped (reason backlog_full)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type DeliverySettingsInput = Static<typeof DeliverySettingsSchema>;
export type DeliverySettings = Required<DeliverySettingsInput>;

export const DEFAULT_DELIVERY: DeliverySettings = Object.freeze({
  max_events: 500,
  max_bytes: 4 * 1_048_576,
  max_wait_ms: 1000,
  max_attempts: 8,
  backoff_base_ms: 1000,
  backoff_max_ms: 300_000,
  timeout_ms: 30_000,
  breaker_threshold: 5,
  breaker_cooldown_ms: 30_000,
  concurrency: 2,
  backlog_max_events: 500_000,
  backlog_max_bytes: 512 * 1_048_576,
  when_full: 'block',
});

/** Over the backlog budget: as many events or bytes waiting as the budget allows, or more (when_full applies). */
export function overBacklogBudget(
  s: Pick<DeliverySettings, 'backlog_max_events' | 'backlog_max_bytes'>,
  waiting: { events: number; bytes: number },
): boolean {
  return waiting.events >= s.backlog_max_events || waiting.bytes >= s.backlog_max_bytes;
}

export function deliverySettings(stored: DeliverySettingsInput | null | undefined): DeliverySettings {
  return { ...DEFAULT_DELIVERY, ...(stored ?? {}) };
}
