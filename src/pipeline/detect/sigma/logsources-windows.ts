// The Sigma logsources of the Windows event logs (docs/sigma.md): `product: windows` with
// `service: security` and `service: system`, and the PowerShell categories `ps_script`,
// `ps_module` and `ps_classic_start`, as the built-in windows_security / security mapping
// writes them. That one mapping reads the Security, System and PowerShell channels.
//
// One variant per group of EventIDs that share an OCSF class and a field table. The Sigma
// field names are the events' EventData names, which are also the flat raw keys the mapping
// reads (beside `EventData.X` and `winlog.event_data.X`); `raw` names the key where it differs.
// Every variant is pinned to the mapping's product and to its own EventIDs: the compiler
// decides a rule's `EventID` item against `eventIds`, and an item naming all of a variant's ids
// compiles to true, so the variant's `where` must itself select exactly those events (class
// 3002 also holds sign-ins of Okta, Entra ID and others).
//
// Left out on purpose, so that a rule on them is refused rather than imported to never fire
// (or to fire on other values):
// - values the mapping drops: `IpPort` of the sign-in events (0 left out; rules test it), the
//   `ClientProcessId` of 4697 and 4698 (0 left out; a SigmaHQ rule tests `ClientProcessId: 0`),
//   4648's `TargetServerName` (`localhost` and `-` are replaced by the computer's name), and
//   4778's `ClientName` (`Unknown` left out);
// - values the mapping folds together: `ServiceType` (0x10 and 0x110 are both Own Process),
//   4672's `PrivilegeList` (split into words: Sigma compares the whole text), 4688's
//   `TargetUserName` (the process user falls back to the subject when the target is empty);
// - Windows writes `-` (and S-1-0-0 for a SID, 0x0 for a logon id) for an empty field, and the
//   mapping leaves such values out, as absent: a rule item `IpAddress: '-'` compiles, but can
//   only be false (`IpAddress: null` is how to test for the empty value).
import type { Condition } from '../../conditions/types.js';
import {
  activityIs,
  f,
  keptWindows,
  productIs,
  type SigmaField,
  type SigmaLogsource,
  type SigmaVariant,
} from './logsource-types.js';

const MAPPING = 'windows_security.security';
/** The mapping's product: every event it writes, of any of the three channels. */
const PRODUCT = 'Windows Security Auditing';

type Fields = Record<string, SigmaField>;

const eventCodes = (ids: readonly string[]): Condition =>
  ids.length === 1
    ? { field: 'metadata.event_code', op: 'eq', value: ids[0]! }
    : { field: 'metadata.event_code', op: 'in', value: [...ids] };

/** Events with these EventIDs that the named rules of the mapping write in `classUid`. */
function win(
  classUid: number,
  eventIds: string[],
  rules: string[],
  fields: Fields,
  opts: { activity?: number; note?: string } = {},
): SigmaVariant {
  const where: Condition[] = [productIs(PRODUCT), eventCodes(eventIds)];
  if (opts.activity !== undefined) where.push(activityIs(opts.activity));
  // Windows writes `-` for an empty field and S-1-0-0 for an empty SID; the mapping leaves both out.
  const all: Fields = { ...HOST, ...fields };
  for (const [name, field] of Object.entries(all))
    if (name.endsWith('Sid') && !field.also) all[name] = { ...field, placeholders: ['S-1-0-0'] };
  return {
    classes: [classUid],
    where,
    eventIds,
    sources: [{ mapping: MAPPING, rules }],
    placeholders: ['-'],
    fields: all,
    ...(opts.note ? { note: opts.note } : {}),
  };
}

