// Field-level checks of the AWS CloudTrail, GitHub audit log and CrowdStrike Falcon alert
// mappings on their vendor fixtures: class and activity per event, status, actor, source,
// cloud context, time as epoch ms equal to the vendor's timestamp, severity and ATT&CK.
import { describe, expect, it } from 'vitest';
import { kind, stream, type Raw } from '../../../../test/support/builtin.js';

describe('aws_cloudtrail/cloudtrail', () => {
  const { raw, out, map } = stream('aws_cloudtrail', 'cloudtrail');

  it('picks the class and activity from eventSource and eventName', () => {
    expect(out.map((e, i) => [raw[i]!.eventName, ...kind(e), e.status_id])).toEqual([
      ['ConsoleLogin', 3002, 1, 'Logon', 1],
      ['ConsoleLogin', 3002, 1, 'Logon', 2],
      ['AssumeRoleWithSAML', 3002, 1, 'Logon', 1],
      ['CreateUser', 3001, 1, 'Create', 1],
      ['AttachUserPolicy', 3001, 7, 'Attach Policy', 1],
      ['AddUserToGroup', 3006, 3, 'Add User', 1],
      ['DeleteUser', 3001, 6, 'Delete', 1],
      ['DescribeInstances', 6003, 2, 'Read', 1],
      ['PutBucketPolicy', 6003, 3, 'Update', 2],
      ['TerminateInstances', 6003, 4, 'Delete', 1],
    ]);
    expect(kind(map({ ...raw[9]!, eventSource: 's3.amazonaws.com', eventName: 'CreateBucket' }))).toEqual([
      6003,
      1,
      'Create',
    ]);
    expect(kind(map({ ...raw[9]!, eventSource: 'kms.amazonaws.com', eventName: 'Decrypt', readOnly: false }))).toEqual([
      6003,
      99,
      'Decrypt',
    ]);
  });

  it('declares the cloud profile and fills cloud, api and the actor on every event', () => {
    for (const [i, e] of out.entries()) {
      expect(e.metadata.profiles).toEqual(['cloud']);
      expect(e.cloud).toMatchObject({
        provider: 'AWS',
        region: raw[i]!.awsRegion,
        account: { uid: '111122223333', type_id: 10 },
      });
      expect(e.api.operation).toBe(raw[i]!.eventName);
      expect(e.api.service.name).toBe(raw[i]!.eventSource);
      expect(e.time).toBe(Date.parse(raw[i]!.eventTime));
      expect(e.metadata.uid).toBe(raw[i]!.eventID);
    }
    expect(out[7]!.cloud.region).toBe('eu-west-1');
    expect(out[7]!.actor.user).toMatchObject({
      name: 'Engineering-ReadOnly',
      type_id: 99,
      type: 'AssumedRole',
      credential_uid: 'ASIAEXAMPLEROLE3H7KQ',
    });
    expect(out[7]!.actor.session).toEqual({
      issuer: 'arn:aws:iam::111122223333:role/Engineering-ReadOnly',
      created_time: Date.parse('2025-03-14T11:03:18Z'),
      is_mfa: false,
    });
  });

  it('maps console sign-ins with MFA and federated sessions with their protocol', () => {
    const [ok, failed, saml] = out as [Raw, Raw, Raw];
    expect(ok.user).toMatchObject({ name: 'jane.doe', uid_alt: 'AIDAEXAMPLEJANE7Q2XK', type_id: 1 });
    // OCSF: uid is the AWS user ARN, uid_alt the principal id.
    expect(ok.user.uid).toMatch(/^arn:aws:iam::/);
    expect([ok.is_mfa, ok.logon_type_id, ok.src_endpoint.ip, ok.service.name]).toEqual([
      true,
      2,
      '198.51.100.23',
      'signin.amazonaws.com',
    ]);
    expect([failed.is_mfa, failed.status_detail]).toEqual([false, 'Failed authentication']);
    expect([saml.auth_protocol_id, saml.user.name, saml.actor.idp.name]).toEqual([
      5,
      'jane.doe@example.com',
      'Q2xkM3ZhZ2Vfa2V5X2V4YW1wbGU=',
    ]);
  });

  it('maps IAM user and group changes to the target user, policy and group', () => {
    expect(out[3]!.user).toMatchObject({
      name: 'sam.lee',
      uid_alt: 'AIDAEXAMPLESAMLEE9V3',
      uid: 'arn:aws:iam::111122223333:user/sam.lee',
    });
    expect(out[3]!.actor.user.name).toBe('it.admin');
    expect(out[3]!.actor.session.is_mfa).toBe(true);
    expect(out[4]!.policy).toEqual({ uid: 'arn:aws:iam::aws:policy/ReadOnlyAccess' });
    expect([out[5]!.group.name, out[5]!.user.name]).toEqual(['Developers', 'sam.lee']);
  });

  it('keeps errors, resources, request data and service principals', () => {
    const denied = out[8]!;
    expect([denied.status_code, denied.api.response.error]).toEqual(['AccessDenied', 'AccessDenied']);
    expect(denied.status_detail).toMatch(/is not authorized to perform: s3:PutBucketPolicy/);
    expect(denied.resources).toEqual([{ uid: 'arn:aws:s3:::example-corp-invoices', type: 'AWS::S3::Bucket' }]);
    expect(denied.api.request).toMatchObject({
      uid: '1a2b3c4d5e6f7A8B',
      data: { bucketName: 'example-corp-invoices' },
    });
    const byService = out[9]!;
    expect(byService.src_endpoint).toEqual({ name: 'autoscaling.amazonaws.com' });
    expect(byService.actor.invoked_by).toBe('autoscaling.amazonaws.com');
    expect(out[7]!.dst_endpoint.hostname).toBe('ec2.eu-west-1.amazonaws.com');
  });
});

