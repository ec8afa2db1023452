// The table of casts a mapping may name, with what each takes and gives: what
// GET /api/mappings/normalize/type-casts serves. The functions themselves are in casts.ts.
import type { CastName } from './types.js';

export interface TypeCast {
  name: CastName;
  description: string;
  input: string;
  output: string;
  example: { input: unknown; output: unknown };
}

/** Served by GET /api/mappings/normalize/type-casts; docs/mappings.md has the same table. */
export const TYPE_CASTS: readonly TypeCast[] = Object.freeze([
  {
    name: 'string',
    description: 'Text; numbers and booleans as written, objects and arrays as JSON text',
    input: 'any',
    output: 'string_t',
    example: { input: 4624, output: '4624' },
  },
  {
    name: 'integer',
    description: 'Whole number in the 32-bit range, from a number or numeric text ("42", "42.0")',
    input: 'number | string',
    output: 'integer_t',
    example: { input: '42', output: 42 },
  },
  {
    name: 'long',
    description: 'Whole number up to 2^53-1 (the exact range of a JSON number)',
    input: 'number | string',
    output: 'long_t',
    example: { input: '9007199254740991', output: 9007199254740991 },
  },
  {
    name: 'float',
    description: 'Finite number from a number or numeric text (exponents allowed)',
    input: 'number | string',
    output: 'float_t',
    example: { input: '0.75', output: 0.75 },
  },
  {
    name: 'boolean',
    description: 'true/false, yes/no, y/n, t/f, on/off, 1/0 (any case)',
    input: 'boolean | number | string',
    output: 'boolean_t',
    example: { input: 'Yes', output: true },
  },
  {
    name: 'timestamp',
    description:
      'Epoch milliseconds; reads epoch s/ms/us/ns by magnitude, RFC 3339, RFC 2822, CLF, syslog (see `format`)',
    input: 'number | string',
    output: 'timestamp_t',
    example: { input: '2024-01-02T03:04:05.123+01:00', output: 1704161045123 },
  },
  {
    name: 'datetime',
    description: 'RFC 3339 UTC text with milliseconds; reads the same inputs as timestamp',
    input: 'number | string',
    output: 'datetime_t',
    example: { input: 1704161045, output: '2024-01-02T02:04:05.000Z' },
  },
  {
    name: 'ip',
    description: 'IPv4 or IPv6 address (brackets removed, IPv6 lower-cased)',
    input: 'string',
    output: 'ip_t',
    example: { input: '[2001:DB8::1]', output: '2001:db8::1' },
  },
  {
    name: 'port',
    description: 'Integer from 0 to 65535',
    input: 'number | string',
    output: 'port_t',
    example: { input: '443', output: 443 },
  },
  {
    name: 'mac',
    description:
      'MAC address from aa:bb:.., aa-bb-.., aabb.ccdd.eeff or 12 hex digits, as lower-case aa:bb:cc:dd:ee:ff',
    input: 'string',
    output: 'mac_t',
    example: { input: '00-1A-2B-3C-4D-5E', output: '00:1a:2b:3c:4d:5e' },
  },
  {
    name: 'email',
    description: 'Email address (mailto: and a display name with its <> removed, domain lower-cased)',
    input: 'string',
    output: 'email_t',
    example: { input: 'Ana@Example.COM', output: 'Ana@example.com' },
  },
  {
    name: 'hostname',
    description: 'Host name, lower-cased, trailing dot removed, labels checked',
    input: 'string',
    output: 'hostname_t',
    example: { input: 'WS-042.Corp.Example.com.', output: 'ws-042.corp.example.com' },
  },
  {
    name: 'url',
    description: 'Absolute URL (checked, kept as written)',
    input: 'string',
    output: 'url_t',
    example: { input: 'https://example.com/login?next=%2F', output: 'https://example.com/login?next=%2F' },
  },
  {
    name: 'json',
    description: 'Parses JSON text; a value that is not text is kept',
    input: 'string',
    output: 'json_t',
    example: { input: '{"mfa":true}', output: { mfa: true } },
  },
  {
    name: 'lowercase',
    description: 'Lower-cases text',
    input: 'string',
    output: 'string_t',
    example: { input: 'ALLOW', output: 'allow' },
  },
  {
    name: 'uppercase',
    description: 'Upper-cases text',
    input: 'string',
    output: 'string_t',
    example: { input: 'us-east-1', output: 'US-EAST-1' },
  },
  {
    name: 'trim',
    description: 'Removes leading and trailing white space',
    input: 'string',
    output: 'string_t',
    example: { input: '  admin ', output: 'admin' },
  },
  {
    name: 'array',
    description: 'Wraps a single value in a list; a list stays as it is',
    input: 'any',
    output: 'array',
    example: { input: 'admins', output: ['admins'] },
  },
  {
    name: 'hex',
    description: 'Whole number from hexadecimal text, with or without 0x (up to 13 digits)',
    input: 'string',
    output: 'long_t',
    example: { input: '0x1f4c', output: 8012 },
  },
  {
    name: 'basename',
    description: 'The last segment of a Windows or POSIX path',
    input: 'string',
    output: 'string_t',
    example: { input: 'C:\\Windows\\System32\\cmd.exe', output: 'cmd.exe' },
  },
  {
    name: 'words',
    description: 'Splits text on white space into a list of words (empty words dropped)',
    input: 'string',
    output: 'array',
    example: { input: 'SeBackupPrivilege\n\t\tSeDebugPrivilege', output: ['SeBackupPrivilege', 'SeDebugPrivilege'] },
  },
  {
    name: 'dirname',
    description: "A Windows or POSIX path without its last segment: a file's folder",
    input: 'string',
    output: 'string_t',
    example: { input: 'C:\\Temp\\a.txt', output: 'C:\\Temp' },
  },
  {
    name: 'registry_key',
    description:
      "The key of a registry value's full path: the text before the last backslash (only a backslash separates: a value's name may hold /)",
    input: 'string',
    output: 'string_t',
    example: {
      input:
        'HKCU\\Software\\Microsoft\\Office\\16.0\\Word\\Security\\Trusted Documents\\TrustRecords\\%USERPROFILE%/Downloads/a.docm',
      output: 'HKCU\\Software\\Microsoft\\Office\\16.0\\Word\\Security\\Trusted Documents\\TrustRecords',
    },
  },
  {
    name: 'registry_value',
    description: "The value's name in a registry value's full path: the text after the last backslash",
    input: 'string',
    output: 'string_t',
    example: {
      input:
        'HKCU\\Software\\Microsoft\\Office\\16.0\\Word\\Security\\Trusted Documents\\TrustRecords\\%USERPROFILE%/Downloads/a.docm',
      output: '%USERPROFILE%/Downloads/a.docm',
    },
  },
  {
    name: 'user_name',
    description: 'The account name of DOMAIN\\user; text without a backslash is kept whole',
    input: 'string',
    output: 'string_t',
    example: { input: 'CORP\\alice', output: 'alice' },
  },
  {
    name: 'user_domain',
    description: 'The domain of DOMAIN\\user; fails without a backslash (use on_error: skip)',
    input: 'string',
    output: 'string_t',
    example: { input: 'CORP\\alice', output: 'CORP' },
  },
  {
    name: 'duration',
    description: 'Milliseconds from seconds (a number or numeric text) or h:mm:ss / d:hh:mm:ss',
    input: 'number | string',
    output: 'long_t',
    example: { input: '1:02:03', output: 3723000 },
  },
] satisfies TypeCast[]);

export const CAST_NAMES: ReadonlySet<string> = new Set(TYPE_CASTS.map((c) => c.name));
