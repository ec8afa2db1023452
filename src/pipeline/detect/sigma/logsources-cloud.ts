// The Sigma logsources of cloud and SaaS audit logs (docs/sigma.md): Okta, Entra ID sign-ins and
// audit logs, Microsoft 365, CloudTrail, GitHub and Google Workspace, as the built-in mappings
// write them. A Sigma field of these logs is the vendor's own JSON key (case aside: Sigma's
// `ResultType` is the `resultType` of the record), so the table keys are the vendor's keys and
// `raw` is given only where a Sigma name stands for a key of another name.
//
// A logsource's events are in several OCSF classes, and the mapping writes a key at the same
// path in all of them only for its `defaults`: each variant is a group of rules (classes) that
// write every field of its table from the same key to the same path, so that a field of the
// table is present in an event exactly when the vendor sent it. The Base Event variants (class 0)
// keep the event type and the few defaults that class has, for rules on event types the mapping
// does not give a specific class. Fields that stay under `unmapped` (not contracts) are left out.
import {
  f,
  productIs,
  type SigmaField,
  type SigmaLogsource,
  type SigmaSource,
  type SigmaVariant,
} from './logsource-types.js';

const from = (mapping: string, ...rules: string[]): SigmaSource => ({ mapping, rules });
/** A key the mapping writes to an enum through a lookup: the vendor's values and the enum values they become. */
const oneOf = (path: string, values: Record<string, number | false>, raw?: string): SigmaField => ({
  path,
  values,
  ...(raw ? { raw } : {}),
});

// ---------------------------------------------------------------------------------------------
// Okta System Log (okta / system_log)

const OKTA = 'okta.system_log';
const isOkta = productIs('Okta System Log');
/** Every Okta event: the defaults of the mapping (a Detection Finding sets its own status). */
const OKTA_EVENT = {
  eventType: f('metadata.event_code'),
  displayMessage: f('message'),
  'outcome.reason': f('status_detail'),
  uuid: f('metadata.uid'),
  'transaction.id': f('metadata.correlation_uid'),
};
/** SUCCESS and ALLOW become Success, FAILURE and DENY Failure; other outcomes are Other (99) and have no value to compare. */
const OKTA_OUTCOME = { 'outcome.result': oneOf('status_id', { success: 1, allow: 1, failure: 2, deny: 2 }) };

const OKTA_AUDIT: SigmaVariant = {
  classes: [3001, 3002, 3004, 3006, 6003],
  where: [isOkta],
  sources: [
    from(
      OKTA,
      'authentication',
      'oauth_and_api_tokens',
      'api_activity_create',
      'api_activity_delete',
      'api_activity_update',
      'api_activity_read',
      'account_change',
      'group_management',
      'entity_management',
      'entity_management_create',
      'entity_management_delete',
      'entity_management_update',
      'entity_management_deactivate',
      'entity_management_activate',
      'entity_management_unsuspend',
      'entity_management_suspend',
      'entity_management_read',
      'entity_management_other',
    ),
  ],
  note: 'Sign-ins, account, group, entity and API events. The actor is `actor.user` whatever the class.',
  fields: {
    ...OKTA_EVENT,
    ...OKTA_OUTCOME,
    'actor.id': f('actor.user.uid'),
    'actor.alternateId': f('actor.user.name'),
    'actor.displayName': f('actor.user.full_name'),
    'authenticationContext.externalSessionId': f('actor.session.uid'),
    'client.ipAddress': f('src_endpoint.ip'),
    'client.userAgent.rawUserAgent': f('http_request.user_agent'),
    'client.geographicalContext.country': f('src_endpoint.location.country'),
    'client.geographicalContext.city': f('src_endpoint.location.city'),
    'securityContext.asOrg': f('src_endpoint.autonomous_system.name'),
    'securityContext.domain': f('src_endpoint.domain'),
    'debugContext.debugData.requestUri': f('http_request.url.path'),
    'debugContext.debugData.url': f('http_request.url.url_string'),
  },
};

const OKTA_FINDING: SigmaVariant = {
  classes: [2004],
  where: [isOkta],
  sources: [from(OKTA, 'detection_finding')],
  note: "ThreatInsight and risk detections: the actor and the client address are the finding's evidence.",
  fields: {
    ...OKTA_EVENT,
    'actor.id': f('evidences[*].actor.user.uid'),
    'actor.alternateId': f('evidences[*].actor.user.name'),
    'client.ipAddress': f('evidences[*].src_endpoint.ip'),
  },
};

