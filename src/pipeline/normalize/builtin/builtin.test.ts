// Every built-in mapping against its vendor fixtures: it compiles, every fixture maps, and every
// output is valid OCSF under the official 1.8.0 schema and under the project's catalog. The
// per-vendor assertions on the fields that matter are in builtin-*.test.ts.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { officialCatalog } from '../../../../test/support/ocsf-official.js';
import { VENDOR_PLATFORMS } from '../../../connectors/platforms.js';
import { createValidator, ocsfCatalog } from '../../../ocsf/index.js';
import { compileMapping, validateMappingDocument } from '../compile.js';
import { BUILTIN_MAPPINGS, builtinMapping } from './index.js';

type Raw = Record<string, unknown>;
const RECEIVED_AT_MS = Date.UTC(2031, 0, 1);

function loadFixtures(platform: string, stream: string): Raw[] {
  const url = new URL(`../../../connectors/${platform}/fixtures/${stream}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as Raw[];
}

/** A text stream's fixture is the event a text line becomes, {"message": "<the line>"}. */
const isText = (raw: Raw) => Object.keys(raw).length === 1 && typeof raw.message === 'string';
// Sources whose records carry no id of their own (a syslog line, a flow record): metadata.uid stays unset.
const WITHOUT_EVENT_ID = new Set(['cisco_asa/syslog', 'aws_vpc_flow/flow_logs', 'aws_route53_resolver/query_logs']);

// Sources of one kind of record (a sign-in, a DNS query with its response).
const ONE_KIND = new Set(['microsoft_graph/signins', 'aws_route53_resolver/query_logs']);

const official = createValidator(officialCatalog());
const project = createValidator(ocsfCatalog());

describe('BUILTIN_MAPPINGS', () => {
  it('has one mapping per vendor stream, named after its platform and stream', () => {
    const keys = BUILTIN_MAPPINGS.map((m) => `${m.platform}/${m.stream}`);
    expect(keys).toEqual([
      'okta/system_log',
      'microsoft_graph/signins',
      'microsoft_graph/directory_audits',
      'microsoft_graph/security_alerts',
      'aws_cloudtrail/cloudtrail',
      'github/audit_log',
      'google_workspace/login',
      'google_workspace/admin',
      'crowdstrike_falcon/alerts',
      'windows_security/security',
      'sysmon/operational',
      'suricata/eve',
      'zeek/logs',
      'fortinet_fortigate/syslog',
      'paloalto_ngfw/syslog',
      'cisco_asa/syslog',
      'aws_vpc_flow/flow_logs',
      'aws_route53_resolver/query_logs',
      'aws_security_hub/findings',
      'microsoft_365/management_activity',
      'zscaler_zia/web',
    ]);
    for (const m of BUILTIN_MAPPINGS) {
      expect(m.document.platform).toBe(m.platform);
      expect(m.document.stream).toBe(m.stream);
      expect(m.name.length).toBeGreaterThan(0);
      expect(m.description).toBe(m.document.description);
    }
    expect(builtinMapping('okta', 'system_log')?.name).toBe('Okta System Log');
    expect(builtinMapping('okta', 'nope')).toBeUndefined();
  });

  it('declares the streams of text sources as text, so a push reads one event per line', () => {
    const text = Object.fromEntries(
      VENDOR_PLATFORMS.filter((p) => p.text_streams).map((p) => [p.name, p.text_streams]),
    );
    expect(text).toEqual({
      fortinet_fortigate: ['syslog'],
      paloalto_ngfw: ['syslog'],
      cisco_asa: ['syslog'],
      aws_vpc_flow: ['flow_logs'],
      zscaler_zia: ['web'],
    });
  });

  it('covers every vendor platform Weir registers', () => {
    const mapped = new Set(BUILTIN_MAPPINGS.map((m) => m.platform));
    for (const p of VENDOR_PLATFORMS) expect(mapped, p.name).toContain(p.name);
  });
});

describe.each(BUILTIN_MAPPINGS.map((m) => [`${m.platform}/${m.stream}`, m] as const))('%s', (_key, builtin) => {
  const fixtures = loadFixtures(builtin.platform, builtin.stream);
  const mapping = compileMapping(builtin.document, ocsfCatalog());
  const map = (raw: Raw) => {
    const r = mapping.map(raw, { receivedAtMs: RECEIVED_AT_MS });
    if (!r.ok) throw new Error(`${r.kind}: ${r.detail}`);
    return r.event;
  };

  it('compiles against the project catalog and the official schema', () => {
    expect(() => compileMapping(builtin.document, officialCatalog())).not.toThrow();
    expect(mapping.reads.size).toBeGreaterThan(5);
  });

  it('has 5 to 10 realistic fixtures', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(5);
    expect(fixtures.length).toBeLessThanOrEqual(10);
    for (const raw of fixtures) {
      const size = JSON.stringify(raw).length;
      expect(size).toBeGreaterThan(isText(raw) ? 60 : 400);
      expect(size).toBeLessThan(5000);
    }
  });

  it('maps every fixture to OCSF that the official schema and the project catalog accept with zero issues', () => {
    for (const [i, raw] of fixtures.entries()) {
      const event = map(raw);
      expect(official.validate(event), `fixture ${i} (official)`).toEqual([]);
      expect(project.validate(event), `fixture ${i} (project)`).toEqual([]);
    }
  });

  it('takes the event time, id and product from the source, never the receive time', () => {
    for (const raw of fixtures) {
      const event = map(raw);
      expect(event.time).not.toBe(RECEIVED_AT_MS);
      expect(Number.isInteger(event.time)).toBe(true);
      const metadata = event.metadata as Record<string, unknown>;
      if (!WITHOUT_EVENT_ID.has(`${builtin.platform}/${builtin.stream}`)) expect(typeof metadata.uid).toBe('string');
      expect(typeof metadata.original_time).toBe('string');
      expect(metadata.product).toEqual(builtin.document.product);
      expect(metadata.version).toBe('1.8.0');
    }
  });

  it('uses more than one class or activity across its fixtures', () => {
    const kinds = new Set(fixtures.map((raw) => map(raw).type_uid));
    expect(kinds.size).toBeGreaterThanOrEqual(ONE_KIND.has(`${builtin.platform}/${builtin.stream}`) ? 1 : 3);
  });

  it('keeps vendor fields it does not map under unmapped', () => {
    const raw = { ...fixtures[0]!, x_vendor_extension: { region_hint: 'eu', retries: 2 } };
    const event = map(raw);
    expect((event.unmapped as Raw).x_vendor_extension).toEqual({ region_hint: 'eu', retries: 2 });
    expect(official.validate(event)).toEqual([]);
  });

  it('passes the document checks the mappings API runs before publishing', () => {
    expect(validateMappingDocument(builtin.document, ocsfCatalog())).toEqual([]);
    expect(builtin.document.format_version).toBe(1);
    expect(builtin.document.rules.every((r) => r.name.length > 0)).toBe(true);
  });
});
