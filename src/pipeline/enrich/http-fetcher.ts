// The main thread's side of the HTTP lookup sources: it fetches the keys the pass wanted,
// in the background, and publishes each answer to every thread's cache (http-cache.ts).
// Per source: keys are fetched once however often they are wanted, a token bucket keeps to
// the API's rate, a cap bounds calls in flight, and a circuit stops calling a source that
// keeps failing, so that a down source costs nothing but a skipped lookup.
import type { Pool } from 'undici';
import type { Logger } from '../../platform/logger.js';
import { httpCache, type HttpCache } from './http-cache.js';
import {
  askableKey,
  callHttpSource,
  resolveHttpSourceConfig,
  sourceOrigin,
  validateHttpSourceConfig,
  type HttpSource,
  type ResolvedHttpSourceConfig,
} from './http-source.js';
import { createGuardedPool } from '../../platform/net/http.js';
import { credentialIssues, type GuardDeps, type HeaderCredential } from './outbound.js';

export interface HttpSourceStats {
  /** Calls made (answered or not). */
  requests: number;
  /** Answers with a result. */
  hits: number;
  /** 404 or empty answers (cached for negative_ttl_seconds). */
  misses: number;
  /** 5xx, other non-2xx, unreadable answers, timeouts, refused connections: not cached. */
  errors: number;
  /** Keys not fetched because the circuit was open or the queue was full. */
  skipped: number;
  last_error: string | null;
  /** ISO time of last_error. */
  last_error_at: string | null;
  /** Median of the last 100 calls; null before the first. */
  latency_ms_p50: number | null;
  circuit: 'closed' | 'open';
  in_flight: number;
  queued: number;
}

export interface HttpFetcherDeps extends GuardDeps {
  /** Epoch milliseconds. */
  now?: () => number;
  logger?: Pick<Logger, 'warn' | 'info'>;
  /** The cache answers are published to; this thread's shared one by default. */
  cache?: HttpCache;
  /** Consecutive failures that open the circuit (default 5). */
  circuitFailures?: number;
  /** How long an open circuit stays open (default 60 s); then calls resume, and one more failure opens it again. */
  circuitCooldownMs?: number;
  /** Keys waiting per source beyond which new ones are skipped (default 10,000). */
  maxQueued?: number;
}

export interface HttpFetcher {
  /** Fetches the keys not cached nor in flight; resolves when they are answered. Never rejects. */
  request(source: HttpSource, keys: readonly string[]): Promise<void>;
  stats(sourceId: string): HttpSourceStats | undefined;
  /**
   * Drops a source's state, its connections and its answers in every thread. A request with
   * a changed config does the same by itself (a changed credential keeps the answers).
   */
  forget(sourceId: string): Promise<void>;
  close(): Promise<void>;
}

interface SourceState {
  fingerprint: string;
  source: HttpSource['config'];
  config: ResolvedHttpSourceConfig;
  credential: HeaderCredential | null;
  pool: Pool;
  tokens: number;
  refilledAt: number;
  waiting: Map<string, () => void>;
  queue: string[];
  active: number;
  failures: number;
  openUntil: number;
  timer: NodeJS.Timeout | undefined;
  latencies: number[];
  stats: Omit<HttpSourceStats, 'latency_ms_p50' | 'circuit' | 'in_flight' | 'queued'>;
}