const OKTA_OTHER: SigmaVariant = {
  classes: [0],
  where: [isOkta],
  sources: [from(OKTA, 'other Okta events')],
  note: 'Base Events (system notices, org-wide settings): the event type, message and outcome only.',
  fields: { ...OKTA_EVENT, ...OKTA_OUTCOME },
};

// ---------------------------------------------------------------------------------------------
// Microsoft Entra ID (microsoft_graph / signins, directory_audits). The keys are those of the
// Graph resource; the Azure Monitor record puts the same keys under `properties`, and the
// mappings read both.

const ENTRA = productIs('Microsoft Entra ID');
const SIGNINS = 'microsoft_graph.signins';
const AUDITS = 'microsoft_graph.directory_audits';

const SIGN_IN: SigmaVariant = {
  classes: [3002],
  where: [ENTRA],
  sources: [from(SIGNINS, 'sign_in')],
  note: 'Every sign-in (interactive, non-interactive, service principal, managed identity). `resultType` (Sigma `ResultType`) is the error code as text, `0` a success.',
  fields: {
    resultType: f('status_code'),
    resultDescription: f('status_detail'),
    id: f('metadata.uid'),
    correlationId: f('metadata.correlation_uid'),
    userId: f('user.uid'),
    userPrincipalName: f('user.name'),
    userDisplayName: f('user.full_name'),
    appId: f('actor.app_uid'),
    appDisplayName: f('actor.app_name'),
    resourceDisplayName: f('service.name'),
    ipAddress: f('src_endpoint.ip'),
    autonomousSystemNumber: f('src_endpoint.autonomous_system.number'),
    userAgent: f('http_request.user_agent'),
    'deviceDetail.deviceId': f('src_endpoint.uid'),
    'deviceDetail.displayName': f('src_endpoint.name'),
    'deviceDetail.operatingSystem': f('src_endpoint.os.name'),
    'location.city': f('src_endpoint.location.city'),
    'location.countryOrRegion': f('src_endpoint.location.country'),
    sessionId: f('session.uid'),
    tokenIssuerName: f('session.issuer'),
  },
};

/** Every directory audit record: the activity, the service that logged it and the result. */
const AUDIT_RECORD = {
  operationName: f('metadata.event_code'),
  activityDisplayName: f('metadata.event_code'),
  // SigmaHQ's audit-log rules name the activity `properties.message` ("Add owner to application"), the display name.
  'properties.message': f('metadata.event_code', 'activityDisplayName'),
  loggedByService: f('metadata.log_provider'),
  result: oneOf('status_id', { success: 1, failure: 2 }),
  'properties.result': oneOf('status_id', { success: 1, failure: 2 }),
  resultReason: f('status_detail'),
  id: f('metadata.uid'),
  correlationId: f('metadata.correlation_uid'),
};

const DIRECTORY_CHANGE: SigmaVariant = {
  classes: [3001, 3004, 3005, 3006],
  where: [ENTRA],
  sources: [
    from(
      AUDITS,
      'account_change',
      'group_management',
      'user_access_assign',
      'user_access_revoke',
      'entity_management',
      'entity_management_create',
      'entity_management_delete',
      'entity_management_update',
      'entity_management_enable',
      'entity_management_disable',
      'entity_management_other',
    ),
  ],
  note: "Audit records with a target: user, group, role and other directory changes. `operationName` (the Azure Monitor record's) and `activityDisplayName` are the same activity name.",
  fields: {
    ...AUDIT_RECORD,
    'initiatedBy.user.id': f('actor.user.uid'),
    'initiatedBy.user.userPrincipalName': f('actor.user.name'),
    'initiatedBy.user.displayName': f('actor.user.full_name'),
    'initiatedBy.user.ipAddress': f('src_endpoint.ip'),
  },
};

const DIRECTORY_OTHER: SigmaVariant = {
  classes: [0],
  where: [ENTRA],
  sources: [from(AUDITS, 'other directory audits')],
  note: 'Audit records without a target (Base Events).',
  fields: AUDIT_RECORD,
};

