// The rules of the built-in mapping review (docs/decisions/0045-builtin-mapping-review.md), held
// over every raw event of every built-in's own test cases: each maps to OCSF the official 1.8.0
// schema accepts, no event whose type says create, add, remove or delete is left as Other, audit
// records are never of Unknown severity, and cloud and SaaS sources name their provider.
import { describe, expect, it } from 'vitest';
import { officialCatalog } from '../../../../test/support/ocsf-official.js';
import { createValidator, ocsfCatalog } from '../../../ocsf/index.js';
import { caseInput } from '../cases.js';
import { compileMapping } from '../compile.js';
import { BUILTIN_MAPPINGS } from './index.js';

type Raw = Record<string, unknown>;

const official = createValidator(officialCatalog());
const PROVIDERS: Record<string, string> = {
  'okta/system_log': 'Okta',
  'microsoft_graph/signins': 'Azure',
  'microsoft_graph/directory_audits': 'Azure',
  'microsoft_graph/security_alerts': 'Azure',
  'aws_cloudtrail/cloudtrail': 'AWS',
  'github/audit_log': 'GitHub',
  'google_workspace/login': 'Google Workspace',
  'google_workspace/admin': 'Google Workspace',
};
// Streams of findings, whose severity is the vendor's (Unknown when the vendor says so).
const FINDINGS = new Set(['microsoft_graph/security_alerts', 'crowdstrike_falcon/alerts']);
const VERB = /(^|[._\s-])(create|add|remove|delete)([._\s-]|$)/i;

describe.each(BUILTIN_MAPPINGS.map((m) => [`${m.platform}/${m.stream}`, m] as const))('%s', (key, builtin) => {
  const mapping = compileMapping(builtin.document, ocsfCatalog());
  // Every case that maps an event: a JSON input, or a line of text (text streams).
  const cases = (builtin.document.tests ?? []).filter(
    (t) => (t.input !== undefined || t.input_text !== undefined) && t.quarantine === undefined,
  );
  const mapped = cases.map((t) => {
    const r = mapping.map(caseInput(t), { receivedAtMs: Date.UTC(2024, 0, 1) });
    if (!r.ok) throw new Error(`${t.name}: ${r.kind}: ${r.detail}`);
    return { name: t.name, event: r.event as Raw & { metadata: Raw } };
  });

  it('carries its cases', () => {
    expect(cases.length).toBeGreaterThan(0);
  });

  it('maps every case to OCSF the official schema accepts with zero issues', () => {
    for (const { name, event } of mapped) expect(official.validate(event), name).toEqual([]);
  });

  it('never leaves an event whose type says create, add, remove or delete as activity Other', () => {
    for (const { name, event } of mapped) {
      // A Base Event (no specific class) has only Unknown and Other.
      if (event.class_uid === 0) continue;
      const code = event.metadata.event_code;
      if (typeof code === 'string' && VERB.test(code)) expect(event.activity_id, `${name} (${code})`).not.toBe(99);
    }
  });

  it.skipIf(FINDINGS.has(key))('gives audit records a known severity, Informational by default', () => {
    for (const { name, event } of mapped) expect(event.severity_id, name).not.toBe(0);
  });

  it.skipIf(!(key in PROVIDERS))('names the cloud or SaaS provider in the cloud profile', () => {
    for (const { name, event } of mapped) {
      expect(event.metadata.profiles, name).toContain('cloud');
      expect((event.cloud as Raw).provider, name).toBe(PROVIDERS[key]);
    }
  });
});
