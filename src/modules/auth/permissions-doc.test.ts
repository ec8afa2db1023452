// docs/permissions.md publishes the role -> permission table; it is generated from the
// code so the two never drift. WEIR_UPDATE_DOCS=1 rewrites the doc instead of failing.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../../core/access.js';
import { ROLE_PERMISSIONS, ROLES } from '../../core/roles.js';

const DOC = path.resolve(import.meta.dirname, '../../../docs/permissions.md');
const BEGIN = '<!-- role-table:begin (generated, do not edit by hand) -->';
const END = '<!-- role-table:end -->';

function roleTable(): string {
  const lines = [`| Permission | ${ROLES.join(' | ')} |`, `|---|${ROLES.map(() => ':-:|').join('')}`];
  for (const p of PERMISSIONS)
    lines.push(`| \`${p}\` | ${ROLES.map((r) => (ROLE_PERMISSIONS[r].has(p) ? 'yes' : '')).join(' | ')} |`);
  return lines.join('\n');
}

describe('docs/permissions.md', () => {
  it('carries the role -> permission table of src/core/roles.ts', () => {
    const doc = readFileSync(DOC, 'utf8');
    const start = doc.indexOf(BEGIN);
    const end = doc.indexOf(END);
    expect(start, 'the generated-table markers are missing').toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    const current = doc.slice(start + BEGIN.length, end).trim();
    const expected = roleTable();
    if (current !== expected && process.env.WEIR_UPDATE_DOCS) {
      writeFileSync(DOC, `${doc.slice(0, start + BEGIN.length)}\n${expected}\n${doc.slice(end)}`);
      return;
    }
    expect(current, 'docs/permissions.md is out of date: run with WEIR_UPDATE_DOCS=1').toBe(expected);
  });
});