// ---------------------------------------------------------------------------------------------
// Microsoft 365 Management Activity API (microsoft_365 / management_activity)

const M365 = 'microsoft_365.management_activity';
const isM365 = productIs('Microsoft 365');
/** The common schema every record has. */
const M365_RECORD = {
  Operation: f('metadata.event_code'),
  Workload: f('metadata.log_name'),
  Id: f('metadata.uid'),
  OrganizationId: f('metadata.tenant_uid'),
};
/** The account that acted, `DOMAIN\name` or a UPN. */
const M365_ACTOR = { UserId: { path: 'actor.user', compose: 'user' } satisfies SigmaField };
/** Succeeded/Success/True become Success, Failed/Failure/False Failure. */
const RESULT_STATUS = {
  ResultStatus: oneOf('status_id', { succeeded: 1, success: 1, true: 1, failed: 2, failure: 2, false: 2 }),
};
const USER_AGENT = { UserAgent: f('http_request.user_agent') };

/** Variants of the audit records that are not alerts (each group of rules with its own table). */
const M365_AUDIT: SigmaVariant[] = [
  {
    classes: [3002],
    where: [isM365],
    sources: [from(M365, 'sign-ins')],
    note: 'Sign-ins (UserLoggedIn, UserLoginFailed, MailboxLogin...): the status follows the operation, `ResultStatus` is not mapped here.',
    fields: {
      ...M365_RECORD,
      ...M365_ACTOR,
      ...USER_AGENT,
      ApplicationId: f('service.uid'),
      LogonError: f('status_detail'),
    },
  },
  {
    classes: [3001],
    where: [isM365],
    sources: [from(M365, 'Entra ID user changes')],
    note: 'Entra ID user changes: `ObjectId` is the user changed.',
    fields: { ...M365_RECORD, ...M365_ACTOR, ...RESULT_STATUS, ...USER_AGENT, ObjectId: f('user.name') },
  },
  {
    classes: [3004, 3006],
    where: [isM365],
    sources: [
      from(
        M365,
        'Entra ID directory changes',
        'Entra ID group changes',
        'SharePoint group membership',
        'Teams teams and Yammer groups',
      ),
    ],
    note: 'Entra ID directory and group changes, SharePoint, Teams and Yammer group changes.',
    fields: { ...M365_RECORD, ...M365_ACTOR, ...RESULT_STATUS, ...USER_AGENT },
  },
  {
    classes: [6006],
    where: [isM365],
    sources: [from(M365, 'SharePoint and OneDrive files and sharing')],
    note: "SharePoint and OneDrive file and sharing operations: `ObjectId` is the file's URL.",
    fields: {
      ...M365_RECORD,
      ...M365_ACTOR,
      ...RESULT_STATUS,
      ...USER_AGENT,
      ObjectId: f('file.uri'),
      SourceFileExtension: f('file.ext'),
      DestinationFileName: f('file_result.name'),
    },
  },
  {
    classes: [6003],
    where: [isM365],
    sources: [from(M365, 'Exchange admin cmdlets', 'other operations')],
    note: 'Exchange admin cmdlets and the operations of other workloads: `ObjectId` is the object acted on.',
    fields: { ...M365_RECORD, ...M365_ACTOR, ...RESULT_STATUS, ...USER_AGENT, ObjectId: f('resources[*].uid') },
  },
  {
    classes: [6003],
    where: [isM365],
    sources: [from(M365, 'Exchange mailbox items')],
    note: 'Exchange mailbox item operations: the client is `ClientInfoString`.',
    fields: { ...M365_RECORD, ...M365_ACTOR, ...RESULT_STATUS, ClientInfoString: f('http_request.user_agent') },
  },
  {
    classes: [2004],
    where: [isM365],
    sources: [from(M365, 'DLP rule matches')],
    note: 'DLP rule matches.',
    fields: M365_RECORD,
  },
  {
    classes: [0],
    where: [isM365],
    sources: [from(M365, 'other Microsoft 365 records')],
    note: 'Records the mapping gives no specific class (Base Events).',
    fields: { ...M365_RECORD, ...RESULT_STATUS },
  },
];

