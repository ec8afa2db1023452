import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  COPY_MAX,
  isPersonalKey,
  isPersonalPath,
  MASK_LIMITS,
  maskCopies,
  maskEvent,
  maskText,
  maskValue,
} from './mask.js';

describe('isPersonalKey', () => {
  it.each([
    'email',
    'userEmail',
    'e_mail',
    'user',
    'username',
    'userName',
    'USER_NAME',
    'userPrincipalName',
    'alternateId',
    'login',
    'displayName',
    'full_name',
    'firstName',
    'last-name',
    'phone_number',
    'mobilePhone',
    'address',
    'ip',
    'src_ip',
    'clientIp',
    'clientip',
    'ipAddress',
    'sourceIPAddress',
    'IPv6',
    'x-forwarded-for',
    'password',
    'hostname',
    'ssn',
    'user_ssn',
  ])('%s names personal data', (key) => expect(isPersonalKey(key)).toBe(true));

  it.each([
    'zip',
    'ship',
    'tip',
    'description',
    'eventName',
    'name',
    'type',
    'userAgent',
    'severity',
    'recipientCount',
    'session',
    'class_name',
    'className',
    'type_name',
  ])('%s does not', (key) => expect(isPersonalKey(key)).toBe(false));

  it('a path is personal when any segment is', () => {
    expect(isPersonalPath('actor.user.type')).toBe(true);
    expect(isPersonalPath('client.ips[]')).toBe(true);
    expect(isPersonalPath('request.method')).toBe(false);
  });
});

describe('maskText', () => {
  it('masks e-mail addresses keeping the first character and the domain', () => {
    expect(maskText('login by jane.doe@example.com failed')).toBe('login by j***@example.com failed');
  });

  it('masks IPv4 addresses to their /24 and IPv6 addresses to their first groups', () => {
    expect(maskText('from 192.0.2.17 to 198.51.100.255')).toBe('from 192.0.2.x to 198.51.100.x');
    expect(maskText('peer 2001:db8:85a3::8a2e:370:7334 ok')).toBe('peer 2001:db8:x ok');
    expect(maskText('[::1]')).toBe('[1:x]');
  });

  it('masks long digit runs, grouped or not', () => {
    expect(maskText('card 4111 1111 1111 1111 used')).toBe('card *** used');
    expect(maskText('call +1-555-123-4567')).toBe('call +***');
    expect(maskText('acct 123456789')).toBe('acct ***');
  });

  it('leaves times, versions, UUIDs, short numbers and non-addresses alone', () => {
    for (const s of [
      '03:04:05',
      '2024-01-02T03:04:05.123Z',
      'v1.2.3',
      '550e8400-e29b-41d4-a716-446655440000',
      'port 8443',
      '999.1.1.1',
      'a::b::c',
    ]) {
      expect(maskText(s)).toBe(s);
    }
  });

  it('cuts very long strings', () => {
    const out = maskText('a'.repeat(MASK_LIMITS.stringLength + 500));
    expect(out.length).toBe(MASK_LIMITS.stringLength + 1);
    expect(out.endsWith('…')).toBe(true);
  });
});

describe('maskValue', () => {
  it('keeps only the shape of a value under a personal key', () => {
    expect(maskValue('email', 'jane@example.com')).toBe('j***@example.com');
    expect(maskValue('ipAddress', '192.0.2.44')).toBe('192.0.2.x');
    expect(maskValue('client_ip', '2001:db8::1')).toBe('2001:db8:x');
    expect(maskValue('displayName', 'Jane Doe')).toBe('J***');
    expect(maskValue('phone', 5551234567)).toBe('***');
    expect(maskValue('user', '')).toBe('');
    expect(maskValue('user', 'j')).toBe('***');
    expect(maskValue('user.active', true)).toBe(true);
  });

  it('masks only the personal parts of other strings, and leaves other scalars as they are', () => {
    expect(maskValue('message', 'user jane@example.com from 10.1.2.3')).toBe('user j***@example.com from 10.1.2.x');
    expect(maskValue('eventName', 'ConsoleLogin')).toBe('ConsoleLogin');
    expect(maskValue('count', 42)).toBe(42);
    expect(maskValue('ok', null)).toBe(null);
  });

  it('treats a dotted path as personal when any segment is', () => {
    expect(maskValue('actor.user.name', 'jdoe')).toBe('j***');
    expect(maskValue('request.path', '/api/v1')).toBe('/api/v1');
  });

  it('masks objects deeply', () => {
    expect(maskValue('details', { email: 'a@b.io', n: 1 })).toEqual({ email: 'a***@b.io', n: 1 });
  });
});

