// Drift on the built-in mappings: the vendor fields a built-in mapping deliberately leaves under
// `unmapped` are declared as known_fields, so a new integration's drift list starts empty and
// shows only what the vendor sends beyond its documented events (the fixtures and the mapping's
// own test cases, which the console sends as sample events).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ocsfCatalog } from '../../ocsf/index.js';
import { BUILTIN_MAPPINGS } from '../../pipeline/normalize/builtin/index.js';
import { compileMapping } from '../../pipeline/normalize/compile.js';
import { unreadLeaves } from './aggregates.js';

type Raw = Record<string, unknown>;

function fixtures(platform: string, stream: string): Raw[] {
  const url = new URL(`../../connectors/${platform}/fixtures/${stream}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as Raw[];
}

function driftOf(raws: Raw[], expected: ReadonlySet<string>): string[] {
  const paths = new Set<string>();
  for (const raw of raws) unreadLeaves(raw, expected, (path) => paths.add(path));
  return [...paths].sort();
}

describe.each(BUILTIN_MAPPINGS.map((m) => [`${m.platform}/${m.stream}`, m] as const))('%s', (_key, builtin) => {
  const mapping = compileMapping(builtin.document, ocsfCatalog());
  // As the worker samples drift (stage.ts): the event the rules read, with the fields its parse steps found.
  const parsed = (raw: Raw): Raw => {
    const r = mapping.map(raw, { receivedAtMs: 0 });
    return (r.ok ? r.input : undefined) ?? raw;
  };
  const raws = fixtures(builtin.platform, builtin.stream).map(parsed);
  // The cases' inputs, as "Send sample events" pushes them (a text case as the line it is).
  const inputs = (builtin.document.tests ?? [])
    .filter((c) => c.quarantine === undefined)
    .map((c) => parsed((c.input as Raw | undefined) ?? { message: c.input_text }));

  it('reports no drift for the documented events, and a field the vendor starts sending', () => {
    expect(driftOf(raws, mapping.expected)).toEqual([]);
    const changed = fixtures(builtin.platform, builtin.stream).map((raw) =>
      parsed({ ...raw, x_new_vendor_field: { flag: true } }),
    );
    expect(driftOf(changed, mapping.expected)).toEqual(['x_new_vendor_field.flag']);
  });

  it("reports no drift for its own test cases' inputs (the console's sample events)", () => {
    expect(driftOf(inputs, mapping.expected)).toEqual([]);
  });

  it('declares only known fields that its events carry and it does not read', () => {
    // A mapping that reads every field of its documented events declares none.
    const known = builtin.document.known_fields ?? [];
    for (const path of known) {
      expect(mapping.reads.has(path), `${path} is read`).toBe(false);
      // Without this one entry, some fixture field would be reported.
      const without = new Set([...mapping.reads, ...known.filter((k) => k !== path)]);
      expect(driftOf([...raws, ...inputs], without).length, `${path} covers nothing`).toBeGreaterThan(0);
    }
  });
});
