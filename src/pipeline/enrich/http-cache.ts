// The answers of HTTP lookup sources as the pass reads them: one cache per thread, filled by
// the main thread's fetcher (http-fetcher.ts) through a BroadcastChannel, because the pass
// runs on worker threads and must never wait on the network. A key the pass finds unknown
// is recorded (want) and returned with the pass's result, so the main thread fetches it and
// later events see the answer. A channel keeps no history: a thread started after an answer
// was sent wants the key again, and the fetcher sends it the answer it already holds.
import { BroadcastChannel } from 'node:worker_threads';
import type { Row } from './types.js';

export const HTTP_ANSWER_CHANNEL = 'weir-enrichment-http';

/** One answer as it travels between threads. row null: the source knows nothing of the key. */
export interface HttpAnswerMessage {
  sourceId: string;
  key: string;
  row: Row | null;
  /** Epoch milliseconds. */
  expiresAt: number;
  /** The source's max_cache_entries, so that every thread bounds it alike. */
  maxEntries?: number;
}

export type CacheAnswer = { hit: Row } | { miss: true } | undefined;

export interface HttpCache {
  /** The answer for a key: a row, a remembered miss, or undefined when never asked or expired. */
  get(sourceId: string, key: string): CacheAnswer;
  /** The unexpired answer with its expiry, for sending it on. */
  peek(sourceId: string, key: string): { row: Row | null; expiresAt: number } | undefined;
  /** Records a key the pass could not answer; drainWanted hands them over. */
  want(sourceId: string, key: string): void;
  /** The keys wanted since the last drain, per source; clears them. */
  drainWanted(): Map<string, string[]>;
  /** Stores an answer in this thread only. */
  set(answer: HttpAnswerMessage): void;
  /** Stores an answer here and sends it to every other thread's cache. */
  publish(answer: HttpAnswerMessage): void;
  /** Forgets a source's answers here and in every thread (its config changed, or it was deleted). */
  forget(sourceId: string): void;
  /** Entries held for a source (expired ones may still count until read). */
  size(sourceId: string): number;
}

export const DEFAULT_MAX_ENTRIES = 100_000;
/** Wanted keys kept per source per pass: a flood of distinct keys must not grow without end. */
export const MAX_WANTED_PER_SOURCE = 10_000;

interface Entry {
  row: Row | null;
  expiresAt: number;
}

type Message = { type: 'answer'; answer: HttpAnswerMessage } | { type: 'forget'; sourceId: string };

export interface HttpCacheOptions {
  now?: () => number;
  /** The channel to share answers on; none for a cache of this thread only. */
  channel?: BroadcastChannel | null;
}

export function createHttpCache(options: HttpCacheOptions = {}): HttpCache {
  const now = options.now ?? Date.now;
  const sources = new Map<string, Map<string, Entry>>();
  const wanted = new Map<string, Set<string>>();
  const channel = options.channel ?? null;

  function set(answer: HttpAnswerMessage): void {
    let entries = sources.get(answer.sourceId);
    if (!entries) sources.set(answer.sourceId, (entries = new Map()));
    // Deleting first moves the key to the end: a Map iterates in insertion order, so the
    // first key is always the oldest answer, the one to evict.
    entries.delete(answer.key);
    const max = answer.maxEntries ?? DEFAULT_MAX_ENTRIES;
    while (entries.size >= max) entries.delete(entries.keys().next().value!);
    entries.set(answer.key, { row: answer.row, expiresAt: answer.expiresAt });
    wanted.get(answer.sourceId)?.delete(answer.key);
  }

  function drop(sourceId: string): void {
    sources.delete(sourceId);
    wanted.delete(sourceId);
  }

  if (channel) {
    channel.onmessage = (event: unknown) => {
      const data = (event as { data?: Message }).data;
      if (data?.type === 'answer') set(data.answer);
      else if (data?.type === 'forget') drop(data.sourceId);
    };
  }

  return {
    get(sourceId, key) {
      const entries = sources.get(sourceId);
      const entry = entries?.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= now()) {
        entries!.delete(key);
        return undefined;
      }
      return entry.row ? { hit: entry.row } : { miss: true };
    },
    peek(sourceId, key) {
      const entry = sources.get(sourceId)?.get(key);
      return entry && entry.expiresAt > now() ? { row: entry.row, expiresAt: entry.expiresAt } : undefined;
    },
    want(sourceId, key) {
      let keys = wanted.get(sourceId);
      if (!keys) wanted.set(sourceId, (keys = new Set()));
      if (keys.size < MAX_WANTED_PER_SOURCE) keys.add(key);
    },
    drainWanted() {
      const out = new Map<string, string[]>();
      for (const [sourceId, keys] of wanted) if (keys.size) out.set(sourceId, [...keys]);
      wanted.clear();
      return out;
    },
    set,
    publish(answer) {
      set(answer);
      // A BroadcastChannel does not deliver to the object that posts: this thread was set above.
      channel?.postMessage({ type: 'answer', answer } satisfies Message);
    },
    forget(sourceId) {
      drop(sourceId);
      channel?.postMessage({ type: 'forget', sourceId } satisfies Message);
    },
    size(sourceId) {
      return sources.get(sourceId)?.size ?? 0;
    },
  };
}

let shared: HttpCache | undefined;

/**
 * This thread's cache, listening on the shared channel. The channel is unref'd: a listener
 * must not keep a process (or a worker thread piscina wants to end) alive.
 */
export function httpCache(): HttpCache {
  if (!shared) {
    const channel = new BroadcastChannel(HTTP_ANSWER_CHANNEL);
    (channel as unknown as { unref(): void }).unref();
    shared = createHttpCache({ channel });
  }
  return shared;
}
