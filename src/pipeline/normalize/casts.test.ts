import { describe, expect, it } from 'vitest';
import { CAST_FAILED, CAST_NAMES, castFunction, TYPE_CASTS, valueType } from './casts.js';
import type { CastName } from './types.js';

const F = CAST_FAILED;

const rows: [CastName, unknown, unknown][] = [
  ['string', 'x', 'x'],
  ['string', 4624, '4624'],
  ['string', false, 'false'],
  ['string', { a: 1 }, '{"a":1}'],
  ['string', [1, 'b'], '[1,"b"]'],
  ['integer', 42, 42],
  ['integer', '42', 42],
  ['integer', ' -7 ', -7],
  ['integer', '42.0', 42],
  ['integer', '+3', 3],
  ['integer', 42.5, F],
  ['integer', '42.5', F],
  ['integer', '4e2', F],
  ['integer', 2_147_483_648, F],
  ['integer', '', F],
  ['integer', true, F],
  ['integer', null, F],
  ['integer', 'abc', F],
  ['long', '9007199254740991', 9007199254740991],
  ['long', 2_147_483_648, 2_147_483_648],
  ['long', '9007199254740993', F],
  ['float', '0.75', 0.75],
  ['float', '1e-3', 0.001],
  ['float', '.5', 0.5],
  ['float', 3, 3],
  ['float', 'NaN', F],
  ['float', 'Infinity', F],
  ['float', '1,5', F],
  ['float', [], F],
  ['boolean', true, true],
  ['boolean', 'Yes', true],
  ['boolean', 'on', true],
  ['boolean', 'T', true],
  ['boolean', '0', false],
  ['boolean', 'FALSE', false],
  ['boolean', 1, true],
  ['boolean', 0, false],
  ['boolean', 2, F],
  ['boolean', 'maybe', F],
  ['timestamp', '2024-01-02T03:04:05.123Z', Date.UTC(2024, 0, 2, 3, 4, 5, 123)],
  ['timestamp', 1704164645, Date.UTC(2024, 0, 2, 3, 4, 5)],
  ['timestamp', 'later', F],
  ['datetime', 1704164645123, '2024-01-02T03:04:05.123Z'],
  ['datetime', '2024-01-02T04:04:05+01:00', '2024-01-02T03:04:05.000Z'],
  ['datetime', {}, F],
  ['ip', '192.0.2.1', '192.0.2.1'],
  ['ip', ' 198.51.100.7 ', '198.51.100.7'],
  ['ip', '2001:DB8::1', '2001:db8::1'],
  ['ip', '[2001:db8::2]', '2001:db8::2'],
  ['ip', '::ffff:192.0.2.1', '::ffff:192.0.2.1'],
  ['ip', '192.0.2.256', F],
  ['ip', '192.0.2.1:443', F],
  ['ip', 'example.com', F],
  ['ip', 3232235777, F],
  ['port', 443, 443],
  ['port', '8080', 8080],
  ['port', 0, 0],
  ['port', 65536, F],
  ['port', -1, F],
  ['port', 'https', F],
  ['mac', '00:1A:2B:3C:4D:5E', '00:1a:2b:3c:4d:5e'],
  ['mac', '00-1a-2b-3c-4d-5e', '00:1a:2b:3c:4d:5e'],
  ['mac', '001a.2b3c.4d5e', '00:1a:2b:3c:4d:5e'],
  ['mac', '001A2B3C4D5E', '00:1a:2b:3c:4d:5e'],
  ['mac', '00:1a-2b:3c:4d:5e', F],
  ['mac', '00:1a:2b:3c:4d', F],
  ['email', '<billing@Example.org>', 'billing@example.org'],
  ['email', '"Billing, Example" <billing@example.org>', 'billing@example.org'],
  ['email', '<>', F],
  ['email', 'Ana@Example.COM', 'Ana@example.com'],
  ['email', 'mailto:bo@example.org', 'bo@example.org'],
  ['email', 'first.last+tag@mail.example.co.uk', 'first.last+tag@mail.example.co.uk'],
  ['email', 'not an email', F],
  ['email', 'ana@localhost', F],
  ['email', 'ana@@example.com', F],
  ['hostname', 'WS-042.Corp.Example.com.', 'ws-042.corp.example.com'],
  ['hostname', 'srv_01', 'srv_01'],
  ['hostname', 'bad host', F],
  ['hostname', '-bad.example.com', F],
  ['hostname', 'a'.repeat(64), F],
  ['hostname', '', F],
  ['url', 'https://example.com/login?next=%2F', 'https://example.com/login?next=%2F'],
  ['url', ' ftp://files.example.com/a ', 'ftp://files.example.com/a'],
  ['url', '/relative/path', F],
  ['url', 'not a url', F],
  ['json', '{"mfa":true}', { mfa: true }],
  ['json', '[1,2]', [1, 2]],
  ['json', '"text"', 'text'],
  ['json', { already: 'parsed' }, { already: 'parsed' }],
  ['json', '{broken', F],
  ['lowercase', 'ALLOW', 'allow'],
  ['lowercase', 12, '12'],
  ['lowercase', { a: 1 }, F],
  ['uppercase', 'us-east-1', 'US-EAST-1'],
  ['trim', '  admin ', 'admin'],
  ['trim', null, F],
  ['array', 'admins', ['admins']],
  ['array', ['a', 'b'], ['a', 'b']],
  ['array', { a: 1 }, [{ a: 1 }]],
  ['hex', '0x1f4c', 8012],
  ['hex', '1F4C', 8012],
  ['hex', ' 0x0 ', 0],
  ['hex', 255, F],
  ['hex', '0x', F],
  ['hex', '0xfffffffffffffff', F],
  ['hex', '12g', F],
  ['basename', 'C:\\Windows\\System32\\cmd.exe', 'cmd.exe'],
  ['basename', '/usr/bin/curl', 'curl'],
  ['basename', 'notepad.exe', 'notepad.exe'],
  ['basename', 'C:\\Temp\\', 'Temp'],
  ['basename', '\\', F],
  ['words', 'SeBackupPrivilege\n\t\t\tSeDebugPrivilege ', ['SeBackupPrivilege', 'SeDebugPrivilege']],
  ['words', '  ', []],
  ['words', 7, ['7']],
  ['dirname', 'HKLM\\SOFTWARE\\Run\\Updater', 'HKLM\\SOFTWARE\\Run'],
  ['dirname', '/var/log/syslog', '/var/log'],
  ['dirname', 'C:\\Temp\\', 'C:'],
  ['dirname', 'notepad.exe', F],
  ['dirname', '\\pipe', F],
  ['registry_key', 'HKCU\\Trusted Documents\\TrustRecords\\%USERPROFILE%/Downloads/a.docm', 'HKCU\\Trusted Documents\\TrustRecords'],
  ['registry_value', 'HKCU\\Trusted Documents\\TrustRecords\\%USERPROFILE%/Downloads/a.docm', '%USERPROFILE%/Downloads/a.docm'],
  ['registry_key', 'Updater', F],
  ['registry_value', 'HKLM\\Run\\', F],
  ['user_name', 'NT AUTHORITY\\SYSTEM', 'SYSTEM'],
  ['user_name', 'alice@corp.example.com', 'alice@corp.example.com'],
  ['user_name', 'CORP\\', F],
  ['user_domain', 'NT AUTHORITY\\SYSTEM', 'NT AUTHORITY'],
  ['user_domain', 'alice', F],
  ['user_domain', '\\alice', F],
  ['duration', 0.000853, 1],
  ['duration', '30', 30000],
  ['duration', 12.5, 12500],
  ['duration', '0:00:30', 30000],
  ['duration', '1:02:03', 3723000],
  ['duration', '2:01:02:03', 176523000],
  ['duration', -1, F],
  ['duration', '1:99:00', F],
  ['duration', 'soon', F],
];

