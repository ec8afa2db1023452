// Field-level checks of the identity-provider mappings (Okta, Microsoft Entra ID via Graph,
// Google Workspace) on their vendor fixtures: class and activity per event type, status, the
// user, the source address, and time as epoch ms equal to the vendor's own timestamp.
import { describe, expect, it } from 'vitest';
import { kind, stream, type Raw } from '../../../../test/support/builtin.js';

describe('okta/system_log', () => {
  const { raw, out, map } = stream('okta', 'system_log');

  it('maps sign-ins and sign-outs to Authentication with the user, source and outcome', () => {
    const [ok, failed, mfa, sso, logout] = out as [Raw, Raw, Raw, Raw, Raw];
    expect(kind(ok)).toEqual([3002, 1, 'Logon']);
    expect(ok.time).toBe(Date.parse(raw[0]!.published));
    expect(ok.user).toMatchObject({
      uid: '00u8f2k1qzJ3hT5Xy4x7',
      name: 'jane.doe@example.com',
      email_addr: 'jane.doe@example.com',
      type_id: 1,
    });
    expect(ok.src_endpoint).toMatchObject({
      ip: '198.51.100.23',
      location: { city: 'Denver', country: 'United States' },
    });
    expect(ok.http_request.user_agent).toContain('Chrome/126');
    expect([ok.status_id, ok.status, ok.severity_id, ok.service.name]).toEqual([1, 'Success', 1, 'Okta']);
    expect(ok.session.uid).toBe('102bZnFj2pBSuqf1Wkqj8QxRw');
    expect([failed.status_id, failed.status_detail, failed.severity_id]).toEqual([2, 'INVALID_CREDENTIALS', 3]);
    expect(mfa.is_mfa).toBe(true);
    expect(mfa.auth_factors).toEqual([{ factor_type_id: 5, factor_type: 'Push Notification', provider: 'Okta' }]);
    expect(sso.service).toEqual({ name: 'Salesforce.com', uid: '0oa4x7c9tGh2Jk5Lm8n3' });
    expect([sso.auth_protocol_id, sso.auth_protocol]).toEqual([5, 'SAML']);
    expect(kind(logout)).toEqual([3002, 2, 'Logoff']);
  });

  it('maps user lifecycle, password and MFA factor events to Account Change on the target user', () => {
    expect(kind(out[5]!)).toEqual([3001, 1, 'Create']);
    expect(out[5]!.user).toMatchObject({
      uid: '00u5t6y7u8I9o0P1a2s3',
      name: 'sam.lee@example.com',
      full_name: 'Sam Lee',
    });
    expect(out[5]!.actor.user.name).toBe('it.admin@example.com');
    expect(kind(out[6]!)).toEqual([3001, 3, 'Password Change']);
    expect(kind(out[7]!)).toEqual([3001, 11, 'MFA Factor Disable']);
    expect(out[7]!.auth_factors[0]).toMatchObject({ factor_type_id: 1, factor_type: 'SMS' });
  });

  it('maps group membership to Group Management whatever the order of the targets', () => {
    expect(kind(out[8]!)).toEqual([3006, 3, 'Add User']);
    expect(out[8]!.group).toEqual({ uid: '00g2w3e4r5T6y7U8i9o0', name: 'Engineering' });
    expect(out[8]!.user.name).toBe('sam.lee@example.com');
    const swapped = map({ ...raw[8]!, target: [...raw[8]!.target].reverse() });
    expect([swapped.group.name, swapped.user.name]).toEqual(['Engineering', 'sam.lee@example.com']);
  });

  it('maps other events with a target to Entity Management, and the rest to a Base Event', () => {
    expect(kind(out[9]!)).toEqual([3004, 3, 'Update']);
    expect(out[9]!.entity).toMatchObject({
      uid: '00p6h7j8k9L0z1X2c3v4',
      name: 'Default Password Policy',
      type_id: 5,
      type: 'Policy',
    });
    const nobody = { asNumber: null, asOrg: null, isp: null, domain: null, isProxy: null };
    const system = map({
      ...raw[5]!,
      eventType: 'system.org.rate_limit.warning',
      target: null,
      client: { ipAddress: null },
      securityContext: nobody,
    });
    expect(kind(system)).toEqual([0, 99, 'system.org.rate_limit.warning']);
    expect(system.metadata.event_code).toBe('system.org.rate_limit.warning');
    expect(system.src_endpoint).toBeUndefined();
    expect(map({ ...raw[5]!, eventType: 'system.api_token.create', target: null }).class_uid).toBe(6003);
  });

  it('keeps the vendor word for outcomes and activities OCSF has no value for', () => {
    const challenged = map({ ...raw[0]!, outcome: { result: 'CHALLENGE', reason: null } });
    expect([challenged.status_id, challenged.status]).toEqual([99, 'CHALLENGE']);
    const impersonation = map({ ...raw[0]!, eventType: 'user.session.impersonation.initiate' });
    expect(kind(impersonation)).toEqual([3002, 7, 'Account Switch']);
    expect(impersonation.account_switch_type_id).toBe(2);
  });
});

