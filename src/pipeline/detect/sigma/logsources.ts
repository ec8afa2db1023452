// The published field mapping of Sigma logsources to OCSF (docs/sigma.md has the same tables):
// which OCSF class (and activity, and vendor product) a logsource's events are in Weir, and
// which OCSF path each Sigma field name reads there. The paths are those Weir's built-in
// mappings write (docs/builtin-mappings.md) or, for classes no built-in mapping produces
// (process, file, network, DNS, HTTP), the OCSF attribute that holds the same thing. Every
// path is checked against the compiled OCSF catalog by the tests. A field not listed here is
// refused, never guessed.
import type { Condition } from '../../conditions/types.js';

export interface SigmaField {
  /** The OCSF path the field reads. */
  path: string;
  /** Sigma values to OCSF enum values (keys lower-case): only these values, compared for equality, compile. */
  values?: Record<string, number>;
  /** The only values events of this logsource have in Weir, and why: any other value is refused (a rule that could never match). */
  only?: { values: string[]; why: string };
}

export interface SigmaLogsource {
  /** category / product / service as Sigma writes them; absent keys match anything the rule says. */
  category?: string;
  product?: string;
  service?: string;
  /** What Weir's events of this logsource are: the class(es) and further constraints (activity, vendor). */
  classes: number[];
  where?: Condition[];
  fields: Record<string, SigmaField>;
  /** For the user guide. */
  note?: string;
}

const f = (path: string): SigmaField => ({ path });
const vendor = (name: string): Condition => ({ field: 'metadata.product.vendor_name', op: 'eq', value: name });
const product = (name: string): Condition => ({ field: 'metadata.product.name', op: 'eq', value: name });

/** Fields every host logsource (Sysmon-style) shares: the machine. */
const HOST = { Computer: f('device.hostname'), ComputerName: f('device.hostname') };
/** The process that did it (file, network and DNS events of an endpoint). */
const ACTOR_PROCESS = {
  Image: f('actor.process.file.path'),
  ProcessId: f('actor.process.pid'),
  ProcessGuid: f('actor.process.uid'),
  User: f('actor.user.name'),
};
const OUTCOME = { success: 1, failure: 2 };
/** The Security log's sign-in events (logon, logoff, explicit credentials, Kerberos, NTLM). */
const WINDOWS_SIGN_IN = ['4624', '4625', '4634', '4647', '4648', '4768', '4769', '4771', '4776'];

