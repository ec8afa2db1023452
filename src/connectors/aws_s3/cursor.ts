// The cursor of an object collection: which objects were read, and where reading stands.
//
// S3 lists keys in lexicographic order only, and an object may appear after a later key was
// read (CloudTrail writes one prefix per account, region and day; deliveries run late;
// multipart uploads show up when they complete, with the LastModified of their start). So
// the cursor is not "the last key read": each pass lists the prefix from its start and takes
// every object modified after floor = mark - lookback that is not in `seen`, the objects
// already read (key and LastModified) that are still inside that window. When a pass reaches
// the end of the listing, mark becomes the newest LastModified listed and `seen` drops what
// fell below the new floor. An object is therefore read once, and an object listed late is read
// as long as its LastModified is within the lookback window of the newest object listed before.
//
// Keys under a date path (.../YYYY/MM/DD/..., Security Lake's eventDay=YYYYMMDD/) older than
// the floor by more than a day are skipped with one StartAfter jump per partition instead of
// being listed one by one, so a pass costs about one request per account, region and day in
// the window rather than one per thousand keys of history.
//
// An object with more events than a page is read across pages: `obj.done` counts its events
// already accepted, and the cursor is stored only after they are (the collection engine's
// rule). After a crash the object is read again from its start and its first `done` events are
// skipped; events of a page accepted but whose cursor was not written carry the same keys and
// the normalization stage drops them (docs/collection.md, Deduplication).
import { createHash } from 'node:crypto';
import { DAY_MS, VendorError } from '../sdk.js';

export interface InProgress {
  key: string;
  etag: string;
  /** LastModified, epoch ms. */
  lm: number;
  /** Events of the object already accepted. */
  done: number;
}

export interface CursorState {
  v: 1;
  /** Newest LastModified listed by a completed pass (epoch ms); floor = mark - lookback. */
  mark: number;
  /** Objects read whose LastModified is above the floor: key -> LastModified (epoch ms). */
  seen: Record<string, number>;
  /** The pass in progress: list after this key ('' = from the start of the prefix). */
  after: string;
  /** Newest LastModified listed so far in this pass. */
  max: number;
  obj?: InProgress;
}

/** Objects remembered at most; past it the oldest are forgotten, and one listed again is read again (its events deduplicated). */
export const MAX_SEEN = 20_000;

export function initialState(from: Date, lookbackMs: number): CursorState {
  return { v: 1, mark: from.getTime() + lookbackMs, seen: {}, after: '', max: 0 };
}

export function decodeCursor(cursor: string | null, from: Date, lookbackMs: number): CursorState {
  if (cursor === null) return initialState(from, lookbackMs);
  try {
    const s = JSON.parse(cursor) as Partial<CursorState>;
    if (
      s.v === 1 &&
      typeof s.mark === 'number' &&
      typeof s.after === 'string' &&
      typeof s.max === 'number' &&
      typeof s.seen === 'object' &&
      s.seen !== null
    )
      return s as CursorState;
  } catch {
    // falls through to the error below
  }
  throw new VendorError('bad_request', 'the stored cursor is not one this collector wrote; reset the cursor');
}

export const encodeCursor = (state: CursorState): string => JSON.stringify(state);

export const floorOf = (state: CursorState, lookbackMs: number): number => state.mark - lookbackMs;

/** Remembers an object as read, keeping at most MAX_SEEN (the oldest forgotten first). */
export function remember(state: CursorState, key: string, lm: number): void {
  state.seen[key] = lm;
  const keys = Object.keys(state.seen);
  if (keys.length <= MAX_SEEN) return;
  keys.sort((a, b) => state.seen[a]! - state.seen[b]!);
  for (const k of keys.slice(0, keys.length - MAX_SEEN)) delete state.seen[k];
}

/** The end of a pass: the mark moves to the newest object listed, what fell below the floor is forgotten. */
export function completePass(state: CursorState, lookbackMs: number): void {
  state.mark = Math.max(state.mark, state.max);
  const floor = floorOf(state, lookbackMs);
  for (const [k, lm] of Object.entries(state.seen)) if (lm <= floor) delete state.seen[k];
  state.after = '';
  state.max = 0;
}

export function isNew(state: CursorState, key: string, lm: number, lookbackMs: number): boolean {
  return lm > floorOf(state, lookbackMs) && state.seen[key] !== lm;
}

const DATE_PATH = /^(.*?\/)(\d{4})\/(\d{2})\/(\d{2})\//;
const EVENT_DAY = /^(.*?\/eventDay=)(\d{4})(\d{2})(\d{2})\//;

/**
 * For a key under a date path older than the floor by more than a day (the slack covers a
 * delivery written under the previous day), the StartAfter that skips the rest of its
 * partition's old days; undefined when the key has no such date or is recent.
 */
export function skipTo(key: string, floorMs: number): string | undefined {
  const slash = DATE_PATH.exec(key);
  const compact = slash ? undefined : EVENT_DAY.exec(key);
  const m = slash ?? compact;
  if (!m) return undefined;
  const dayEnd = Date.UTC(Number(m[2]), Number(m[3]) - 1, Number(m[4]) + 1);
  const first = floorMs - DAY_MS;
  if (!(dayEnd < first)) return undefined;
  const d = new Date(first).toISOString().slice(0, 10).split('-');
  const jump = m[1]! + (slash ? d.join('/') : d.join(''));
  return jump > key ? jump : undefined;
}

/** The deduplication key of an object's n-th event: a digest of bucket, key and ETag, and the position. */
export function eventKeyBase(bucket: string, key: string, etag: string): string {
  return createHash('sha256').update(`${bucket}\u0000${key}\u0000${etag}`).digest('base64url').slice(0, 22);
}