export function createHttpFetcher(deps: HttpFetcherDeps): HttpFetcher {
  const now = deps.now ?? Date.now;
  const circuitFailures = deps.circuitFailures ?? 5;
  const cooldownMs = deps.circuitCooldownMs ?? 60_000;
  const maxQueued = deps.maxQueued ?? 10_000;
  const states = new Map<string, SourceState>();
  const cache = () => deps.cache ?? httpCache();

  function stateOf(source: HttpSource): SourceState | null {
    // A changed credential is a new source state (fresh circuit); the fingerprint stays in this closure, never logged.
    const fingerprint = JSON.stringify([
      source.config,
      source.credential?.header ?? null,
      source.credential?.value ?? null,
    ]);
    const known = states.get(source.id);
    if (known && known.fingerprint === fingerprint) return known;
    if (known) {
      retire(source.id, known);
      // Answers read with another URL or result_path would be rows of another shape; a rotated credential keeps them.
      if (JSON.stringify(known.source) !== JSON.stringify(source.config)) cache().forget(source.id);
    }
    const issues = validateHttpSourceConfig(source.config).concat(credentialIssues(source.credential));
    if (issues.length) {
      deps.logger?.warn(
        { source_id: source.id, issues },
        'enrichment HTTP source has an invalid config; its keys are not fetched',
      );
      return null;
    }
    const config = resolveHttpSourceConfig(source.config);
    const state: SourceState = {
      fingerprint,
      source: source.config,
      config,
      credential: source.credential ?? null,
      pool: createGuardedPool(sourceOrigin(config), deps, { connections: config.concurrency }),
      tokens: config.rate_limit_per_second,
      refilledAt: now(),
      waiting: new Map(),
      queue: [],
      active: 0,
      failures: 0,
      openUntil: 0,
      timer: undefined,
      latencies: [],
      stats: { requests: 0, hits: 0, misses: 0, errors: 0, skipped: 0, last_error: null, last_error_at: null },
    };
    states.set(source.id, state);
    return state;
  }

  function retire(sourceId: string, state: SourceState): void {
    states.delete(sourceId);
    clearTimeout(state.timer);
    for (const done of state.waiting.values()) done();
    state.waiting.clear();
    state.queue = [];
    void state.pool.destroy().catch(() => undefined);
  }

  function takeToken(state: SourceState): boolean {
    const t = now();
    const rate = state.config.rate_limit_per_second;
    // A burst of at most one second's worth: the API's limit is per second, not per minute.
    state.tokens = Math.min(rate, state.tokens + ((t - state.refilledAt) / 1000) * rate);
    state.refilledAt = t;
    if (state.tokens < 1) return false;
    state.tokens -= 1;
    return true;
  }

  function pump(sourceId: string, state: SourceState): void {
    while (state.active < state.config.concurrency && state.queue.length > 0) {
      if (now() < state.openUntil) return skipQueue(state);
      if (!takeToken(state)) {
        if (!state.timer) {
          const waitMs = Math.ceil(((1 - state.tokens) / state.config.rate_limit_per_second) * 1000);
          state.timer = setTimeout(
            () => {
              state.timer = undefined;
              pump(sourceId, state);
            },
            Math.max(waitMs, 1),
          );
        }
        return;
      }
      const key = state.queue.shift()!;
      state.active++;
      void call(sourceId, state, key).finally(() => {
        state.active--;
        state.waiting.get(key)?.();
        state.waiting.delete(key);
        if (states.get(sourceId) === state) pump(sourceId, state);
      });
    }
  }

  function skipQueue(state: SourceState): void {
    state.stats.skipped += state.queue.length;
    for (const key of state.queue) {
      state.waiting.get(key)?.();
      state.waiting.delete(key);
    }
    state.queue = [];
  }

  async function call(sourceId: string, state: SourceState, key: string): Promise<void> {
    const started = performance.now();
    state.stats.requests++;
    const outcome = await callHttpSource(state.pool, state.config, state.credential, key).catch((err: unknown) => ({
      kind: 'error' as const,
      status: undefined,
      error: `unexpected failure (${(err as Error)?.name ?? 'error'})`,
    }));
    state.latencies.push(Math.round(performance.now() - started));
    if (state.latencies.length > 100) state.latencies.shift();
    if (states.get(sourceId) !== state) return; // retired meanwhile: its answers are stale
    const { config } = state;
    if (outcome.kind === 'error') {
      state.stats.errors++;
      state.stats.last_error = outcome.error;
      state.stats.last_error_at = new Date(now()).toISOString();
      state.failures++;
      if (state.failures >= circuitFailures) {
        // Half-open after the cooldown: one more failure opens it again at once.
        if (now() >= state.openUntil)
          deps.logger?.warn(
            { source_id: sourceId, error: outcome.error },
            'enrichment HTTP source keeps failing; not called for a while',
          );
        state.openUntil = now() + cooldownMs;
      }
      return;
    }
    state.failures = 0;
    if (outcome.kind === 'hit') state.stats.hits++;
    else state.stats.misses++;
    const ttl = outcome.kind === 'hit' ? config.cache_ttl_seconds : config.negative_ttl_seconds;
    cache().publish({
      sourceId,
      key,
      row: outcome.kind === 'hit' ? outcome.row : null,
      expiresAt: now() + ttl * 1000,
      maxEntries: config.max_cache_entries,
    });
  }

  return {
    request(source, keys) {
      try {
        const state = stateOf(source);
        if (!state) return Promise.resolve();
        const pending: Promise<void>[] = [];
        const shared = cache();
        for (const key of new Set(keys)) {
          if (!askableKey(key)) continue;
          const known = state.waiting.get(key);
          if (known) {
            pending.push(new Promise((ok) => state.waiting.set(key, () => (known(), ok()))));
            continue;
          }
          const held = shared.peek(source.id, key);
          if (held) {
            // A thread started after this answer was sent has never seen it: send it again (no call).
            shared.publish({ sourceId: source.id, key, ...held, maxEntries: state.config.max_cache_entries });
            continue;
          }
          if (now() < state.openUntil || state.queue.length >= maxQueued) {
            state.stats.skipped++;
            continue;
          }
          state.queue.push(key);
          pending.push(new Promise((ok) => state.waiting.set(key, ok)));
        }
        pump(source.id, state);
        return Promise.all(pending).then(() => undefined);
      } catch (err) {
        deps.logger?.warn(
          { source_id: source.id, err_name: (err as Error)?.name },
          'enrichment HTTP fetch could not start',
        );
        return Promise.resolve();
      }
    },
    stats(sourceId) {
      const state = states.get(sourceId);
      if (!state) return undefined;
      return {
        ...state.stats,
        latency_ms_p50: median(state.latencies),
        circuit: now() < state.openUntil ? 'open' : 'closed',
        in_flight: state.active,
        queued: state.queue.length,
      };
    },
    async forget(sourceId) {
      const state = states.get(sourceId);
      if (state) retire(sourceId, state);
      cache().forget(sourceId);
    },
    async close() {
      for (const [id, state] of [...states]) retire(id, state);
    },
  };
}

function median(values: readonly number[]): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
