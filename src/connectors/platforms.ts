// The vendor platforms Weir knows. Each has built-in mappings for its streams
// (src/pipeline/normalize/builtin/), so its events can be pushed today by a forwarder with the
// integration's ingestion token; the pull connectors (client, cursors, schedule) register
// their collection settings on the same names.
import { TEXT_STREAMS_PROPERTY, type PlatformDefinition } from './platform-definition.js';
import { connectorFor } from './index.js';

function vendor(
  name: string,
  display: string,
  streams: string[],
  docs: string,
  textStreams?: readonly string[],
): PlatformDefinition {
  const connector = connectorFor(name);
  if (connector) {
    return {
      name,
      display_name: connector.display_name,
      kind: 'pull',
      description:
        `${connector.description} Set config.collect to true (with the credentials) and Weir collects streams ` +
        `${connector.streams.map((s) => `\`${s.name}\``).join(', ')} on a schedule; without it, push them to /api/ingest/{stream} with the integration's ingestion token.`,
      config_schema: connector.config_schema,
    };
  }
  return {
    name,
    display_name: display,
    kind: 'push',
    ...(textStreams ? { text_streams: textStreams } : {}),
    description:
      `${display} events, normalized to OCSF by the built-in mappings of streams ${streams.map((s) => `\`${s}\``).join(', ')}. ` +
      `Push them to /api/ingest/{stream} with the integration's ingestion token. Source format: ${docs}.` +
      (textStreams
        ? ` Streams ${textStreams.map((s) => `\`${s}\``).join(', ')} are text: one event per line, pushed or received by a syslog listener.`
        : ''),
    config_schema: {
      type: 'object',
      properties: {
        description: { type: 'string', maxLength: 1000, description: 'Free text about the source' },
        text_streams: TEXT_STREAMS_PROPERTY,
      },
      additionalProperties: false,
    },
  };
}

export const VENDOR_PLATFORMS: readonly PlatformDefinition[] = [
  vendor('okta', 'Okta', ['system_log'], 'Okta System Log API LogEvent objects'),
  vendor(
    'microsoft_graph',
    'Microsoft Entra ID (Graph)',
    ['signins', 'directory_audits', 'security_alerts'],
    'Microsoft Graph signIn, directoryAudit and security alert_v2 resources',
  ),
  vendor('aws_cloudtrail', 'AWS CloudTrail', ['cloudtrail'], 'CloudTrail event records (the elements of Records[])'),
  vendor('github', 'GitHub', ['audit_log'], 'GitHub organization or enterprise audit log entries'),
  vendor('google_workspace', 'Google Workspace', ['login', 'admin'], 'Admin SDK Reports API activities'),
  vendor('crowdstrike_falcon', 'CrowdStrike Falcon', ['alerts'], 'Falcon Alerts API (v2) alert entities'),
  vendor(
    'windows_security',
    'Windows Security event log',
    ['security'],
    'Windows event XML (<Event>, one per line: list the stream in config.text_streams, or send it to a syslog listener), Winlogbeat or NXLog JSON; the Security, System and PowerShell channels',
  ),
  vendor(
    'sysmon',
    'Sysinternals Sysmon',
    ['operational'],
    'Sysmon event XML (<Event>, one per line: list the stream in config.text_streams, or send it to a syslog listener), Winlogbeat or NXLog JSON',
  ),
  vendor('suricata', 'Suricata', ['eve'], 'EVE JSON records (eve.json), one object per event'),
  vendor(
    'zeek',
    'Zeek',
    ['logs'],
    'Zeek JSON logs (LogAscii::use_json), one record per line, several logs in one stream',
  ),
  vendor('fortinet_fortigate', 'Fortinet FortiGate', ['syslog'], 'FortiOS key=value logs over syslog, one per line', [
    'syslog',
  ]),
  vendor(
    'paloalto_ngfw',
    'Palo Alto Networks NGFW',
    ['syslog'],
    'PAN-OS CSV logs over syslog (TRAFFIC, THREAT, SYSTEM, GLOBALPROTECT), one per line',
    ['syslog'],
  ),
  vendor(
    'cisco_asa',
    'Cisco ASA',
    ['syslog'],
    'ASA syslog messages (%ASA-<level>-<id>: ...), one line each, as the syslog receiver or a forwarder sends them',
    ['syslog'],
  ),
  vendor(
    'aws_vpc_flow',
    'Amazon VPC Flow Logs',
    ['flow_logs'],
    'flow log records, one per line: the default (version 2) space-separated format, or a JSON object keyed by the flow log field names for any version or custom format',
    ['flow_logs'],
  ),
  vendor(
    'aws_route53_resolver',
    'Amazon Route 53 Resolver',
    ['query_logs'],
    'Resolver query log records (JSON), as delivered to CloudWatch Logs, S3 or Firehose',
  ),
  vendor(
    'aws_security_hub',
    'AWS Security Hub',
    ['findings'],
    "findings in the AWS Security Finding Format (ASFF), one per event: the elements of an EventBridge event's detail.findings or of GetFindings' Findings",
  ),
  vendor(
    'microsoft_365',
    'Microsoft 365',
    ['management_activity'],
    'Office 365 Management Activity API audit records (Audit.AzureActiveDirectory, Audit.Exchange, Audit.SharePoint, Audit.General content)',
  ),
  vendor(
    'zscaler_zia',
    'Zscaler Internet Access',
    ['web'],
    'NSS feed web logs, one transaction per line, as JSON or tab-separated key=value with the NSS field names as keys',
    ['web'],
  ),
];
