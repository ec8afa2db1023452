// One page of an object collection: list, pick the next new object, read its events up to the
// page size. An object read across pages keeps its open stream in this process between pages
// (a gzip stream cannot be resumed at an offset); another process, or this one after the
// reader expired, opens the object again and skips the events already accepted.
import { VendorError, type FetchRequest, type Page } from '../sdk.js';
import type { S3Source } from './client.js';
import {
  completePass,
  encodeCursor,
  eventKeyBase,
  floorOf,
  isNew,
  remember,
  skipTo,
  type CursorState,
  type InProgress,
} from './cursor.js';
import { layoutOfKey, objectEvents, streamOfKey, type LayoutChoice } from './layouts.js';

type Raw = Record<string, unknown>;

interface OpenReader {
  events: AsyncGenerator<Raw>;
  /** Lets go of the S3 client the stream reads through. */
  release: () => void;
  /** Events taken from it so far. */
  position: number;
  at: number;
}

const READER_IDLE_MS = 120_000;
const MAX_READERS = 32;
/** List requests one page may make before it hands back (more = true) so the cursor moves. */
const MAX_LISTS_PER_PAGE = 20;
const LIST_KEYS = 1000;
const readers = new Map<string, OpenReader>();

function dispose(r: OpenReader | undefined): void {
  if (!r) return;
  void r.events.return(undefined).then(r.release, r.release);
}

function prune(now: number): void {
  for (const [id, r] of readers)
    if (now - r.at > READER_IDLE_MS || readers.size > MAX_READERS) {
      readers.delete(id);
      dispose(r);
    }
}

export interface PageSettings {
  source: S3Source;
  /** Identifies the store (endpoint and bucket) in the readers kept between pages. */
  store: string;
  layout: LayoutChoice;
  lookbackMs: number;
  now: number;
}

/** The error of an object that cannot be read as its layout says, as one event the quarantine shows. */
function unreadable(obj: InProgress, err: VendorError): Raw {
  return { s3_object: obj.key, s3_etag: obj.etag, error: err.message };
}

async function readObject(
  s: PageSettings,
  obj: InProgress,
  budget: number,
  out: { events: Raw[]; keys: string[] },
): Promise<boolean> {
  const id = `${s.store}\u0000${obj.key}\u0000${obj.etag}`;
  const base = eventKeyBase(s.source.bucket, obj.key, obj.etag);
  let reader = readers.get(id);
  readers.delete(id);
  if (reader && reader.position !== obj.done) {
    dispose(reader);
    reader = undefined;
  }
  const what = `s3://${s.source.bucket}/${obj.key}`;
  try {
    if (!reader) {
      const body = await s.source.get(obj.key, obj.etag);
      // Deleted or replaced since it was listed: a new version is listed (and read) as a new object.
      if (!body) return true;
      const layout = s.layout === 'auto' ? (layoutOfKey(obj.key) ?? 'generic') : s.layout;
      reader = { events: objectEvents(body, layout, what), release: s.source.hold(), position: 0, at: s.now };
      while (reader.position < obj.done) {
        if ((await reader.events.next()).done) {
          dispose(reader);
          return true;
        }
        reader.position++;
      }
    }
    for (let taken = 0; taken < budget; taken++) {
      const next = await reader.events.next();
      if (next.done) {
        dispose(reader);
        return true;
      }
      out.events.push(next.value);
      out.keys.push(`${base}:${reader.position}`);
      reader.position++;
    }
  } catch (err) {
    dispose(reader);
    if (!(err instanceof VendorError && err.kind === 'invalid_response')) throw err;
    // Unreadable as its layout says (not Parquet, too large to read whole): the object ends
    // with one event naming why, instead of holding the collection at this object forever.
    out.events.push(unreadable(obj, err));
    out.keys.push(`${base}:error`);
    return true;
  }
  reader.at = s.now;
  readers.set(id, reader);
  prune(s.now);
  return false;
}

/** One page of the stream: events of new objects, the cursor after them, and whether more is waiting. */
export async function collectPage(s: PageSettings, state: CursorState, req: FetchRequest): Promise<Page> {
  const out = { events: [] as Raw[], keys: [] as string[] };
  let queue: { key: string; etag: string; modifiedMs: number }[] = [];
  let next = 0;
  let listed = false;
  let end = false;
  let lists = 0;
  for (;;) {
    if (state.obj) {
      const obj = state.obj;
      const before = out.events.length;
      const finished = await readObject(s, obj, req.pageSize - out.events.length, out);
      if (!finished) {
        obj.done += out.events.length - before;
        return { ...out, next: encodeCursor(state), more: true };
      }
      remember(state, obj.key, obj.lm);
      state.after = obj.key;
      delete state.obj;
      if (out.events.length >= req.pageSize) return { ...out, next: encodeCursor(state), more: true };
    }
    const floor = floorOf(state, s.lookbackMs);
    while (next < queue.length) {
      const o = queue[next++]!;
      state.max = Math.max(state.max, o.modifiedMs);
      if (streamOfKey(o.key, s.layout) === req.stream && isNew(state, o.key, o.modifiedMs, s.lookbackMs)) {
        state.obj = { key: o.key, etag: o.etag, lm: o.modifiedMs, done: 0 };
        break;
      }
      state.after = o.key;
      const jump = skipTo(o.key, floor);
      if (jump) {
        state.after = jump;
        queue = [];
        next = 0;
        listed = false;
        break;
      }
    }
    if (state.obj) continue;
    if (listed && end) {
      completePass(state, s.lookbackMs);
      return { ...out, next: encodeCursor(state), more: false };
    }
    if (lists >= MAX_LISTS_PER_PAGE) return { ...out, next: encodeCursor(state), more: true };
    const page = await s.source.list(state.after, LIST_KEYS);
    lists++;
    queue = page.objects;
    next = 0;
    listed = true;
    end = !page.truncated;
  }
}
