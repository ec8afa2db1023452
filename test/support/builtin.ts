// The built-in mappings on their vendor fixtures, for the field-level tests of each stream:
// every output is checked against the official OCSF schema as it is mapped.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { createValidator, ocsfCatalog } from '../../src/ocsf/index.js';
import { builtinMapping } from '../../src/pipeline/normalize/builtin/index.js';
import { compileMapping } from '../../src/pipeline/normalize/compile.js';
import { officialCatalog } from './ocsf-official.js';

export type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- fixtures are free-form vendor JSON

const official = createValidator(officialCatalog());

/** The fixtures of a stream and a function mapping any raw event with its built-in mapping. */
export function stream(platform: string, name: string): { raw: Raw[]; out: Raw[]; map: (raw: Raw) => Raw } {
  const mapping = compileMapping(builtinMapping(platform, name)!.document, ocsfCatalog());
  const map = (raw: Raw): Raw => {
    const r = mapping.map(raw, { receivedAtMs: 0 });
    if (!r.ok) throw new Error(`${r.kind}: ${r.detail}`);
    expect(official.validate(r.event)).toEqual([]);
    return r.event;
  };
  const raw = JSON.parse(
    readFileSync(new URL(`../../src/connectors/${platform}/fixtures/${name}.json`, import.meta.url), 'utf8'),
  ) as Raw[];
  return { raw, out: raw.map(map), map };
}

export const kind = (e: Raw) => [e.class_uid, e.activity_id, e.activity_name];