// The mapping's rule names (rules[].name), as written there.
const R = {
  logon: 'logon (4624) and failed logon (4625)',
  logoff: 'logoff (4634, 4647)',
  explicit: 'logon with explicit credentials (4648)',
  kerberos: 'Kerberos tickets (4768-4773)',
  ntlm: 'NTLM credential validation (4776)',
  session: 'session reconnected (4778) and disconnected (4779)',
  privileges: 'special privileges assigned to a new logon (4672)',
  processStart: 'process creation (4688)',
  processEnd: 'process termination (4689)',
  service4697: 'service installed (4697)',
  service7045: 'service installed (System 7045)',
  service7040: 'service start type changed (System 7040)',
  task: 'scheduled task created, deleted, enabled, disabled, updated (4698-4702)',
  account: 'user and computer accounts (4720-4726, 4740, 4741, 4743, 4767, 4794)',
  accountChanged: 'accounts changed (4738, 4742, 4765, 4766, 4780, 4781)',
  group: 'group created, member added or removed, group deleted (4727-4734, 4744-4763)',
  groupChanged: 'group changed or enumerated (4735, 4737, 4745, 4750, 4755, 4760, 4764, 4799)',
  fileObject: 'file handle requested or accessed, permissions changed (4656, 4663, 4670 on a File)',
  keyObject: 'registry key handle requested or accessed, permissions changed (4656, 4663, 4670 on a Key)',
  regValue: 'registry value modified (4657)',
  otherObject: 'other object handle requested or accessed (4656, 4661, 4663)',
  otherObjectPerms: 'permissions changed on another object (4670)',
  share: 'network share accessed (5140) and share object checked (5145)',
  wfp: 'connection permitted (5156), blocked (5157), packet dropped (5152), listen permitted (5154)',
  securityLog: 'Security log cleared (1102), event log service stopped (1100), log archived (1105)',
  systemLog: 'event log cleared (System 104)',
  scriptBlock: 'PowerShell script block (4104)',
  module: 'PowerShell module logging (4103)',
  engine: 'Windows PowerShell engine started (400)',
} as const;

/** Written for every event by the mapping's defaults: the machine and the event's provider. */
const HOST: Fields = {
  Computer: f('device.hostname', 'System.Computer'),
  Provider_Name: f('metadata.log_provider', 'System.Provider.Name'),
};

/** The account that did it (the Subject* fields of most Security events). */
const SUBJECT: Fields = {
  SubjectUserSid: f('actor.user.uid'),
  SubjectUserName: f('actor.user.name'),
  SubjectDomainName: f('actor.user.domain'),
  SubjectLogonId: f('actor.session.uid'),
};

/** The process that did it, as the object-access events name it (ProcessId in hex). */
const PROCESS: Fields = {
  ProcessName: f('actor.process.file.path'),
  ProcessId: { path: 'actor.process.pid', compose: 'hex' },
};

/** Windows' logon type numbers; the mapping moves 0 (System) to OCSF's 1 and keeps the others. */
const LOGON_TYPES: Record<string, number> = {
  '0': 1,
  '2': 2,
  '3': 3,
  '4': 4,
  '5': 5,
  '7': 7,
  '8': 8,
  '9': 9,
  '10': 10,
  '11': 11,
  '12': 12,
  '13': 13,
};
const LOGON_TYPE: SigmaField = { path: 'logon_type_id', values: LOGON_TYPES };

/**
 * The authentication package as auth_protocol_id. Negotiate, CloudAP and the other packages
 * are all Other (99) there, so only NTLM and Kerberos compare; a rule naming another package
 * is refused.
 */
const AUTH_PACKAGE: SigmaField = { path: 'auth_protocol_id', values: { ntlm: 1, kerberos: 2 } };

/**
 * 4688's mandatory label (a SID) as integrity_id. S-1-16-8192 (Medium) and S-1-16-8448
 * (Medium Plus) are both Medium there, so neither compares.
 */
const MANDATORY_LABEL: SigmaField = {
  path: 'process.integrity_id',
  values: { 's-1-16-0': 1, 's-1-16-4096': 2, 's-1-16-12288': 4, 's-1-16-16384': 5, 's-1-16-20480': 6 },
};

