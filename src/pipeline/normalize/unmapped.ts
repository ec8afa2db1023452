// What a mapping leaves behind: the raw fields whose values reach no OCSF attribute are kept
// under `unmapped`, with their nesting. The paths the document reads are folded at compile
// time into a tree; per event only the keys at levels where the tree has partial reads are
// visited, and an unread key's whole subtree is referenced, never copied or walked.
import type { PathSegment } from './paths.js';

interface ReadNode {
  /** The whole value at this node is read. */
  full: boolean;
  /** Reads below a key of this object. */
  keys: Map<string, ReadNode> | null;
  /** Reads below the elements of this array (`[*]`, `[n]` and `each` all read every element). */
  elem: ReadNode | null;
  /**
   * The key met at each position of the last object visited here, and its node: events of
   * one stream share their key order, so most lookups are an identity comparison.
   */
  seenKeys: string[] | null;
  seenNodes: (ReadNode | undefined)[] | null;
}

/** Key positions remembered per node; keys beyond are looked up every time. */
const SEEN_KEYS = 64;

const node = (): ReadNode => ({ full: false, keys: null, elem: null, seenKeys: null, seenNodes: null });

export class ReadTree {
  private readonly root = node();

  /** Records that the value at `segs` is read (with everything below it). */
  add(segs: readonly PathSegment[]): void {
    let n = this.root;
    for (const s of segs) {
      if (n.full) return;
      n.seenKeys = n.seenNodes = null; // the key -> node answers may change
      if (s.t === 'key') {
        n.keys ??= new Map();
        let next = n.keys.get(s.k);
        if (!next) n.keys.set(s.k, (next = node()));
        n = next;
      } else {
        n = n.elem ??= node();
      }
    }
    n.full = true;
    n.keys = null;
    n.elem = null;
  }

  /** True when the document reads nothing: every raw field is unmapped. */
  get empty(): boolean {
    return !this.root.full && this.root.keys === null && this.root.elem === null;
  }

  /**
   * The unread part of `raw`, or undefined when everything was read. Unread subtrees are
   * the raw event's own objects (shared, not copied): treat the result as read-only.
   */
  extract(raw: Record<string, unknown>): Record<string, unknown> | undefined {
    if (this.empty) return raw;
    const r = extract(raw, this.root);
    return typeof r === 'object' && r !== null && !Array.isArray(r) ? (r as Record<string, unknown>) : undefined;
  }
}

function put(o: Record<string, unknown> | undefined, k: string, v: unknown): Record<string, unknown> {
  const res = o ?? {};
  // A JSON `__proto__` key is an own property; plain assignment would set the prototype.
  if (k === '__proto__')
    Object.defineProperty(res, k, { value: v, enumerable: true, writable: true, configurable: true });
  else res[k] = v;
  return res;
}

function extract(value: unknown, n: ReadNode): unknown {
  if (n.full) return undefined;
  if (Array.isArray(value)) {
    if (!n.elem) return value;
    let out: unknown[] | undefined;
    for (const el of value) {
      const r = extract(el, n.elem);
      if (r !== undefined) (out ??= []).push(r);
    }
    return out;
  }
  if (typeof value === 'object' && value !== null) {
    const obj = value as Record<string, unknown>;
    if (n.keys) {
      const keys = n.keys;
      const seenKeys = (n.seenKeys ??= new Array<string>(SEEN_KEYS).fill(''));
      const seenNodes = (n.seenNodes ??= new Array<ReadNode | undefined>(SEEN_KEYS).fill(undefined));
      let position = 0;
      let res: Record<string, unknown> | undefined;
      for (const k in obj) {
        const at = position++;
        let child: ReadNode | undefined;
        if (at < SEEN_KEYS && seenKeys[at] === k) child = seenNodes[at];
        else {
          child = keys.get(k);
          if (at < SEEN_KEYS) {
            seenKeys[at] = k;
            seenNodes[at] = child;
          }
        }
        if (!child) res = put(res, k, obj[k]);
        else if (!child.full) {
          const r = extract(obj[k], child);
          if (r !== undefined) res = put(res, k, r);
        }
      }
      return res;
    }
    // An object where the document reads elements: it stood in for a one-element list.
    return n.elem ? extract(obj, n.elem) : value;
  }
  // A scalar read as a whole element (`each` or `[*]` over a lone value, which stands for a
  // one-element list) reached the output; one where the document expected structure did not.
  return n.elem?.full ? undefined : value;
}