describe('microsoft_graph/signins', () => {
  const { raw, out } = stream('microsoft_graph', 'signins');

  it('maps every sign-in to an Authentication logon, failed when errorCode is not 0', () => {
    expect(out.map((e) => [e.class_uid, e.activity_id, e.status_id, e.status_code])).toEqual([
      [3002, 1, 1, '0'],
      [3002, 1, 2, '50126'],
      [3002, 1, 2, '50074'],
      [3002, 1, 2, '53003'],
      [3002, 1, 1, '0'],
      [3002, 1, 2, '50053'],
    ]);
    out.forEach((e, i) => expect(e.time).toBe(Date.parse(raw[i]!.createdDateTime)));
    // A success carries Graph's additional details, never its "Other." failure reason.
    expect(out[0]!.status_detail).toBe('MFA requirement satisfied by claim in the token');
    expect(out[1]!.status_detail).toMatch(/invalid username or password/);
  });

  it('takes the user, application, resource, source, MFA and risk from the sign-in', () => {
    const [ok, failed, , , mobile, locked] = out as Raw[];
    expect(ok!.user).toMatchObject({
      uid: '3a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
      name: 'jane.doe@example.com',
      full_name: 'Jane Doe',
    });
    // The resource signed in to is the service; the client application is the actor's app.
    expect(ok!.service).toEqual({ name: 'Microsoft Teams Services', uid: 'cc15fd57-2c6c-4117-a88c-83b1d56b4bbe' });
    expect(ok!.actor).toEqual({
      app_name: 'Microsoft Teams Web Client',
      app_uid: '5e3ce6c0-2b1f-4285-8d4b-75ee78787346',
    });
    expect(ok!.src_endpoint).toMatchObject({
      ip: '198.51.100.23',
      name: 'LT-JDOE-01',
      location: { city: 'Seattle', country: 'US' },
    });
    expect([ok!.is_mfa, ok!.logon_type_id, ok!.severity_id]).toEqual([true, 2, 1]);
    expect([failed!.is_mfa, failed!.severity_id, failed!.severity]).toEqual([false, 3, 'Medium']);
    expect(mobile!.src_endpoint.ip).toBe('2001:db8:85a3::8a2e:370:7334');
    expect(mobile!.src_endpoint.uid).toBeUndefined();
    expect(locked!.severity_id).toBe(4);
    // clientAppUsed is the kind of client: Browser, else Other with Graph's words.
    expect([ok!.src_endpoint.type_id, ok!.src_endpoint.type, ok!.unmapped.clientAppUsed]).toEqual([
      8,
      'Browser',
      undefined,
    ]);
  });
});

describe('microsoft_graph/directory_audits', () => {
  const { raw, out } = stream('microsoft_graph', 'directory_audits');

  it('maps user management to Account Change on the target user', () => {
    expect(out.map(kind)).toEqual([
      [3001, 1, 'Create'],
      [3001, 6, 'Delete'],
      [3001, 3, 'Password Change'],
      [3001, 4, 'Password Reset'],
      [3006, 3, 'Add User'],
      [3006, 4, 'Remove User'],
      [3004, 3, 'Update'],
      [3001, 5, 'Disable'],
    ]);
    expect(out[0]!.user).toMatchObject({ uid: '4b2c3d4e-5f6a-4b7c-9d8e-0f1a2b3c4d5e', name: 'sam.lee@example.com' });
    expect(out[0]!.actor.user.name).toBe('it.admin@example.com');
    expect(out[0]!.src_endpoint.ip).toBe('192.0.2.14');
    expect(out[0]!.time).toBe(Date.parse(raw[0]!.activityDateTime));
    expect([out[3]!.status_id, out[3]!.status_detail]).toEqual([
      2,
      'Password does not comply with password complexity requirements.',
    ]);
  });

  it('maps group membership and other changes with the initiating user or application', () => {
    expect(out[4]!.group).toEqual({
      uid: '9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b',
      name: 'Engineering',
      type: 'unifiedGroups',
    });
    expect(out[4]!.user.name).toBe('sam.lee@example.com');
    expect(out[5]!.actor).toEqual({
      app_uid: '8f1e2d3c-4b5a-4698-8776-5a4b3c2d1e0f',
      app_name: 'HR Provisioning Connector',
    });
    expect(out[6]!.entity).toMatchObject({ name: 'Expense Reports', type_id: 99, type: 'Application' });
    expect(out[6]!.entity.data[0].displayName).toBe('AppAddress');
  });
});