/** A service's start type: 4697 writes the number, 7045 and 7040 the text. */
const START_NUMBER = { '0': 1, '1': 2, '2': 3, '3': 4, '4': 5 };
const START_TEXT = { 'boot start': 1, 'system start': 2, 'auto start': 3, 'demand start': 4, disabled: 5 };

/**
 * Windows object types (ObjectType of 4656, 4661, 4663, 4670), as OCSF's win_resource type_id
 * numbers them. The mapping writes File objects to File System Activity and Key objects to
 * Registry Key Activity, every other named object to Windows Resource Activity.
 */
const OBJECT_TYPES: Record<string, number> = {
  directory: 1,
  event: 2,
  timer: 3,
  device: 4,
  mutant: 5,
  type: 6,
  file: 7,
  token: 8,
  thread: 9,
  section: 10,
  windowstation: 11,
  debugobject: 12,
  filtercommunicationport: 13,
  eventpair: 14,
  driver: 15,
  iocompletion: 16,
  controller: 17,
  symboliclink: 18,
  wmiguid: 19,
  process: 20,
  profile: 21,
  desktop: 22,
  keyedevent: 23,
  adapter: 24,
  key: 25,
  waitableport: 26,
  callback: 27,
  semaphore: 28,
  job: 29,
  port: 30,
  filterconnectionport: 31,
  'alpc port': 32,
  sam_alias: 33,
  sam_group: 34,
  sam_user: 35,
  sam_domain: 36,
  sam_server: 37,
};

/**
 * ObjectType in the variant that holds only objects of one type: that type is true (read as the
 * variant's own class, which every one of its events has), every other type false. An object
 * type the mapping does not name (SC_MANAGER OBJECT, ...) has no OCSF number and is refused.
 */
function objectTypeIs(type: string, classUid: number): SigmaField {
  const values: Record<string, number | false> = {};
  for (const k of Object.keys(OBJECT_TYPES)) values[k] = k === type ? classUid : false;
  return { path: 'class_uid', values };
}

/** ObjectType of the other objects: File and Key objects are never among them. */
const OTHER_OBJECT_TYPE: SigmaField = {
  path: 'win_resource.type_id',
  values: { ...OBJECT_TYPES, file: false, key: false },
};