export const LOGSOURCES: readonly SigmaLogsource[] = [
  {
    category: 'process_creation',
    classes: [1007],
    where: [{ field: 'activity_id', op: 'eq', value: 1 }],
    note: 'Process Activity, Launch. The parent is `process.parent_process`.',
    fields: {
      ...HOST,
      Image: f('process.file.path'),
      CommandLine: f('process.cmd_line'),
      ProcessId: f('process.pid'),
      ProcessGuid: f('process.uid'),
      CurrentDirectory: f('process.working_directory'),
      IntegrityLevel: f('process.integrity'),
      User: f('process.user.name'),
      ParentImage: f('process.parent_process.file.path'),
      ParentCommandLine: f('process.parent_process.cmd_line'),
      ParentProcessId: f('process.parent_process.pid'),
      ParentProcessGuid: f('process.parent_process.uid'),
      ParentUser: f('process.parent_process.user.name'),
    },
  },
  {
    category: 'file_event',
    classes: [1001],
    where: [{ field: 'activity_id', op: 'eq', value: 1 }],
    note: 'File System Activity, Create.',
    fields: { ...HOST, ...ACTOR_PROCESS, TargetFilename: f('file.path') },
  },
  {
    category: 'file_delete',
    classes: [1001],
    where: [{ field: 'activity_id', op: 'eq', value: 4 }],
    note: 'File System Activity, Delete.',
    fields: { ...HOST, ...ACTOR_PROCESS, TargetFilename: f('file.path') },
  },
  {
    category: 'file_rename',
    classes: [1001],
    where: [{ field: 'activity_id', op: 'eq', value: 5 }],
    note: 'File System Activity, Rename.',
    fields: { ...HOST, ...ACTOR_PROCESS, SourceFilename: f('file.path'), TargetFilename: f('file_result.path') },
  },
  {
    category: 'network_connection',
    classes: [4001],
    note: 'Network Activity (every activity).',
    fields: {
      ...HOST,
      ...ACTOR_PROCESS,
      SourceIp: f('src_endpoint.ip'),
      SourcePort: f('src_endpoint.port'),
      SourceHostname: f('src_endpoint.hostname'),
      DestinationIp: f('dst_endpoint.ip'),
      DestinationPort: f('dst_endpoint.port'),
      DestinationHostname: f('dst_endpoint.hostname'),
      Protocol: f('connection_info.protocol_name'),
    },
  },
  {
    category: 'dns',
    classes: [4003],
    note: 'DNS Activity: DNS server and resolver logs.',
    fields: {
      query: f('query.hostname'),
      record_type: f('query.type'),
      answer: f('answers[*].rdata'),
      response_code: f('rcode'),
      src_ip: f('src_endpoint.ip'),
      dst_ip: f('dst_endpoint.ip'),
    },
  },
  {
    category: 'dns_query',
    classes: [4003],
    note: 'DNS Activity: the queries a host\'s processes make (Sysmon event 22).',
    fields: { ...HOST, ...ACTOR_PROCESS, QueryName: f('query.hostname') },
  },
  ...(['webserver', 'proxy'] as const).map(
    (category): SigmaLogsource => ({
      category,
      classes: [4002],
      note: 'HTTP Activity.',
      fields: {
        'c-ip': f('src_endpoint.ip'),
        'c-uri': f('http_request.url.url_string'),
        'c-uri-stem': f('http_request.url.path'),
        'c-uri-query': f('http_request.url.query_string'),
        'c-useragent': f('http_request.user_agent'),
        'cs-method': f('http_request.http_method'),
        'cs-host': f('http_request.url.hostname'),
        'cs-referrer': f('http_request.referrer'),
        'cs-version': f('http_request.version'),
        'sc-status': f('http_response.code'),
        'r-dns': f('dst_endpoint.hostname'),
        dst_ip: f('dst_endpoint.ip'),
        src_ip: f('src_endpoint.ip'),
      },
    }),
  ),
  {
    product: 'windows',
    service: 'security',
    classes: [3002],
    note: 'Authentication only: the sign-in events (EventID 4624, 4625, 4634, 4647, 4648, 4768, 4769, 4771, 4776; other ids are refused) as a mapping puts them in class 3002, with the id in `metadata.event_code`.',
    fields: {
      ...HOST,
      EventID: { path: 'metadata.event_code', only: { values: WINDOWS_SIGN_IN, why: 'Weir maps only the Security log\'s sign-in events to Authentication 3002; write rules for other events with the logsource of their class (process_creation, ...)' } },
      TargetUserName: f('user.name'),
      TargetDomainName: f('user.domain'),
      TargetUserSid: f('user.uid'),
      SubjectUserName: f('actor.user.name'),
      SubjectDomainName: f('actor.user.domain'),
      SubjectUserSid: f('actor.user.uid'),
      IpAddress: f('src_endpoint.ip'),
      IpPort: f('src_endpoint.port'),
      WorkstationName: f('src_endpoint.hostname'),
      LogonType: f('logon_type_id'),
      AuthenticationPackageName: f('auth_protocol'),
      LogonProcessName: f('logon_process.name'),
      Status: f('status_code'),
      SubStatus: f('status_detail'),
    },
  },
  {
    product: 'okta',
    service: 'okta',
    classes: [3001, 3002, 3004, 3006, 6003],
    where: [vendor('Okta')],
    note: 'The built-in okta / system_log mapping.',
    fields: {
      eventtype: f('metadata.event_code'),
      displaymessage: f('message'),
      'actor.alternateid': f('actor.user.email_addr'),
      'actor.displayname': f('actor.user.full_name'),
      'client.ipaddress': f('src_endpoint.ip'),
      'client.useragent.rawuserstring': f('http_request.user_agent'),
      'outcome.result': { path: 'status_id', values: OUTCOME },
      'outcome.reason': f('status_detail'),
    },
  },
  {
    product: 'azure',
    service: 'signinlogs',
    classes: [3002],
    where: [vendor('Microsoft'), product('Microsoft Entra ID')],
    note: 'The built-in microsoft_graph / signins mapping.',
    fields: {
      ResultType: f('status_code'),
      ResultDescription: f('status_detail'),
      UserPrincipalName: f('user.name'),
      AppDisplayName: f('service.name'),
      ResourceDisplayName: f('dst_endpoint.svc_name'),
      IPAddress: f('src_endpoint.ip'),
    },
  },
  {
    product: 'aws',
    service: 'cloudtrail',
    classes: [3001, 3002, 3006, 6003],
    where: [vendor('AWS')],
    note: 'The built-in aws_cloudtrail / cloudtrail mapping.',
    fields: {
      eventName: f('metadata.event_code'),
      eventSource: f('api.service.name'),
      sourceIPAddress: f('src_endpoint.ip'),
      userAgent: f('http_request.user_agent'),
      awsRegion: f('cloud.region'),
      errorCode: f('api.response.error'),
      errorMessage: f('api.response.error_message'),
    },
  },
  {
    product: 'github',
    service: 'audit',
    classes: [3001, 3002, 3004, 3006],
    where: [vendor('GitHub')],
    note: 'The built-in github / audit_log mapping.',
    fields: { action: f('metadata.event_code'), actor: f('actor.user.name'), user: f('user.name'), repo: f('resource.name') },
  },
  ...(['google_workspace.login', 'google_workspace.admin'] as const).map(
    (service): SigmaLogsource => ({
      product: 'gcp',
      service,
      classes: service.endsWith('login') ? [3001, 3002] : [3001, 3004, 3006],
      where: [vendor('Google')],
      note: `The built-in google_workspace / ${service.slice('google_workspace.'.length)} mapping.`,
      fields: { eventName: f('metadata.event_code'), 'actor.email': f('actor.user.email_addr') },
    }),
  ),
];

/** The logsource entry of a rule's logsource: every key the entry names must match, and the rule may name no key the entry lacks. */
export function findLogsource(ls: { category?: string; product?: string; service?: string }): SigmaLogsource | undefined {
  const keys = ['category', 'product', 'service'] as const;
  // The most specific entry first: an entry naming category + product beats one naming the category only.
  const candidates = LOGSOURCES.filter((e) => keys.every((k) => e[k] === undefined || e[k] === ls[k]?.toLowerCase()));
  const fits = candidates.filter((e) => keys.every((k) => ls[k] === undefined || e[k] !== undefined || (k !== 'category' && e.category !== undefined)));
  return fits.sort((a, b) => keys.filter((k) => b[k] !== undefined).length - keys.filter((k) => a[k] !== undefined).length)[0];
}
