// docs/mappings.md stays true: every worked example (```json mapping / raw / ocsf blocks)
// compiles, maps its raw event to exactly the OCSF shown, and that output is valid OCSF;
// the casts table lists every cast served by the API.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { officialCatalog } from '../../../test/support/ocsf-official.js';
import { createValidator, ocsfCatalog } from '../../ocsf/index.js';
import { TYPE_CASTS } from './casts.js';
import { compileMapping, validateMappingDocument } from './compile.js';
import type { MappingDocument } from './types.js';

const text = readFileSync(new URL('../../../docs/mappings.md', import.meta.url), 'utf8');
const RECEIVED = Date.UTC(2024, 2, 5, 14, 22, 40);

interface Example {
  mapping: MappingDocument;
  pairs: { raw: Record<string, unknown>; ocsf: Record<string, unknown> }[];
}

function examples(): Example[] {
  const out: Example[] = [];
  let raw: Record<string, unknown> | undefined;
  for (const m of text.matchAll(/```json (mapping|raw|ocsf)\n([\s\S]*?)\n```/g)) {
    const value = JSON.parse(m[2]!) as Record<string, unknown>;
    if (m[1] === 'mapping') out.push({ mapping: value as unknown as MappingDocument, pairs: [] });
    else if (m[1] === 'raw') raw = value;
    else {
      expect(raw, 'an ocsf block follows a raw block').toBeDefined();
      out[out.length - 1]!.pairs.push({ raw: raw!, ocsf: value });
      raw = undefined;
    }
  }
  return out;
}

describe('docs/mappings.md', () => {
  const found = examples();
  const catalog = ocsfCatalog();
  const validators = [createValidator(catalog), createValidator(officialCatalog())];

  it('has worked examples', () => {
    expect(found.length).toBeGreaterThanOrEqual(3);
    for (const ex of found) expect(ex.pairs.length).toBeGreaterThan(0);
  });

  it.each(found.map((ex, i) => [i, ex] as const))('example %i maps as shown, to valid OCSF', (_i, ex) => {
    expect(validateMappingDocument(ex.mapping, catalog)).toEqual([]);
    const m = compileMapping(ex.mapping, catalog);
    for (const { raw, ocsf } of ex.pairs) {
      const r = m.map(raw, { receivedAtMs: RECEIVED });
      expect(r.ok && r.event).toEqual(ocsf);
      for (const v of validators) expect(v.validate(ocsf)).toEqual([]);
    }
  });

  it('lists every cast', () => {
    for (const c of TYPE_CASTS) expect(text).toContain(`| \`${c.name}\` | ${c.output} |`);
  });
});
