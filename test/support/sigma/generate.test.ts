// The event generator: every positive it builds is matched by the reference matcher, every
// negative is not and makes its filter hold, and the values have the shapes the generator
// promises (padding, an address inside the range, a larger number, the encoded text).
import { describe, expect, it } from 'vitest';
import { generate, normalForm } from './generate.js';
import { identifierHolds, matches, parseDetection, parseSigmaCondition, type Json } from './matcher.js';

const rule = (detection: Json): Json => ({ title: 't', logsource: { category: 'process_creation' }, detection });

function positive(detection: Json, opts = {}) {
  const g = generate(rule(detection), opts);
  if (!g.ok) throw new Error(g.reason);
  expect(matches(detection, g.positive)).toBe(true);
  const d = parseDetection(detection);
  for (const n of g.negatives) {
    expect(matches(detection, n.event)).toBe(false);
    expect(identifierHolds(d, n.filter, n.event)).toBe(true);
  }
  return g;
}

describe('the Sigma event generator', () => {
  it('turns the condition into alternatives of identifiers to hold and to fail', () => {
    const names = ['a', 'b', 'c', 'f1', 'f2'];
    const lits = (t: string) =>
      normalForm(parseSigmaCondition(t, names)).map((term) => term.map((l) => (l.neg ? `!${l.id}` : l.id)).join(' '));
    expect(lits('a and not (b or c)')).toEqual(['a !b !c']);
    expect(lits('(a or b) and not 1 of f*')).toEqual(['a !f1 !f2', 'b !f1 !f2']);
    expect(lits('not (a and b)')).toEqual(['!a', '!b']);
    expect(lits('a and not a')).toEqual([]);
  });

  it('pads contains on both sides, startswith after, endswith before, and fills wildcards', () => {
    const g = positive({
      s: {
        'CommandLine|contains': ' -enc ',
        'Image|endswith': '\\x.exe',
        'ParentImage|startswith': 'C:\\Temp\\',
        User: 'NT*\\SYS?EM',
      },
      condition: 's',
    });
    expect(g.ok && g.positive).toEqual({
      CommandLine: 'x -enc x',
      Image: 'x\\x.exe',
      ParentImage: 'C:\\Temp\\x',
      User: 'NTx\\SYSxEM',
    });
  });

  it('combines the items on one field, |all included', () => {
    const g = positive({
      s: {
        'CommandLine|contains|all': ['net', ' user '],
        'CommandLine|startswith': 'cmd',
        'CommandLine|endswith': '/add',
      },
      condition: 's',
    });
    expect(g.ok && g.positive.CommandLine).toBe('cmdxnetx user x/add');
  });

  it('cidr gives an address inside, gt a larger number, re a matching text, base64 the encoding, exists a value, null nothing', () => {
    const g = positive({
      s: {
        'DestinationIp|cidr': '10.20.0.0/16',
        'DestinationPort|gt': 1024,
        'CommandLine|re': '^-[Ee]nc [A-Z]{4}$',
        'ScriptBlockText|base64offset|contains': 'IEX',
        'Hashes|exists': true,
        ParentImage: null,
      },
      condition: 's',
    });
    if (!g.ok) throw new Error('not generated');
    expect(g.positive.DestinationIp).toBe('10.20.0.1');
    expect(g.positive.DestinationPort).toBe(1025);
    expect(g.positive.CommandLine).toMatch(/^-[Ee]nc [A-Z]{4}$/);
    expect(String(g.positive.ScriptBlockText)).toContain(Buffer.from('IEX').toString('base64').slice(0, 3));
    expect(g.positive).toHaveProperty('Hashes');
    expect(g.positive).not.toHaveProperty('ParentImage');
  });

  it('keeps the type of a whole value: EventID 4688 is a number', () => {
    const g = positive({ s: { EventID: [4688, 1], Image: 'x' }, condition: 's' });
    expect(g.ok && g.positive.EventID).toBe(4688);
  });

  it('gives a field a value when its absence would make a filter hold', () => {
    const g = positive({
      s: { 'Image|endswith': '\\rundll32.exe' },
      filter_null: { CommandLine: null },
      filter_empty: { CommandLine: '' },
      condition: 's and not 1 of filter_*',
    });
    expect(g.ok && g.positive.CommandLine).toBe('x');
  });

  it('builds a negative per filter: the positive plus what makes the filter hold', () => {
    const g = positive({
      s: { 'Image|endswith': '\\rundll32.exe' },
      filter_path: { Image: 'C:\\Windows\\System32\\rundll32.exe' },
      filter_parent: { 'ParentImage|startswith': 'C:\\Program Files\\' },
      condition: 's and not 1 of filter_*',
    });
    expect(g.ok && g.negatives.map((n) => [n.filter, n.event])).toEqual([
      ['filter_path', { Image: 'C:\\Windows\\System32\\rundll32.exe' }],
      ['filter_parent', { Image: 'x\\rundll32.exe', ParentImage: 'C:\\Program Files\\x' }],
    ]);
  });

  it('tries the next alternative when one cannot hold within the options', () => {
    const detection = {
      a: { Image: 'x.exe', EventID: 1 },
      b: { TargetFilename: 'y', EventID: 11 },
      condition: 'a or b',
    };
    const g = positive(detection, { allowField: (f: string) => f !== 'Image', eventIds: ['11'] });
    expect(g.ok && g.positive).toEqual({ TargetFilename: 'y', EventID: 11 });
    expect(generate(rule(detection), { eventIds: ['3'] })).toMatchObject({ ok: false });
  });

  it('uses the pads it is given (a list of hashes stays a list)', () => {
    const pad = { before: 'MD5=0,', between: ',', after: ',SHA1=0', fill: '0' };
    const g = positive({ s: { 'Hashes|contains': 'IMPHASH=ABC' }, condition: 's' }, { pad: () => pad });
    expect(g.ok && g.positive.Hashes).toBe('MD5=0,IMPHASH=ABC,SHA1=0');
  });

  it('says why when no event can be built', () => {
    expect(
      generate(rule({ s: { CommandLine: 'RunWizard', 'CommandLine|re': '\\{[0-9]{4}\\}' }, condition: 's' })),
    ).toEqual({ ok: false, reason: 'no value satisfies all the items on one field' });
    expect(generate(rule({ keywords: ['a'], condition: 'keywords' }))).toMatchObject({ ok: false });
  });
});