describe('maskEvent', () => {
  it('returns a masked deep copy and leaves the input untouched', () => {
    const event = {
      eventName: 'ConsoleLogin',
      sourceIPAddress: '203.0.113.9',
      userIdentity: { type: 'IAMUser', userName: 'alice', accountId: '123456789012' },
      actor: { displayName: 'Alice Smith', alternateId: 'alice@example.com', type: 'User' },
      tags: ['ok', 'mail from bob@example.org'],
      size: 1234,
    };
    const before = structuredClone(event);
    const masked = maskEvent(event);
    expect(event).toEqual(before);
    expect(masked).toEqual({
      eventName: 'ConsoleLogin',
      sourceIPAddress: '203.0.113.x',
      // Everything under a personal key is personal.
      userIdentity: { type: 'I***', userName: 'a***', accountId: '1***' },
      actor: { displayName: 'A***', alternateId: 'a***@example.com', type: 'User' },
      tags: ['ok', 'mail from b***@example.org'],
      size: 1234,
    });
  });

  it('keeps a "__proto__" key as data without touching the prototype', () => {
    const event = JSON.parse('{"__proto__": {"email": "x@y.io"}, "a": 1}') as Record<string, unknown>;
    const masked = maskEvent(event);
    expect(Object.getPrototypeOf(masked)).toBe(Object.prototype);
    expect(Object.keys(masked)).toEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(masked, '__proto__')?.value).toEqual({ email: 'x***@y.io' });
  });

  it('bounds depth and size', () => {
    let deep: Record<string, unknown> = { leaf: 'x' };
    for (let i = 0; i < 50; i++) deep = { d: deep };
    let depth = 0;
    for (let node = maskEvent(deep); node.d !== undefined; node = node.d as Record<string, unknown>) depth++;
    expect(depth).toBeLessThanOrEqual(MASK_LIMITS.depth);

    const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
    expect(Object.keys(maskEvent(wide)).length).toBe(MASK_LIMITS.nodes);
    const long = maskEvent({ list: Array.from({ length: 10_000 }, () => 'v') });
    expect((long.list as unknown[]).length).toBe(MASK_LIMITS.nodes - 1);
  });
});

describe('masking every copy of a masked value', () => {
  const event = {
    class_uid: 3002,
    message: 'User alice.smith@corp.example logged in as alice.smith from WKS-ALICE-01',
    user: { name: 'alice.smith', email_addr: 'alice.smith@corp.example', uid: 48151623 },
    device: { hostname: 'WKS-ALICE-01' },
    observables: [
      { name: 'user.name', type_id: 4, value: 'alice.smith' },
      { name: 'device.hostname', type_id: 1, value: 'WKS-ALICE-01' },
    ],
    raw_data: '{"UserName":"alice.smith","Account":"48151623"}',
    unmapped: { audit: { detail: ['actor=alice.smith;ok'] } },
  };

  it('masks the value of user.name wherever else it appears: observables, message, raw_data, nested strings, substrings', () => {
    const masked = maskEvent(event);
    const text = JSON.stringify(masked);
    expect(text).not.toContain('alice.smith');
    expect(text).not.toContain('48151623');
    expect(text).not.toContain('WKS-ALICE');
    expect(masked.observables).toEqual([
      { name: 'user.name', type_id: 4, value: 'a***' },
      { name: 'device.hostname', type_id: 1, value: 'W***' },
    ]);
    // The vendor's message is free text about people: masked whole.
    expect(masked.message).toBe('U***');
    expect(masked.raw_data).toBe('{"UserName":"a***","Account":"***"}');
    expect(masked.unmapped).toEqual({ audit: { detail: ['actor=a***;ok'] } });
    // A host name is personal data (OCSF hostname_t).
    expect(masked.device).toEqual({ hostname: 'W***' });
  });

  it('masks a raw event the same way when it has no OCSF class: by key names, free text inside', () => {
    const { class_uid: _c, ...raw } = event;
    const masked = maskEvent(raw);
    expect(masked.message).toBe('User a***@corp.example logged in as a*** from W***');
  });

  it('does not hunt values too short to be an identity', () => {
    const masked = maskEvent({ user: { name: 'al', type_id: 1 }, message: 'al logged in 1 time' });
    expect(masked.message).toBe('al logged in 1 time');
  });

  it('masks every other string when an event holds more distinct personal values than it hunts', () => {
    const users = Array.from({ length: COPY_MAX + 1 }, (_, i) => ({ name: `user-${i}` }));
    const masked = maskEvent({ users, message: 'user-7 did it', note: 'nothing personal' });
    expect(masked.message).toBe('u***');
    expect(masked.note).toBe('n***');
  });

  it('is the same in maskValue for an object, and maskCopies masks the copies of named values without copying what does not change', () => {
    expect(maskValue('details', { user: 'bob.jones', said: 'bob.jones was here' })).toEqual({
      user: 'b***',
      said: 'b*** was here',
    });
    const tree = { a: { untouched: true }, b: ['bob.jones rocks', 'x'] };
    const out = maskCopies(tree, ['bob.jones']) as typeof tree;
    expect(out.b).toEqual(['b*** rocks', 'x']);
    expect(out.a).toBe(tree.a);
    expect(maskCopies(tree, [])).toBe(tree);
  });
});