/** Security & Compliance Center alerts (RecordType 40). */
const M365_ALERT_FIELDS = {
  ...M365_RECORD,
  Name: f('finding_info.title'),
  PolicyId: f('finding_info.analytic.uid'),
  Source: f('finding_info.product.name'),
  Comments: f('finding_info.desc'),
  Severity: oneOf('severity_id', { informational: 1, low: 2, medium: 3, high: 4 }),
  Status: oneOf('status_id', { active: 1, investigating: 2, resolved: 4, dismissed: 5 }),
};
const M365_ALERTS: SigmaVariant = {
  classes: [2004],
  where: [isM365],
  sources: [from(M365, 'Security & Compliance alerts')],
  note: 'Security & Compliance Center alerts (Defender for Office 365, Defender for Cloud Apps policies...).',
  fields: M365_ALERT_FIELDS,
};
/** SigmaHQ's threat_management rules name the alert's workload `eventSource` and its name `eventName`. */
const M365_THREAT: SigmaVariant = {
  ...M365_ALERTS,
  note: "Security & Compliance Center alerts. `eventSource` is the record's `Workload` (SecurityComplianceCenter), `eventName` the alert's `Name`.",
  fields: {
    ...M365_ALERT_FIELDS,
    eventSource: f('metadata.log_name', 'Workload'),
    eventName: f('finding_info.title', 'Name'),
  },
};

// ---------------------------------------------------------------------------------------------
// AWS CloudTrail (aws_cloudtrail / cloudtrail)

const CLOUDTRAIL: SigmaVariant = {
  classes: [3001, 3002, 3006, 6003],
  where: [productIs('CloudTrail')],
  sources: [
    from(
      'aws_cloudtrail.cloudtrail',
      'authentication',
      'console_password_change',
      'iam_user_change',
      'iam_group_change',
      'sts_credentials',
      'api_read',
      'api_delete',
      'api_create',
      'api_update',
      'api_other',
    ),
  ],
  note: 'Every API call and sign-in (Insights events and records without an eventName or eventSource are not in it). `userIdentity.type` compiles for Root and AWSService only: the mapping gives IAMUser and IdentityCenterUser the same OCSF type, and other types Other.',
  fields: {
    eventName: f('metadata.event_code'),
    eventSource: f('api.service.name'),
    eventID: f('metadata.uid'),
    eventVersion: f('metadata.log_version'),
    awsRegion: f('cloud.region'),
    recipientAccountId: f('cloud.account.uid'),
    requestID: f('api.request.uid'),
    errorCode: f('api.response.error'),
    errorMessage: f('api.response.error_message'),
    userAgent: f('http_request.user_agent'),
    vpcEndpointId: f('src_endpoint.uid'),
    'userIdentity.arn': f('actor.user.uid'),
    'userIdentity.principalId': f('actor.user.uid_alt'),
    'userIdentity.accountId': f('actor.user.account.uid'),
    'userIdentity.accessKeyId': f('actor.user.credential_uid'),
    'userIdentity.invokedBy': f('actor.invoked_by'),
    'userIdentity.sessionContext.sessionIssuer.arn': f('actor.session.issuer'),
    'userIdentity.type': oneOf('actor.user.type_id', { root: 2, awsservice: 4 }),
  },
};

// ---------------------------------------------------------------------------------------------
// GitHub audit log (github / audit_log)

const GITHUB = 'github.audit_log';
const isGithub = productIs('GitHub Audit Log');
const GITHUB_ENTRY = { action: f('metadata.event_code'), _document_id: f('metadata.uid') };

const GITHUB_AUDIT: SigmaVariant = {
  classes: [3001, 3002, 3004, 3006, 6003],
  where: [isGithub],
  sources: [
    from(
      GITHUB,
      'authentication',
      'git',
      'tokens_and_oauth',
      'tokens_and_oauth_create',
      'tokens_and_oauth_delete',
      'tokens_and_oauth_update',
      'tokens_and_oauth_other',
      'account_change',
      'group_management',
      'entity_management',
      'entity_management_create',
      'entity_management_delete',
      'entity_management_update',
      'entity_management_move',
      'entity_management_enable',
      'entity_management_disable',
      'entity_management_other',
    ),
  ],
  note: 'Sign-ins, git operations, tokens, member, team, repository and organization changes; `actor` is `actor.user.name`.',
  fields: {
    ...GITHUB_ENTRY,
    actor: f('actor.user.name'),
    actor_id: f('actor.user.uid'),
    actor_ip: f('src_endpoint.ip'),
    user_agent: f('http_request.user_agent'),
    request_id: f('http_request.uid'),
  },
};

