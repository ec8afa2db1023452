import { describe, expect, it } from 'vitest';
import { mappingRuleNames, writtenPaths } from './written.js';

describe('writtenPaths', () => {
  const sysmon = writtenPaths('sysmon.operational', ['1 process creation']);

  it("reads the rule's assignments with their raw keys as written", () => {
    expect(sysmon.get('process.file.path')).toEqual(new Set(['EventData.Image', 'winlog.event_data.Image', 'Image']));
    expect(sysmon.get('process.cmd_line')).toEqual(
      new Set(['EventData.CommandLine', 'winlog.event_data.CommandLine', 'CommandLine']),
    );
  });

  it("includes the mapping's defaults", () => {
    expect(sysmon.get('device.hostname')).toEqual(new Set(['System.Computer', 'winlog.computer_name', 'Hostname']));
  });

  it('writes each lists below [*], the list itself read from the each source', () => {
    expect(sysmon.get('process.file.hashes')).toEqual(new Set(['hashes']));
    expect(sysmon.get('process.file.hashes[*].value')).toEqual(new Set(['MD5', 'SHA1', 'SHA256', 'IMPHASH']));
    expect(sysmon.get('process.file.hashes[*].algorithm_id')).toEqual(new Set());
    expect(sysmon.has('process.file.hashes[]')).toBe(false);
  });

  it('writes a constant with no key', () => {
    expect(sysmon.get('process.file.type_id')).toEqual(new Set());
  });

  it('writes only the named rules', () => {
    expect(sysmon.has('process.parent_process.file.path')).toBe(true);
    expect(sysmon.has('file.path')).toBe(false);
    const dns = writtenPaths('sysmon.operational', ['22 DNS query']);
    expect(dns.has('query.hostname')).toBe(true);
    expect(dns.has('process.cmd_line')).toBe(false);
  });

  it('writes element steps as [*]', () => {
    const all = writtenPaths('zeek.logs', mappingRuleNames('zeek.logs'));
    expect([...all.keys()].some((p) => p.startsWith('answers[*].'))).toBe(true);
    expect([...all.keys()].some((p) => /\[\d*\]/.test(p))).toBe(false);
  });

  it('refuses an unknown mapping or rule name', () => {
    expect(() => writtenPaths('sysmon.nope', [])).toThrow(/no built-in mapping/);
    expect(() => writtenPaths('sysmon.operational', ['1 process created'])).toThrow(
      /no rule named "1 process created"/,
    );
    expect(mappingRuleNames('sysmon.operational')).toContain('1 process creation');
  });
});