describe('masking a normalized OCSF event by its schema', () => {
  // A real Okta System Log event as the built-in mapping normalizes it (test/corpus/okta).
  const okta = (
    JSON.parse(
      readFileSync(new URL('../../test/corpus/okta/system_log/elastic-okta.expected.json', import.meta.url), 'utf8'),
    ) as Record<string, unknown>[]
  )[0]!;
  type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  it('keeps captions, enum ids, codes, ids, timestamps and metadata; masks people, addresses and places', () => {
    const m = maskEvent(okta) as Json;
    expect(m).toMatchObject({
      class_uid: 3002,
      class_name: 'Authentication',
      category_name: 'Identity & Access Management',
      activity_name: 'Logoff',
      type_name: 'Authentication: Logoff',
      severity: 'Informational',
      status: 'Success',
      time: okta.time,
      metadata: (okta as Json).metadata,
      session: (okta as Json).session,
    });
    // user.type is the caption of user.type_id: a label inside a personal object.
    expect(m.actor.user).toEqual({
      uid: '0***',
      name: 'u***@elastic.co',
      full_name: 'x***',
      email_addr: 'u***@elastic.co',
      type_id: 1,
      type: 'User',
      domain: 'e***',
    });
    expect(m.src_endpoint.ip).toBe('175.16.199.x');
    expect(m.src_endpoint.location.city).toBe('D***');
    expect(m.src_endpoint.os).toEqual((okta as Json).src_endpoint.os);
    expect(m.message).toBe('U***');
    // Observables: names and types are labels; values masked as the attribute they name.
    expect(m.observables[0]).toEqual({
      name: 'actor.user.uid',
      type_id: 31,
      type: 'User Object: uid',
      value: '0***',
    });
    const text = JSON.stringify(m);
    for (const personal of ['username@elastic.co', '00u1abvz4pYqdM8ms4x6', '175.16.199.1', 'Dublin', '94568'])
      expect(text).not.toContain(personal);
  });

  it('masks a host name and an endpoint name, keeps an event code and a numeric id that look like digit runs', () => {
    const m = maskEvent({
      class_uid: 1007,
      activity_id: 1,
      device: { hostname: 'wks-042.corp.example', name: 'WKS-042', ip: '10.0.0.7', type_id: 2, type: 'Desktop' },
      metadata: { uid: '123456789012', event_code: '4624', product: { name: 'Sysmon' } },
      status_code: '0xC000006D',
      status_detail: 'Bad password for 10.0.0.7',
    }) as Json;
    expect(m.device).toEqual({ hostname: 'w***', name: 'W***', ip: '10.0.0.x', type_id: 2, type: 'Desktop' });
    expect(m.metadata).toEqual({ uid: '123456789012', event_code: '4624', product: { name: 'Sysmon' } });
    expect(m.status_code).toBe('0xC000006D');
    expect(m.status_detail).toBe('Bad password for 10.0.0.7');
  });

  it('parses raw_data as a raw event, and masks an unparsable one whole', () => {
    const m = maskEvent({
      class_uid: 3002,
      raw_data: '{"actor":{"alternateId":"ana@x.io"},"eventType":"user.session.start"}',
    });
    expect(m.raw_data).toBe('{"actor":{"alternateId":"a***@x.io"},"eventType":"user.session.start"}');
    expect(maskEvent({ class_uid: 3002, raw_data: '<13>Jan 1 host sshd: Accepted for ana' }).raw_data).toBe('<***');
  });

  it('keeps a coarse location, counts, and the value of an ordinary header; masks a credential header', () => {
    const mail = maskEvent({ class_uid: 4009, email: { size: 13405, subject: 'Payroll for Ana' } }) as Json;
    expect(mail.email).toEqual({ size: 13405, subject: 'P***' });
    const m = maskEvent({
      class_uid: 4002,
      src_endpoint: { location: { country: 'US', continent: 'North America', city: 'Denver' } },
      http_request: {
        http_headers: [
          { name: 'Content-Type', value: 'text/xml' },
          { name: 'Authorization', value: 'Bearer abc.def' },
          { name: 'X-Auth-Token', value: 'tok-123' },
        ],
      },
    }) as Json;
    expect(m.src_endpoint.location).toEqual({ country: 'US', continent: 'North America', city: 'D***' });
    expect(m.http_request.http_headers.map((h: Json) => h.value)).toEqual(['text/xml', 'B***', 't***']);
  });

  it('hunts copies as whole words: not inside a longer word', () => {
    const m = maskEvent({
      class_uid: 6003,
      actor: { user: { name: 'Role' } },
      api: { operation: 'AssumeRole', request: { uid: 'r-1' } },
      resources: [{ type: 'AWS::IAM::Role' }],
    }) as Json;
    expect(m.api.operation).toBe('AssumeRole');
    expect(m.resources[0].type).toBe('AWS::IAM::R***');
  });

  it('masks what it already masked to the same text (the tap masks what the dispatcher masked)', () => {
    const once = maskEvent(okta);
    expect(maskEvent(once)).toEqual(once);
  });

  it('reads attributes the schema does not know, and unmapped, by their key names', () => {
    const m = maskEvent({
      class_uid: 3002,
      unmapped: { userName: 'ana', className: 'Login' },
      x_email: 'a@b.io',
    }) as Json;
    expect(m.unmapped).toEqual({ userName: 'a***', className: 'Login' });
    expect(m.x_email).toBe('a***@b.io');
  });
});