describe('casts', () => {
  it.each(rows)('%s(%j)', (name, input, expected) => {
    const out = castFunction(name)(input);
    if (expected === F) expect(out).toBe(F);
    else expect(out).toEqual(expected);
  });

  it('covers every cast name, and every served example is true', () => {
    const names: CastName[] = ['string', 'integer', 'long', 'float', 'boolean', 'timestamp', 'datetime', 'ip', 'port', 'mac', 'email', 'hostname', 'url', 'json', 'lowercase', 'uppercase', 'trim', 'array', 'hex', 'basename', 'words', 'dirname', 'registry_key', 'registry_value', 'user_name', 'user_domain', 'duration'];
    expect([...CAST_NAMES].sort()).toEqual([...names].sort());
    for (const name of names) expect(rows.some((r) => r[0] === name), name).toBe(true);
    for (const c of TYPE_CASTS) {
      expect(c.description.length, c.name).toBeGreaterThan(10);
      expect(castFunction(c.name)(c.example.input), c.name).toEqual(c.example.output);
    }
  });

  it('timestamp casts take a format', () => {
    expect(castFunction('timestamp', 'epoch_s')('1704164645')).toBe(Date.UTC(2024, 0, 2, 3, 4, 5));
    expect(castFunction('timestamp', 'epoch_ms')('1704164645')).toBe(1704164645);
    expect(castFunction('datetime', 'clf')('02/Jan/2024:03:04:05 +0000')).toBe('2024-01-02T03:04:05.000Z');
    expect(castFunction('timestamp', 'rfc3339')('Tue, 02 Jan 2024 03:04:05 GMT')).toBe(F);
  });

  it('names value types without showing values', () => {
    expect([null, [], {}, 'x', 1, true].map(valueType)).toEqual(['null', 'array', 'object', 'string', 'number', 'boolean']);
  });
});