const SECURITY_VARIANTS: SigmaVariant[] = [
  win(
    3002,
    ['4624', '4625'],
    [R.logon],
    {
      ...SUBJECT,
      TargetUserSid: f('user.uid'),
      TargetUserName: f('user.name'),
      TargetDomainName: f('user.domain'),
      TargetLogonId: f('session.uid'),
      LogonType: LOGON_TYPE,
      LogonProcessName: f('logon_process.name'),
      AuthenticationPackageName: AUTH_PACKAGE,
      WorkstationName: f('src_endpoint.hostname'),
      ...PROCESS,
      IpAddress: f('src_endpoint.ip'),
      Status: f('status_code'),
      SubStatus: f('status_detail'),
    },
    {
      activity: 1,
      note: 'Authentication, Logon: 4624 (success) and 4625 (failure). The signed-in account is `user`, the account that asked `actor.user`.',
    },
  ),
  win(
    3002,
    ['4634', '4647'],
    [R.logoff],
    {
      TargetUserSid: f('user.uid'),
      TargetUserName: f('user.name'),
      TargetDomainName: f('user.domain'),
      TargetLogonId: f('session.uid'),
      LogonType: LOGON_TYPE,
    },
    { activity: 2, note: 'Authentication, Logoff.' },
  ),
  win(
    3002,
    ['4648'],
    [R.explicit],
    {
      ...SUBJECT,
      TargetUserName: f('user.name'),
      TargetDomainName: f('user.domain'),
      TargetInfo: f('dst_endpoint.svc_name'),
      ...PROCESS,
      IpAddress: f('src_endpoint.ip'),
    },
    {
      activity: 1,
      note: "Authentication, Logon: a logon with explicit credentials; the credentials' account is `user`.",
    },
  ),
  win(
    3002,
    ['4768', '4769', '4770', '4771'],
    [R.kerberos],
    {
      TargetUserName: f('user.name'),
      TargetDomainName: f('user.domain'),
      TargetSid: f('user.uid'),
      ServiceName: f('service.name'),
      ServiceSid: f('service.uid'),
      IpAddress: f('src_endpoint.ip'),
      Status: f('status_code'),
      TicketOptions: f('authentication_token.kerberos_flags'),
      TicketEncryptionType: keptWindows('TicketEncryptionType'),
      PreAuthType: keptWindows('PreAuthType'),
    },
    {
      note: 'Authentication: Kerberos ticket requests (4768, 4769), renewals (4770) and pre-authentication failures (4771).',
    },
  ),
  win(
    3002,
    ['4772', '4773'],
    [R.kerberos],
    {
      TargetUserName: f('user.name'),
      TargetDomainName: f('user.domain'),
      ServiceName: f('service.name'),
      IpAddress: f('src_endpoint.ip'),
      FailureCode: f('status_code'),
      TicketOptions: f('authentication_token.kerberos_flags'),
    },
    { note: 'Authentication: failed Kerberos ticket requests; their code is `FailureCode`, not `Status`.' },
  ),
  win(
    3002,
    ['4776'],
    [R.ntlm],
    {
      TargetUserName: f('user.name'),
      Workstation: f('src_endpoint.hostname'),
      Status: f('status_code'),
    },
    { activity: 1, note: 'Authentication: NTLM credential validation.' },
  ),
  win(
    3002,
    ['4778', '4779'],
    [R.session],
    {
      AccountName: f('user.name'),
      AccountDomain: f('user.domain'),
      LogonID: f('session.uid'),
      SessionName: f('session.terminal'),
      ClientAddress: f('src_endpoint.ip'),
    },
    { note: 'Authentication: a remote desktop session reconnected (4778) or disconnected (4779).' },
  ),
  win(
    3003,
    ['4672'],
    [R.privileges],
    {
      SubjectUserSid: f('user.uid'),
      SubjectUserName: f('user.name'),
      SubjectDomainName: f('user.domain'),
      SubjectLogonId: f('session.uid'),
    },
    { activity: 1, note: 'Authorize Session: special privileges assigned to a new logon; the account is `user`.' },
  ),
  win(
    1007,
    ['4688'],
    [R.processStart],
    {
      ...SUBJECT,
      NewProcessName: f('process.file.path'),
      NewProcessId: { path: 'process.pid', compose: 'hex' },
      CommandLine: f('process.cmd_line'),
      ParentProcessName: f('process.parent_process.file.path'),
      ProcessId: { path: 'process.parent_process.pid', compose: 'hex' },
      MandatoryLabel: MANDATORY_LABEL,
    },
    {
      activity: 1,
      note: 'Process Activity, Launch. The creator is `actor.user`; the parent is `process.parent_process`.',
    },
  ),
  win(
    1007,
    ['4689'],
    [R.processEnd],
    {
      ...SUBJECT,
      ProcessName: f('process.file.path'),
      ProcessId: { path: 'process.pid', compose: 'hex' },
      // Status (the exit code, hex) is left out: the sign-in variants' Status is text, and the
      // compiler reads a rule's Status in every variant; no SigmaHQ rule tests 4689's.
    },
    { activity: 2, note: 'Process Activity, Terminate.' },
  ),
  win(
    201004,
    ['4697'],
    [R.service4697],
    {
      ...SUBJECT,
      ServiceName: f('win_service.name'),
      ServiceFileName: f('win_service.cmd_line'),
      ServiceStartType: { path: 'win_service.service_start_type_id', values: START_NUMBER },
      ServiceAccount: f('win_service.service_start_name'),
    },
    { activity: 1, note: 'Windows Service Activity, Create: a service installed.' },
  ),
  win(
    1006,
    ['4698', '4699', '4700', '4701', '4702'],
    [R.task],
    {
      ...SUBJECT,
      TaskName: f('job.name'),
      TaskContent: keptWindows('TaskContent'),
      TaskContentNew: keptWindows('TaskContentNew'),
    },
    {
      note: "Scheduled Job Activity: a task created (4698), deleted (4699), enabled (4700), disabled (4701) or updated (4702). The task's XML (`TaskContent`, `TaskContentNew`) stays under `unmapped`.",
    },
  ),
  win(
    3001,
    ['4720', '4722', '4723', '4724', '4725', '4726', '4741', '4743', '4767', '4794'],
    [R.account],
    {
      ...SUBJECT,
      TargetUserName: f('user.name'),
      TargetDomainName: f('user.domain'),
      TargetSid: f('user.uid'),
      SamAccountName: keptWindows('SamAccountName'),
    },
    {
      note: 'Account Change: accounts created, enabled, password changed or reset, disabled, deleted, unlocked; the account is `user`.',
    },
  ),
  win(
    3001,
    ['4740'],
    [R.account],
    {
      ...SUBJECT,
      TargetUserName: f('user.name'),
      TargetSid: f('user.uid'),
      TargetDomainName: f('src_endpoint.name'),
    },
    { activity: 9, note: 'Account Change, Lock: 4740 names the computer the lockout came from in `TargetDomainName`.' },
  ),
  win(
    3001,
    ['4738', '4742', '4765', '4766', '4780'],
    [R.accountChanged],
    {
      ...SUBJECT,
      TargetUserName: f('user.name'),
      TargetDomainName: f('user.domain'),
      TargetSid: f('user.uid'),
      SamAccountName: keptWindows('SamAccountName'),
      AllowedToDelegateTo: keptWindows('AllowedToDelegateTo'),
      UserAccountControl: keptWindows('UserAccountControl'),
    },
    { activity: 99, note: 'Account Change, Other: an account changed.' },
  ),
  win(
    3001,
    ['4781'],
    [R.accountChanged],
    {
      ...SUBJECT,
      OldTargetUserName: f('user.name'),
      NewTargetUserName: f('user_result.name'),
      TargetDomainName: f('user.domain'),
      TargetSid: f('user.uid'),
    },
    { activity: 99, note: 'Account Change, Other: an account renamed; the new name is `user_result.name`.' },
  ),
  win(
    3006,
    [
      '4727',
      '4728',
      '4729',
      '4730',
      '4731',
      '4732',
      '4733',
      '4734',
      '4744',
      '4746',
      '4747',
      '4748',
      '4749',
      '4751',
      '4752',
      '4753',
      '4754',
      '4756',
      '4757',
      '4758',
      '4759',
      '4761',
      '4762',
      '4763',
    ],
    [R.group],
    {
      ...SUBJECT,
      TargetUserName: f('group.name'),
      TargetDomainName: f('group.domain'),
      TargetSid: f('group.uid'),
      MemberSid: f('user.uid'),
      MemberName: f('user.ldap_person.ldap_dn'),
    },
    {
      note: 'Group Management: a group created or deleted, a member added or removed. The group is `group` (the Target* fields), the member `user`.',
    },
  ),
  win(
    3006,
    ['4735', '4737', '4745', '4750', '4755', '4760', '4764', '4799'],
    [R.groupChanged],
    {
      ...SUBJECT,
      TargetUserName: f('group.name'),
      TargetDomainName: f('group.domain'),
      TargetSid: f('group.uid'),
      CallerProcessName: f('actor.process.file.path'),
      CallerProcessId: { path: 'actor.process.pid', compose: 'hex' },
    },
    { activity: 99, note: 'Group Management, Other: a group changed or its members enumerated (4799).' },
  ),
  win(
    1001,
    ['4656', '4663', '4670'],
    [R.fileObject],
    {
      ...SUBJECT,
      ...PROCESS,
      ObjectType: objectTypeIs('file', 1001),
      ObjectName: f('file.path'),
      AccessMask: { path: 'access_mask', compose: 'hex' },
      AccessList: keptWindows('AccessList'),
    },
    {
      note: 'File System Activity: a handle to a file requested (4656) or used (4663), or its permissions changed (4670).',
    },
  ),
  win(
    201001,
    ['4656', '4663', '4670'],
    [R.keyObject],
    {
      ...SUBJECT,
      ...PROCESS,
      ObjectType: objectTypeIs('key', 201001),
      ObjectName: f('reg_key.path'),
      AccessMask: { path: 'access_mask', compose: 'hex' },
      AccessList: keptWindows('AccessList'),
    },
    { note: 'Registry Key Activity: the same events on a registry key.' },
  ),
  win(
    201002,
    ['4657'],
    [R.regValue],
    {
      ...SUBJECT,
      ...PROCESS,
      ObjectName: f('reg_value.path'),
      ObjectValueName: f('reg_value.name'),
      NewValue: f('reg_value.data'),
      OldValue: f('prev_reg_value.data'),
    },
    { note: 'Registry Value Activity: a value modified. `ObjectName` is the key, `ObjectValueName` the value.' },
  ),
  win(
    201003,
    ['4656', '4661', '4663', '4670'],
    [R.otherObject, R.otherObjectPerms],
    {
      ...SUBJECT,
      ...PROCESS,
      ObjectType: OTHER_OBJECT_TYPE,
      ObjectName: f('win_resource.name'),
      ObjectServer: f('win_resource.svc_name'),
      AccessMask: keptWindows('AccessMask'),
      AccessList: keptWindows('AccessList'),
    },
    {
      note: "Windows Resource Activity: the same events on any other object (a process, a SAM object...). OCSF has no access mask for them: `AccessMask` stays under `unmapped`, as the event's text.",
    },
  ),
  win(
    4006,
    ['5140', '5145'],
    [R.share],
    {
      ...SUBJECT,
      ShareName: f('share'),
      RelativeTargetName: f('file.path'),
      IpAddress: f('src_endpoint.ip'),
      IpPort: f('src_endpoint.port'),
      AccessList: keptWindows('AccessList'),
    },
    { note: 'SMB Activity: a share accessed (5140) or a file in it checked (5145); the file is `file.path`.' },
  ),
  win(
    4001,
    ['5152', '5154', '5156', '5157'],
    [R.wfp],
    {
      // ProcessID (decimal here) is left out: the compiler reads Sigma names ignoring case, and
      // the other Security variants' ProcessId is hex; no SigmaHQ rule tests it.
      Application: f('actor.process.file.path'),
      SourceAddress: f('src_endpoint.ip'),
      SourcePort: f('src_endpoint.port'),
      DestAddress: f('dst_endpoint.ip'),
      DestPort: f('dst_endpoint.port'),
      Protocol: f('connection_info.protocol_num'),
      Direction: {
        path: 'connection_info.direction_id',
        values: { '%%14592': 1, '%%14593': 2, inbound: 1, outbound: 2 },
      },
    },
    {
      note: "Network Activity: the Windows Filtering Platform's connections (5156 permitted, 5157 blocked), dropped packets (5152) and listens (5154).",
    },
  ),
  win(
    1008,
    ['1100', '1102', '1105'],
    [R.securityLog],
    {
      ...SUBJECT,
      BackupPath: f('file.path', 'UserData.AutoBackup.BackupPath'),
    },
    {
      note: 'Event Log Activity: the Security log cleared (1102), the event log service stopped (1100), the log archived (1105, the archive at `file.path`).',
    },
  ),
];

