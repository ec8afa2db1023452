// Field-level checks of the Microsoft Graph security alerts mapping (alert_v2 -> Detection
// Finding) on its fixtures: activity and status per alert status, severity, classification as
// verdict, MITRE ATT&CK, and each kind of evidence. Every output is validated against the
// official OCSF schema by stream().map.
import { describe, expect, it } from 'vitest';
import { kind, stream, type Raw } from '../../../../test/support/builtin.js';

describe('microsoft_graph/security_alerts', () => {
  const { raw, out, map } = stream('microsoft_graph', 'security_alerts');

  it('maps every alert to a Detection Finding whose activity and status follow the alert status', () => {
    expect(out.map((e, i) => [raw[i]!.status, ...kind(e), e.status_id, e.status])).toEqual([
      ['new', 2004, 1, 'Create', 1, 'New'],
      ['inProgress', 2004, 2, 'Update', 2, 'In Progress'],
      ['resolved', 2004, 3, 'Close', 4, 'Resolved'],
      ['new', 2004, 1, 'Create', 1, 'New'],
      ['resolved', 2004, 3, 'Close', 4, 'Resolved'],
      ['new', 2004, 1, 'Create', 1, 'New'],
    ]);
    // The finding as it stands at its last update: an updated alert is a new version of it.
    out.forEach((e, i) => expect(e.time).toBe(Date.parse(raw[i]!.lastUpdateDateTime)));
    out.forEach((e, i) =>
      expect([e.metadata.uid, e.finding_info.uid, e.metadata.tenant_uid]).toEqual([
        raw[i]!.id,
        raw[i]!.id,
        raw[i]!.tenantId,
      ]),
    );
    const unknownStatus = map({ ...raw[0]!, status: 'unknownFutureValue' });
    expect([unknownStatus.activity_id, unknownStatus.activity_name, unknownStatus.status_id]).toEqual([
      99,
      'unknownFutureValue',
      99,
    ]);
  });

  it('maps severity, the analyst classification and the portal links', () => {
    expect(out.map((e) => [e.severity_id, e.severity])).toEqual([
      [3, 'Medium'],
      [4, 'High'],
      [4, 'High'],
      [4, 'High'],
      [2, 'Low'],
      [1, 'Informational'],
    ]);
    expect(out.map((e) => e.verdict_id)).toEqual([0, 0, 2, undefined, 6, undefined]);
    expect([out[2]!.verdict, out[2]!.status_detail, out[0]!.status_detail]).toEqual([
      'True Positive',
      'phishing',
      undefined,
    ]);
    expect(map({ ...raw[2]!, classification: 'falsePositive', determination: 'other' }).verdict_id).toBe(1);
    expect(out[1]!.assignee).toEqual({ name: 'it.admin@example.com' });
    expect(out[0]!.src_url).toBe(raw[0]!.incidentWebUrl);
    expect(out[0]!.finding_info).toMatchObject({
      src_url: raw[0]!.alertWebUrl,
      title: 'Suspicious execution of hidden file',
      product: {
        name: 'Microsoft Defender for Endpoint',
        vendor_name: 'Microsoft',
        uid: 'microsoftDefenderForEndpoint',
      },
      analytic: { uid: 'e0da400f-affd-43ef-b1d5-afc2eb6f2756', type_id: 0 },
      created_time: Date.parse(raw[0]!.createdDateTime),
    });
    expect(out[5]!.finding_info.analytic.type_id).toBe(1);
    expect(out[0]!.metadata.correlation_uid).toBe('4211');
    expect(out[4]!.unmapped.comments[0].comment).toBe('Red team exercise');
  });

  it('puts the category as the ATT&CK tactic and every technique in finding_info.attacks', () => {
    expect(out[1]!.finding_info.attacks).toEqual([
      { technique: { uid: 'T1078' }, tactic: { uid: 'TA0001', name: 'Initial Access' } },
      { sub_technique: { uid: 'T1078.004' } },
    ]);
    expect(out[4]!.finding_info.attacks).toEqual([{ tactic: { uid: 'TA0001', name: 'Initial Access' } }]);
    const noAttack = map({ ...raw[4]!, category: 'SuspiciousActivity' });
    expect(noAttack.finding_info.attacks).toBeUndefined();
    expect(noAttack.finding_info.types).toEqual(['SuspiciousActivity']);
  });

  it('maps device, process, file, user, IP, URL and mailbox evidence and keeps the other kinds unmapped', () => {
    const [device, process] = out[0]!.evidences as Raw[];
    expect(device).toMatchObject({
      name: '#microsoft.graph.security.deviceEvidence',
      verdict_id: 4,
      device: {
        uid: raw[0]!.evidence[0].mdeDeviceId,
        hostname: 'lt-jdoe-01.corp.example.com',
        type_id: 2,
        os: { name: 'Windows11', type_id: 100, build: '22631' },
      },
    });
    expect(process!.process).toMatchObject({
      pid: 7384,
      name: 'wscript.exe',
      user: { name: 'jane.doe', domain: 'CORP' },
      parent_process: { pid: 5120, name: 'explorer.exe' },
    });
    expect(process!.process.file.hashes.map((h: Raw) => h.algorithm)).toEqual(['SHA-256', 'SHA-1']);
    expect(out[3]!.evidences[0].device.type_id).toBe(1);
    expect(out[3]!.evidences[1].user).toMatchObject({
      name: 'jane.doe@example.com',
      uid: '3a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
      full_name: 'Jane Doe',
    });
    expect(out[4]!.evidences.map((e: Raw) => [e.src_endpoint.ip, e.verdict])).toEqual([
      ['198.51.100.40', 'Benign'],
      ['203.0.113.9', 'Benign'],
    ]);
    expect(out[5]!.evidences[0].file).toMatchObject({
      name: 'powershell.exe',
      type_id: 1,
      company_name: 'Microsoft Corporation',
    });
    // A URL evidence maps to url, a mailbox evidence to the user of the mailbox.
    expect(out[2]!.evidences[0]).toEqual({
      name: '#microsoft.graph.security.urlEvidence',
      verdict_id: 2,
      verdict: 'True Positive',
      url: { url_string: raw[2]!.evidence[0].url },
    });
    expect(out[2]!.evidences[1]).toMatchObject({
      name: '#microsoft.graph.security.mailboxEvidence',
      user: { email_addr: 'sam.lee@example.com' },
    });
    const sha1Only = map({
      ...raw[5]!,
      evidence: [
        {
          ...raw[5]!.evidence[0],
          fileDetails: { fileName: 'a.exe', sha1: '6cbce4a295c163791b60fc23d285e6d84f28ee4c' },
        },
      ],
    });
    expect(sha1Only.evidences[0].file.hashes).toEqual([
      { algorithm_id: 2, algorithm: 'SHA-1', value: '6cbce4a295c163791b60fc23d285e6d84f28ee4c' },
    ]);
  });
});