describe('google_workspace/login', () => {
  const { raw, out, map } = stream('google_workspace', 'login');

  it('maps sign-in events to Authentication with outcome, MFA factors and suspicion', () => {
    expect(out.map(kind)).toEqual([
      [3002, 1, 'Logon'],
      [3002, 1, 'Logon'],
      [3002, 1, 'Logon'],
      [3002, 1, 'Logon'],
      [3002, 2, 'Logoff'],
      [3001, 3, 'Password Change'],
      [3001, 10, 'MFA Factor Enable'],
      [3002, 1, 'Logon'],
    ]);
    const [ok, failed, saml, challenge, logout] = out as Raw[];
    expect(ok!.time).toBe(Date.parse(raw[0]!.id.time));
    expect(ok!.user).toMatchObject({
      name: 'jane.doe@example.com',
      uid: '104543214897651234567',
      account: { type_id: 15, uid: 'C03az79cb' },
    });
    expect([ok!.status_id, ok!.is_mfa, ok!.auth_factors.map((f: Raw) => f.factor_type)]).toEqual([
      1,
      true,
      ['Password', 'Push Notification'],
    ]);
    expect([failed!.status_id, failed!.status_detail, failed!.severity_id]).toEqual([
      2,
      'login_failure_invalid_password',
      3,
    ]);
    expect([saml!.auth_protocol_id, saml!.is_mfa]).toEqual([5, undefined]);
    expect([challenge!.status_id, challenge!.auth_factors[0].factor_type_id]).toEqual([1, 10]);
    expect(logout!.src_endpoint.ip).toBe('2001:db8:85a3::8a2e:370:7334');
    // suspicious_login: a sign-in Google flagged, so a failed Logon of high severity (account_warning).
    expect([out[7]!.severity_id, out[7]!.status_id, out[7]!.metadata.event_code]).toEqual([4, 2, 'suspicious_login']);
    const failedChallenge = map({
      ...raw[3]!,
      events: [{ ...raw[3]!.events[0], parameters: [{ name: 'login_challenge_status', value: 'Challenge Failed' }] }],
    });
    expect(failedChallenge.status_id).toBe(2);
  });
});

describe('google_workspace/admin', () => {
  const { raw, out } = stream('google_workspace', 'admin');

  it('maps user settings to Account Change, group settings to Group Management, the rest to Entity Management', () => {
    expect(out.map(kind)).toEqual([
      [3001, 1, 'Create'],
      [3001, 6, 'Delete'],
      [3001, 4, 'Password Reset'],
      [3001, 5, 'Disable'],
      [3006, 3, 'Add User'],
      [3006, 4, 'Remove User'],
      [3004, 3, 'Update'],
      [3001, 7, 'Attach Policy'],
    ]);
    expect(out[0]!.user).toMatchObject({ name: 'sam.lee@example.com', email_addr: 'sam.lee@example.com' });
    expect(out[0]!.actor.user).toMatchObject({ name: 'it.admin@example.com', type_id: 2, type: 'Admin' });
    expect(out[0]!.time).toBe(Date.parse(raw[0]!.id.time));
    expect(out[4]!.group).toEqual({ name: 'engineering@example.com', uid: 'engineering@example.com' });
    expect(out[4]!.user.email_addr).toBe('sam.lee@example.com');
    expect(out[6]!.entity.name).toBe('Allow users to share Drive files outside example.com');
    expect(out[6]!.entity.data).toContainEqual({ name: 'NEW_VALUE', value: 'false' });
    expect(out[7]!.policy).toMatchObject({ name: '_HELP_DESK_ADMIN_ROLE', uid: '91447453409035734' });
    expect(out[7]!.metadata.event_code).toBe('ASSIGN_ROLE');
  });
});