describe('github/audit_log', () => {
  const { raw, out, map } = stream('github', 'audit_log');

  it('picks the class from the action and the activity from the action or operation_type', () => {
    expect(out.map((e, i) => [raw[i]!.action, ...kind(e)])).toEqual([
      ['org.add_member', 3001, 1, 'Create'],
      ['org.remove_member', 3001, 6, 'Delete'],
      ['team.add_member', 3006, 3, 'Add User'],
      ['team.remove_member', 3006, 4, 'Remove User'],
      ['repo.create', 3004, 1, 'Create'],
      ['repo.access', 3004, 3, 'Update'],
      ['repo.destroy', 3004, 4, 'Delete'],
      ['user.failed_login', 3002, 1, 'Logon'],
      ['protected_branch.policy_override', 3004, 3, 'Update'],
    ]);
    out.forEach((e, i) => expect(e.time).toBe(raw[i]!['@timestamp']));
  });

  it('maps the actor, the affected user, team and repository', () => {
    expect(out[0]!.actor.user).toMatchObject({
      name: 'octo-admin',
      uid: '5123401',
      type_id: 1,
      org: { name: 'example-corp', uid: '90412377' },
    });
    expect(out[0]!.user).toMatchObject({ name: 'sam-lee-example', uid: '8823117', email_addr: 'sam.lee@example.com' });
    expect(out[0]!.src_endpoint).toEqual({ ip: '203.0.113.45', location: { country: 'US' } });
    expect(out[2]!.group).toEqual({ name: 'example-corp/platform-eng', uid: '11873' });
    expect(out[2]!.privileges).toEqual(['maintainer']);
    expect(out[3]!.actor).toMatchObject({ app_name: 'hr-sync', user: { type_id: 4, type: 'Service' } });
    expect(out[4]!.entity).toEqual({
      name: 'example-corp/payments-api',
      uid: '771203345',
      type_id: 99,
      type: 'Repository',
    });
    expect([out[7]!.status_id, out[7]!.user.name, out[7]!.src_endpoint.location.country]).toEqual([
      2,
      'jane-doe-example',
      'NL',
    ]);
  });

  it('maps organization-level entries and entries without an actor IP', () => {
    const orgLevel = map({
      ...raw[1]!,
      action: 'org.update_default_repository_permission',
      operation_type: 'modify',
      user: undefined,
      user_id: undefined,
    });
    expect(kind(orgLevel)).toEqual([3004, 3, 'Update']);
    expect(orgLevel.entity).toEqual({ name: 'example-corp', uid: '90412377', type_id: 4, type: 'Organization' });
    const noIp = map({ ...raw[4]!, actor_ip: undefined });
    expect(noIp.src_endpoint).toBeUndefined();
  });
});