/**
 * The System log's events carry no EventData ProcessId: Sigma's `ProcessId` there is the
 * process that logged the event (System/Execution/@ProcessID), decimal.
 */
const LOGGED_BY: Fields = { ProcessId: f('actor.process.pid', 'System.Execution.ProcessID') };

const SYSTEM_VARIANTS: SigmaVariant[] = [
  win(
    201004,
    ['7045'],
    [R.service7045],
    {
      ...LOGGED_BY,
      ServiceName: f('win_service.name'),
      ImagePath: f('win_service.cmd_line'),
      StartType: { path: 'win_service.service_start_type_id', values: START_TEXT },
      // EventData's AccountName: NXLog's flat events also name the logging user AccountName.
      AccountName: f('win_service.service_start_name', 'EventData.AccountName'),
    },
    {
      activity: 1,
      note: 'Windows Service Activity, Create: a service installed (Service Control Manager). `AccountName` is the account the service runs as.',
    },
  ),
  win(
    201004,
    ['7040'],
    [R.service7040],
    {
      ...LOGGED_BY,
      param4: f('win_service.name'),
      param3: { path: 'win_service.service_start_type_id', values: START_TEXT },
    },
    {
      activity: 2,
      note: "Windows Service Activity, Reconfigure: a service's start type changed (`param3`, the new one). `param4` is the service's name; `param1` (its display name) is not written.",
    },
  ),
  win(
    1008,
    ['104'],
    [R.systemLog],
    {
      ...LOGGED_BY,
      Channel: f('log_name', 'UserData.LogFileCleared.Channel'),
      BackupPath: f('file.path'),
    },
    {
      activity: 1,
      note: "Event Log Activity, Clear: an event log cleared. `Channel` is the log that was cleared, as SigmaHQ's rules read it.",
    },
  ),
];

