// The structured difference between two mapping documents, for reviewing a version
// against another. Objects are compared by key and arrays by index (a rule inserted at the
// top shows as every later rule replaced plus one added at the end): positional, simple
// to read, and the same answer every time. Not an RFC 6902 patch meant to be applied in order.
import microdiff from 'microdiff';
import { canonicalJson } from '../../core/canonical.js';

export interface DocumentChange {
  op: 'add' | 'remove' | 'replace';
  /** JSON pointer (RFC 6901) into the documents, e.g. `/rules/0/set/2/from`. */
  path: string;
  /** The value in the first document (remove, replace). */
  from?: unknown;
  /** The value in the second document (add, replace). */
  to?: unknown;
}

function pointer(path: readonly (string | number)[]): string {
  return path.map((seg) => `/${String(seg).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

export function diffDocuments(a: Record<string, unknown>, b: Record<string, unknown>): DocumentChange[] {
  // Sorted keys on both sides: the order of the changes does not depend on how a
  // document's keys happened to be stored.
  const left = JSON.parse(canonicalJson(a)) as Record<string, unknown>;
  const right = JSON.parse(canonicalJson(b)) as Record<string, unknown>;
  return microdiff(left, right).map((d): DocumentChange => {
    const path = pointer(d.path);
    if (d.type === 'CREATE') return { op: 'add', path, to: d.value as unknown };
    if (d.type === 'REMOVE') return { op: 'remove', path, from: d.oldValue as unknown };
    return { op: 'replace', path, from: d.oldValue as unknown, to: d.value as unknown };
  });
}
