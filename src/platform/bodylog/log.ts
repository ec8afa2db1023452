// The body log: an append-only log of the bulk bytes of the embedded deployment (the queue's
// compressed payloads, the outbox's compressed bodies), so that the database keeps only a
// short reference to them (decision 0059). PGlite runs on the main thread; every megabyte
// handed to it as a SQL parameter is copied into its heap, written to its WAL and its
// table, and copied out again, where a file append is one write on the thread pool.
//
// Layout: <dir>/<seq>.log segment files, each a run of records
//   magic u32 | length u32 | crc32 u32 | body (length bytes)
// A reference `log:<seq>:<offset>:<length>` names a body (offset: where its header starts).
// Appends that arrive together are written with one writev and made durable with one
// fdatasync (group commit); a reference is returned only after that, so a row that commits
// a reference always names durable bytes. A restart never appends to an old segment (its
// tail may be torn): it starts a new one. A read checks the header and the checksum.
//
// Segments are deleted whole by collect(): a closed segment that no row references (the
// owner's live() query) and that holds no pinned body. A body is pinned from its append
// until the writer says its transaction ended (release): between the two, the row naming it
// may be about to commit, and the live query cannot see it yet.
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';

export const BODY_REF_PREFIX = 'log:';
const MAGIC = 0x5745_4c31; // "WEL1"
const HEADER = 12;
const SEGMENT_NAME = /^(\d{10})\.log$/;

/** A body the log cannot give back as written (missing segment, torn or altered bytes). */
export class BodyLogError extends Error {
  override readonly name = 'BodyLogError';
}

export interface BodyLogOptions {
  dir: string;
  /** A segment is closed once it holds this many bytes; default 32 MiB. */
  segmentBytes?: number;
  /** Rows still referencing bodies: the segment numbers they name. */
  live?: () => Promise<ReadonlySet<number>>;
  /** How often collect() runs on its own; 0: never (tests call it). Default 30 s. */
  collectEveryMs?: number;
  onError?: (err: unknown) => void;
}

interface Pending {
  bodies: readonly Buffer[];
  resolve: (refs: string[]) => void;
  reject: (err: unknown) => void;
}

interface Active {
  seq: number;
  file: FileHandle;
  size: number;
}

export interface BodyLogStats {
  segments: number;
  bytes: number;
  appends: number;
  syncs: number;
  collected: number;
}

export function isBodyRef(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(BODY_REF_PREFIX);
}

/** The segment a reference names. */
export function refSegment(ref: string): number {
  return Number(ref.slice(BODY_REF_PREFIX.length, ref.indexOf(':', BODY_REF_PREFIX.length)));
}

function parseRef(ref: string): { seq: number; offset: number; length: number } {
  const parts = ref.slice(BODY_REF_PREFIX.length).split(':');
  const [seq, offset, length] = parts.map(Number);
  if (
    parts.length !== 3 ||
    !Number.isSafeInteger(seq) ||
    !Number.isSafeInteger(offset) ||
    !Number.isSafeInteger(length)
  ) {
    throw new BodyLogError(`not a body reference: ${JSON.stringify(ref)}`);
  }
  return { seq: seq!, offset: offset!, length: length! };
}

const segmentFile = (dir: string, seq: number) => path.join(dir, `${String(seq).padStart(10, '0')}.log`);

export class BodyLog {
  readonly dir: string;
  readonly #segmentBytes: number;
  readonly #live: (() => Promise<ReadonlySet<number>>) | undefined;
  readonly #onError: (err: unknown) => void;
  /** Segments on disk (closed and active), with their sizes. */
  readonly #segments = new Map<number, number>();
  readonly #readers = new Map<number, Promise<FileHandle>>();
  /** Pinned references by segment. */
  readonly #pins = new Map<number, Set<string>>();
  #nextSeq: number;
  #active: Active | undefined;
  #queue: Pending[] = [];
  #flushing: Promise<void> | undefined;
  #collecting: Promise<number> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #appendedSinceCollect = false;
  readonly #stats = { appends: 0, syncs: 0, collected: 0 };

