// The Sigma logsource tables (src/pipeline/detect/sigma/logsources*.ts) held against what the
// built-in mappings write: every field of a variant is written at its OCSF path, from the
// vendor key the field names, by one of the variant's mapping rules (or the mapping's
// defaults). So a field that compiles is a field a rule on it can match; a field the mappings
// never write is not in a table, and a rule on it is refused at import.
import { describe, expect, it } from 'vitest';
import type { SigmaField } from '../../src/pipeline/detect/sigma/logsource-types.js';
import { LOGSOURCES } from '../../src/pipeline/detect/sigma/logsources.js';
import { logsourceHeading } from '../../src/pipeline/detect/sigma/docs.js';
import { builtin, writtenPaths } from '../support/sigma/written.js';

/**
 * The activity is the rule's own (`activity_id`: a number, or a lookup from a key), not an
 * assignment: a field on it is written when each source rule's activity is a constant the
 * variant's values decide, or a lookup from the field's key.
 */
function activityFrom(mapping: string, rules: string[], key: string): boolean {
  const doc = builtin(mapping).document;
  return rules.every((name) => {
    const a = doc.rules.find((r) => r.name === name)?.activity_id as unknown;
    if (typeof a === 'number') return true;
    const from = (a as { from?: string | string[] } | undefined)?.from;
    return (Array.isArray(from) ? from : [from]).some((k) => typeof k === 'string' && readsKey(k, key));
  });
}

/** The OCSF attributes a field is written to, and whether the vendor key must be the one read. */
function parts(f: SigmaField): { paths: string[]; keyed: boolean } {
  switch (f.compose) {
    case 'user':
      return { paths: [`${f.path}.name`], keyed: true };
    case 'regvalue':
      return { paths: [`${f.path}.path`, `${f.path}.name`], keyed: true };
    // The hashes list is written from the parsed `hashes` entries (the mapping's kv step), not the raw key.
    case 'hashes':
    case 'hash':
      return { paths: [`${f.path}[*].value`], keyed: false };
    // Written when the vendor's flag is true (a condition on the key, not a read of it).
    case 'flag':
      return { paths: [f.path], keyed: false };
    default:
      return { paths: [f.path], keyed: true };
  }
}

/** A `from` key reads the vendor key: the same, or the same below a wrapper (`EventData.Image`). */
const readsKey = (from: string, key: string) => from === key || from.endsWith(`.${key}`);

/**
 * The path is written from the key. An element of a list (`answers[*].rdata`) is written by an
 * `each` over the list, its inner keys relative to the element: the list must be read from the
 * key's list part (`dns.answers` of `dns.answers[*].rdata`, or the whole key), and the element's
 * path from its inner part when the key has one.
 */
function readsFrom(w: Map<string, Set<string>>, path: string, key: string): boolean {
  if ([...w.get(path)!].some((from) => readsKey(from, key))) return true;
  const at = path.indexOf('[*]');
  if (at < 0) return false;
  const [listKey, inner] = key.split('[*].') as [string, string | undefined];
  const list = w.get(path.slice(0, at));
  return (
    list !== undefined &&
    [...list].some((from) => readsKey(from, listKey)) &&
    (inner === undefined || [...w.get(path)!].some((from) => readsKey(from, inner)))
  );
}

describe('the Sigma logsource tables', () => {
  const rows = LOGSOURCES.flatMap((ls) =>
    ls.variants.flatMap((v, i) =>
      Object.entries(v.fields).map(([name, f]) => ({ where: `${logsourceHeading(ls)} #${i + 1}`, v, name, f })),
    ),
  );

  it('have fields', () => expect(rows.length).toBeGreaterThan(100));

  it('name only fields the built-in mappings write, from the vendor key they read', () => {
    const missing: string[] = [];
    for (const { where, v, name, f } of rows) {
      const written = v.sources.map((s) => writtenPaths(s.mapping, s.rules));
      const key = f.raw ?? name;
      if (f.also) {
        // A vendor field kept under `unmapped`: no rule of the variant (nor the defaults) reads it, so it stays there.
        const reader = written.flatMap((w) =>
          [...w].filter(([, froms]) => [...froms].some((from) => readsKey(from, key))).map(([p]) => p),
        );
        if (reader.length) missing.push(`${where}: ${name} is read into ${reader.join(', ')}, not kept under unmapped`);
        continue;
      }
      const { paths, keyed } = parts(f);
      for (const p of paths) {
        // A value the compiler maps to the class the mapping chose by it (ObjectType File or Key).
        if (p === 'class_uid' && f.values) continue;
        if (p === 'activity_id') {
          if (!v.sources.every((s) => activityFrom(s.mapping, s.rules, key)))
            missing.push(`${where}: ${name} -> activity_id from "${key}"`);
          continue;
        }
        const ok = written.some((w) => w.has(p) && (!keyed || readsFrom(w, p, key)));
        if (!ok) missing.push(`${where}: ${name} -> ${p}${keyed ? ` from "${key}"` : ''}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