const GITHUB_OTHER: SigmaVariant = {
  classes: [0],
  where: [isGithub],
  sources: [from(GITHUB, 'other GitHub audit log entries')],
  note: 'Entries the mapping gives no specific class (Base Events): the action only.',
  fields: GITHUB_ENTRY,
};

// ---------------------------------------------------------------------------------------------
// Google Workspace Reports API (google_workspace / login, admin). The mappings read the
// activity resource of the Reports API; SigmaHQ's rules name the event `eventName` (admin) or
// `protoPayload.metadata.event.eventName` (login) as Cloud Logging exports it: both are the
// activity's event name, `events[0].name`.

function workspace(
  stream: 'login' | 'admin',
  eventName: string,
  classes: number[],
  rules: string[],
  other: string,
): SigmaVariant[] {
  const mapping = `google_workspace.${stream}`;
  const where = [productIs(stream === 'login' ? 'Google Workspace Login Audit' : 'Google Workspace Admin Audit')];
  const activity = {
    [eventName]: f('metadata.event_code', 'events[0].name'),
    'id.applicationName': f('metadata.log_name'),
    'id.customerId': f('metadata.tenant_uid'),
  };
  return [
    {
      classes,
      where,
      sources: [from(mapping, ...rules)],
      note: 'The actor is `actor.user`, the address the request came from `src_endpoint.ip`.',
      fields: {
        ...activity,
        'actor.email': f('actor.user.name'),
        'actor.profileId': f('actor.user.uid'),
        ipAddress: f('src_endpoint.ip'),
      },
    },
    {
      classes: [0],
      where,
      sources: [from(mapping, other)],
      note: 'Activities the mapping gives no specific class (Base Events): the event name only.',
      fields: activity,
    },
  ];
}

export const CLOUD_LOGSOURCES: readonly SigmaLogsource[] = [
  {
    product: 'okta',
    service: 'okta',
    note: 'The built-in okta / system_log mapping.',
    variants: [OKTA_AUDIT, OKTA_FINDING, OKTA_OTHER],
  },
  {
    product: 'azure',
    service: 'signinlogs',
    note: 'The built-in microsoft_graph / signins mapping.',
    variants: [SIGN_IN],
  },
  {
    product: 'azure',
    service: 'auditlogs',
    note: 'The built-in microsoft_graph / directory_audits mapping.',
    variants: [DIRECTORY_CHANGE, DIRECTORY_OTHER],
  },
  {
    product: 'm365',
    service: 'audit',
    note: 'The built-in microsoft_365 / management_activity mapping: every audit record.',
    variants: [...M365_AUDIT, M365_ALERTS],
  },
  {
    product: 'm365',
    service: 'threat_management',
    note: 'The built-in microsoft_365 / management_activity mapping: the Security & Compliance Center alerts.',
    variants: [M365_THREAT],
  },
  {
    product: 'aws',
    service: 'cloudtrail',
    note: 'The built-in aws_cloudtrail / cloudtrail mapping.',
    variants: [CLOUDTRAIL],
  },
  {
    product: 'github',
    service: 'audit',
    note: 'The built-in github / audit_log mapping.',
    variants: [GITHUB_AUDIT, GITHUB_OTHER],
  },
  {
    product: 'gcp',
    service: 'google_workspace.login',
    note: 'The built-in google_workspace / login mapping.',
    variants: workspace(
      'login',
      'protoPayload.metadata.event.eventName',
      [3001, 3002],
      ['account_change', 'authentication'],
      'other login activities',
    ),
  },
  {
    product: 'gcp',
    service: 'google_workspace.admin',
    note: 'The built-in google_workspace / admin mapping.',
    variants: workspace(
      'admin',
      'eventName',
      [3001, 3004, 3006],
      [
        'account_change',
        'role_assignment',
        'group_management',
        'entity_management',
        'entity_management_resume',
        'entity_management_delete',
        'entity_management_create',
        'entity_management_update',
        'entity_management_read',
        'entity_management_move',
        'entity_management_enable',
        'entity_management_disable',
        'entity_management_suspend',
        'entity_management_other',
      ],
      'other admin activities',
    ),
  },
];