  constructor(options: BodyLogOptions) {
    this.dir = path.resolve(options.dir);
    this.#segmentBytes = options.segmentBytes ?? 32 * 1024 * 1024;
    this.#live = options.live;
    this.#onError = options.onError ?? (() => {});
    mkdirSync(this.dir, { recursive: true });
    let max = 0;
    for (const name of readdirSync(this.dir)) {
      const m = SEGMENT_NAME.exec(name);
      if (!m) continue;
      const seq = Number(m[1]);
      this.#segments.set(seq, statSync(path.join(this.dir, name)).size);
      max = Math.max(max, seq);
    }
    // Never append after a tail a crash may have torn: the next segment is new.
    this.#nextSeq = max + 1;
    const every = options.collectEveryMs ?? 30_000;
    if (every > 0 && this.#live) {
      this.#timer = setInterval(() => {
        if (this.#worthCollecting()) void this.collect().catch(this.#onError);
      }, every);
      this.#timer.unref();
    }
  }

  /**
   * Makes the bodies durable; returns their references, pinned until release(). Appends that
   * arrive while a write is under way go together in the next one.
   */
  append(bodies: readonly Buffer[]): Promise<string[]> {
    if (this.#closed) return Promise.reject(new BodyLogError('the body log is closed'));
    if (bodies.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.#queue.push({ bodies, resolve, reject });
      this.#kick();
    });
  }

  #kick(): void {
    if (this.#flushing) return;
    this.#flushing = this.#flush().finally(() => {
      this.#flushing = undefined;
      // An append that came after the loop's last look at the queue.
      if (this.#queue.length > 0) this.#kick();
    });
  }

  /** The writer's transaction ended (committed or not): the references may be collected once no row names them. */
  release(refs: Iterable<string>): void {
    for (const ref of refs) {
      if (!isBodyRef(ref)) continue;
      const seq = refSegment(ref);
      const set = this.#pins.get(seq);
      if (!set) continue;
      set.delete(ref);
      if (set.size === 0) this.#pins.delete(seq);
    }
  }

  async read(ref: string): Promise<Buffer> {
    const { seq, offset, length } = parseRef(ref);
    if (!this.#segments.has(seq)) throw new BodyLogError(`body ${ref}: segment ${seq} is not in ${this.dir}`);
    const file = await this.#reader(seq);
    const buf = Buffer.allocUnsafe(HEADER + length);
    const { bytesRead } = await file.read(buf, 0, buf.length, offset);
    if (bytesRead !== buf.length)
      throw new BodyLogError(`body ${ref}: the segment ends after ${bytesRead} of ${buf.length} bytes`);
    if (buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== length)
      throw new BodyLogError(`body ${ref}: no record starts there`);
    const body = buf.subarray(HEADER);
    if (crc32(body) !== buf.readUInt32LE(8))
      throw new BodyLogError(`body ${ref}: checksum mismatch (the bytes changed on disk)`);
    return body;
  }

  /**
   * Deletes the closed segments that no row names and no writer has pinned; returns how many.
   * The active segment is closed first when nothing of it is pinned or being written, so a
   * quiet Weir gives all its space back.
   */
  collect(): Promise<number> {
    this.#collecting ??= this.#collect().finally(() => {
      this.#collecting = undefined;
    });
    return this.#collecting;
  }

  stats(): BodyLogStats {
    let bytes = 0;
    for (const size of this.#segments.values()) bytes += size;
    return { segments: this.#segments.size, bytes, ...this.#stats };
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#flushing;
    await this.#collecting?.catch(() => 0);
    await this.#active?.file.close();
    this.#active = undefined;
    for (const reader of this.#readers.values()) await (await reader.catch(() => undefined))?.close();
    this.#readers.clear();
  }

  #worthCollecting(): boolean {
    return this.#appendedSinceCollect || this.#segments.size > (this.#active ? 1 : 0);
  }

  async #collect(): Promise<number> {
    if (!this.#live || this.#closed) return 0;
    this.#appendedSinceCollect = false;
    // The active segment closes when nothing is being written to it and none of its bodies is
    // pinned: what it holds can then be given back like any other segment's.
    const active = this.#active;
    if (active && !this.#flushing && this.#queue.length === 0 && active.size > 0 && !this.#pins.has(active.seq)) {
      await this.#closeActive();
    }
    // Candidates are fixed before the live query: a closed segment takes no new body, and one
    // unpinned now has every reference to it committed (visible to the query) or abandoned.
    const candidates = [...this.#segments.keys()].filter((seq) => seq !== this.#active?.seq && !this.#pins.has(seq));
    if (candidates.length === 0) return 0;
    const live = await this.#live();
    let removed = 0;
    for (const seq of candidates) {
      if (live.has(seq)) continue;
      const reader = this.#readers.get(seq);
      this.#readers.delete(seq);
      if (reader) await (await reader).close();
      await unlink(segmentFile(this.dir, seq)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
      this.#segments.delete(seq);
      removed++;
    }
    this.#stats.collected += removed;
    return removed;
  }

  #reader(seq: number): Promise<FileHandle> {
    let reader = this.#readers.get(seq);
    if (!reader) {
      reader = open(segmentFile(this.dir, seq), 'r');
      reader.catch(() => this.#readers.delete(seq));
      this.#readers.set(seq, reader);
    }
    return reader;
  }

  async #closeActive(): Promise<void> {
    const active = this.#active;
    if (!active) return;
    this.#active = undefined;
    await active.file.close();
  }

  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const group = this.#queue;
      this.#queue = [];
      try {
        const refs = await this.#write(group);
        group.forEach((p, i) => p.resolve(refs[i]!));
      } catch (err) {
        // The tail of the segment may hold part of this write: never append after it.
        await this.#closeActive().catch(() => {});
        for (const p of group) p.reject(err);
      }
    }
  }

  async #write(group: readonly Pending[]): Promise<string[][]> {
    if (this.#active && this.#active.size >= this.#segmentBytes) await this.#closeActive();
    if (!this.#active) {
      const seq = this.#nextSeq++;
      this.#active = { seq, file: await open(segmentFile(this.dir, seq), 'wx'), size: 0 };
      this.#segments.set(seq, 0);
      // The new file's name must survive a crash as much as its bytes.
      const dir = await open(this.dir, 'r');
      try {
        await dir.datasync();
      } finally {
        await dir.close();
      }
    }
    const active = this.#active;
    const buffers: Buffer[] = [];
    const refs: string[][] = [];
    let offset = active.size;
    for (const p of group) {
      const mine: string[] = [];
      for (const body of p.bodies) {
        const header = Buffer.allocUnsafe(HEADER);
        header.writeUInt32LE(MAGIC, 0);
        header.writeUInt32LE(body.length, 4);
        header.writeUInt32LE(crc32(body), 8);
        buffers.push(header, body);
        mine.push(`${BODY_REF_PREFIX}${active.seq}:${offset}:${body.length}`);
        offset += HEADER + body.length;
      }
      refs.push(mine);
    }
    // writev takes at most IOV_MAX (1024) buffers a call.
    let position = active.size;
    for (let i = 0; i < buffers.length; i += 1024) {
      const slice = buffers.slice(i, i + 1024);
      const { bytesWritten } = await active.file.writev(slice, position);
      const expected = slice.reduce((n, b) => n + b.length, 0);
      if (bytesWritten !== expected)
        throw new BodyLogError(
          `short write to ${segmentFile(this.dir, active.seq)}: ${bytesWritten} of ${expected} bytes`,
        );
      position += bytesWritten;
    }
    await active.file.datasync();
    this.#stats.syncs++;
    this.#stats.appends += buffers.length / 2;
    active.size = offset;
    this.#segments.set(active.seq, offset);
    this.#appendedSinceCollect = true;
    const pins = this.#pins.get(active.seq) ?? new Set<string>();
    for (const mine of refs) for (const ref of mine) pins.add(ref);
    this.#pins.set(active.seq, pins);
    return refs;
  }
}