export const WINDOWS_LOGSOURCES: SigmaLogsource[] = [
  {
    product: 'windows',
    service: 'security',
    note: 'The Security log as the built-in windows_security / security mapping writes it: one variant per group of EventIDs. Other EventIDs are Base Events (class 0) with their fields under `unmapped`, and a rule on them is refused.',
    variants: SECURITY_VARIANTS,
  },
  {
    product: 'windows',
    service: 'system',
    note: "The System log's events the built-in windows_security / security mapping maps: services (7045, 7040) and a log cleared (104). Other EventIDs are Base Events, and a rule on them is refused.",
    variants: SYSTEM_VARIANTS,
  },
  {
    category: 'ps_script',
    product: 'windows',
    variants: [
      win(
        1009,
        ['4104'],
        [R.scriptBlock],
        {
          ScriptBlockText: f('script.script_content.value'),
          ScriptBlockId: f('script.uid'),
          Path: f('script.file.path'),
        },
        {
          note: 'Script Activity: PowerShell script block logging (4104). A long script is logged in several blocks, each its own event.',
        },
      ),
    ],
  },
  {
    category: 'ps_module',
    product: 'windows',
    variants: [
      win(
        1009,
        ['4103'],
        [R.module],
        {
          Payload: f('script.script_content.value'),
          ContextInfo: keptWindows('ContextInfo'),
        },
        { note: 'Script Activity: PowerShell module logging (4103). `ContextInfo` stays under `unmapped`.' },
      ),
    ],
  },
  {
    category: 'ps_classic_start',
    product: 'windows',
    variants: [
      win(
        1009,
        ['400'],
        [R.engine],
        {
          // Also written to actor.process.cmd_line, but that object is dropped when the event
          // names no process id (a process needs one in OCSF); the script content always stays.
          HostApplication: f('script.script_content.value', 'ps.HostApplication'),
        },
        {
          note: "Script Activity: the Windows PowerShell engine started (400). Only its `HostApplication` (the host's command line) is written, not the whole `Data` text.",
        },
      ),
    ],
  },
];