describe('crowdstrike_falcon/alerts', () => {
  const { raw, out, map } = stream('crowdstrike_falcon', 'alerts');

  it('maps every alert to a Detection Finding whose activity and status follow the alert status', () => {
    expect(out.map((e, i) => [raw[i]!.status, ...kind(e), e.status_id, e.status])).toEqual([
      ['new', 2004, 1, 'Create', 1, 'New'],
      ['in_progress', 2004, 2, 'Update', 2, 'In Progress'],
      ['closed', 2004, 3, 'Close', 4, 'Resolved'],
      ['new', 2004, 1, 'Create', 1, 'New'],
      ['reopened', 2004, 2, 'Update', 99, 'reopened'],
    ]);
    out.forEach((e, i) => expect(e.time).toBe(Date.parse(raw[i]!.updated_timestamp)));
  });

  it('maps Falcon severity to OCSF severity, by name or by score', () => {
    expect(out.map((e) => [e.severity_id, e.severity, e.risk_score])).toEqual([
      [5, 'Critical', 90],
      [4, 'High', 70],
      [3, 'Medium', 50],
      [2, 'Low', 30],
      [1, 'Informational', 10],
    ]);
    const byScore = (severity: number) => map({ ...raw[0]!, severity, severity_name: undefined }).severity_id;
    expect([byScore(95), byScore(75), byScore(55), byScore(25), byScore(5)]).toEqual([5, 4, 3, 2, 1]);
  });

  it('puts MITRE ATT&CK tactic and technique in finding_info.attacks', () => {
    expect(out[0]!.finding_info).toMatchObject({
      uid: raw[0]!.composite_id,
      title: 'NtdsFileAccessedViaVss',
      attacks: [
        {
          tactic: { uid: 'TA0006', name: 'Credential Access' },
          technique: { uid: 'T1003', name: 'OS Credential Dumping' },
        },
      ],
      analytic: { uid: '10211', name: 'NtdsFileAccessedViaVss', type_id: 2 },
    });
    expect(out[1]!.finding_info.attacks).toEqual([
      { tactic: { uid: 'TA0002', name: 'Execution' }, sub_technique: { uid: 'T1059.001', name: 'PowerShell' } },
    ]);
    // Falcon's own machine-learning "tactics" are not ATT&CK: kept as finding types instead.
    expect(out[4]!.finding_info.attacks).toBeUndefined();
    expect(out[4]!.finding_info.types).toEqual(['NGAV', 'Machine Learning: Adware/PUP']);
    expect(out[4]!.finding_info.analytic.type_id).toBe(4);
  });

  it('describes the host, the triggering process and what the sensor did about it', () => {
    const [critical, high, medium] = out as [Raw, Raw, Raw];
    expect(critical.device).toMatchObject({
      uid: '0f9e8d7c6b5a49382716a5b4c3d2e1f0',
      hostname: 'dc01',
      ip: '10.20.1.10',
      type_id: 1,
      os: { type_id: 100 },
    });
    expect(medium.device.os).toEqual({ name: 'Sonoma (14)', type_id: 300, type: 'macOS' });
    const process = high.evidences[0].process;
    expect(process).toMatchObject({
      uid: '88213344790',
      pid: 8841,
      name: 'powershell.exe',
      user: { name: 'jane.doe', domain: 'CORP' },
    });
    expect(process.file.hashes).toEqual([
      { algorithm_id: 3, algorithm: 'SHA-256', value: raw[1]!.sha256 },
      { algorithm_id: 1, algorithm: 'MD5', value: raw[1]!.md5 },
    ]);
    expect(process.parent_process).toMatchObject({ name: 'WINWORD.EXE', pid: 7720 });
    expect([
      critical.disposition_id,
      critical.action_id,
      high.disposition_id,
      high.action_id,
      out[4]!.disposition_id,
    ]).toEqual([3, 2, 15, 3, 2]);
    const md5Only = map({ ...raw[1]!, sha256: undefined }).evidences[0].process.file.hashes;
    expect(md5Only).toEqual([{ algorithm_id: 1, algorithm: 'MD5', value: raw[1]!.md5 }]);
  });
});
