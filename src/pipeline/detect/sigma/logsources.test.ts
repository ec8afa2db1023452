// The shape of the published logsource table (logsources*.ts): every OCSF path it names
// (fields, composite parts, `where` conditions) exists in every class of its variant in OCSF
// 1.8.0 (a vendor field kept under `unmapped` excepted: anything goes there); each variant
// names rules its mappings have, holds exactly the classes of those rules, and is pinned to
// the mapping's product (and, keyed by EventID, to its own event ids); no table has two names
// Sigma would read as one. What the mappings write is held by test/sigma/tables.test.ts.
import { describe, expect, it } from 'vitest';
import { ocsfCatalog } from '../../../ocsf/index.js';
import { builtin as mapping } from '../../../../test/support/sigma/written.js';
import { logsourceHeading as heading } from './docs.js';
import type { SigmaField } from './logsource-types.js';
import { LOGSOURCES } from './logsources.js';

/** The OCSF attributes a field reads (a composite field: its parts). */
const partsOf = (f: SigmaField): string[] =>
  f.compose === 'user'
    ? [`${f.path}.domain`, `${f.path}.name`]
    : f.compose === 'regvalue'
      ? [`${f.path}.path`, `${f.path}.name`]
      : f.compose === 'hashes' || f.compose === 'hash'
        ? [`${f.path}[*].value`]
        : [f.path];

const variants = LOGSOURCES.flatMap((ls) => ls.variants.map((v) => ({ at: heading(ls), v })));

describe('the Sigma logsource table', () => {
  it('names only OCSF paths every class of the variant has', () => {
    const cat = ocsfCatalog();
    const missing: string[] = [];
    for (const { at, v } of variants) {
      const paths = [
        ...(v.where ?? []).map((c) => ('field' in c ? c.field : '')),
        ...Object.values(v.fields).flatMap((f) => (f.also ? [] : partsOf(f))),
      ];
      for (const p of paths)
        for (const c of v.classes)
          if (cat.resolve(c, p.replaceAll('[*]', '[]')) === undefined) missing.push(`${at} (${c}): ${p}`);
    }
    expect(missing).toEqual([]);
  });

  it('keeps vendor fields only under unmapped', () => {
    for (const { at, v } of variants)
      for (const f of Object.values(v.fields))
        if (f.also)
          expect(
            [f.path, ...f.also].every((p) => p.startsWith('unmapped.')),
            at,
          ).toBe(true);
  });

  it("takes each variant's events from named rules of the mappings, in exactly the variant's classes", () => {
    for (const { at, v } of variants) {
      const classes = new Set<number>();
      for (const s of v.sources) {
        const m = mapping(s.mapping);
        expect(m, `${at}: ${s.mapping}`).toBeDefined();
        for (const name of s.rules) {
          const rule = m!.document.rules.find((r) => r.name === name);
          expect(rule, `${at}: ${s.mapping} rule "${name}"`).toBeDefined();
          classes.add(rule!.class_uid);
        }
      }
      expect([...classes].sort(), at).toEqual([...v.classes].sort());
    }
  });

  it('pins every variant of one mapping to its product, and a variant keyed by EventID to its ids', () => {
    for (const { at, v } of variants) {
      const products = [...new Set(v.sources.map((s) => mapping(s.mapping)!.document.product.name))];
      if (products.length === 1)
        expect(v.where, at).toContainEqual({ field: 'metadata.product.name', op: 'eq', value: products[0] });
      if (!v.eventIds) continue;
      const ids = v.eventIds.length === 1 ? { op: 'eq', value: v.eventIds[0] } : { op: 'in', value: v.eventIds };
      expect(v.where, at).toContainEqual({ field: 'metadata.event_code', ...ids });
      expect(
        Object.keys(v.fields).map((k) => k.toLowerCase()),
        at,
      ).not.toContain('eventid');
    }
  });

  it('has no two field names that differ only in case (Sigma matches names ignoring case), and lower-case enum values', () => {
    for (const { at, v } of variants) {
      const names = Object.keys(v.fields).map((k) => k.toLowerCase());
      expect(names.length, at).toBe(new Set(names).size);
      for (const [name, f] of Object.entries(v.fields))
        for (const k of Object.keys(f.values ?? {})) expect(k, `${at}: ${name}`).toBe(k.toLowerCase());
    }
  });
});
