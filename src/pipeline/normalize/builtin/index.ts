// The mappings Weir ships for the vendor sources it knows (src/connectors/platforms.ts). Each
// document is plain JSON, the same language users write (docs/mappings.md), so a built-in
// mapping can be read, copied and overridden like any other; docs/builtin-mappings.md says
// which vendor documentation each one follows and why fields go where they go.
import awsCloudtrail from './aws_cloudtrail.cloudtrail.json' with { type: 'json' };
import awsRoute53ResolverQueryLogs from './aws_route53_resolver.query_logs.json' with { type: 'json' };
import awsSecurityHubFindings from './aws_security_hub.findings.json' with { type: 'json' };
import awsVpcFlowLogs from './aws_vpc_flow.flow_logs.json' with { type: 'json' };
import ciscoAsaSyslog from './cisco_asa.syslog.json' with { type: 'json' };
import crowdstrikeAlerts from './crowdstrike_falcon.alerts.json' with { type: 'json' };
import githubAuditLog from './github.audit_log.json' with { type: 'json' };
import googleAdmin from './google_workspace.admin.json' with { type: 'json' };
import googleLogin from './google_workspace.login.json' with { type: 'json' };
import m365ManagementActivity from './microsoft_365.management_activity.json' with { type: 'json' };
import graphDirectoryAudits from './microsoft_graph.directory_audits.json' with { type: 'json' };
import graphSecurityAlerts from './microsoft_graph.security_alerts.json' with { type: 'json' };
import graphSignins from './microsoft_graph.signins.json' with { type: 'json' };
import oktaSystemLog from './okta.system_log.json' with { type: 'json' };
import windowsSecurity from './windows_security.security.json' with { type: 'json' };
import sysmonOperational from './sysmon.operational.json' with { type: 'json' };
import suricataEve from './suricata.eve.json' with { type: 'json' };
import zeekLogs from './zeek.logs.json' with { type: 'json' };
import fortigateSyslog from './fortinet_fortigate.syslog.json' with { type: 'json' };
import paloaltoSyslog from './paloalto_ngfw.syslog.json' with { type: 'json' };
import zscalerZiaWeb from './zscaler_zia.web.json' with { type: 'json' };
import type { MappingDocument } from '../types.js';

export interface BuiltinMapping {
  readonly platform: string;
  readonly stream: string;
  /** Name of the mapping definition created for it. */
  readonly name: string;
  readonly description: string;
  readonly document: MappingDocument;
}

// JSON imports are typed with widened literals (a cast name is `string`, not CastName), so the
// documents are asserted here; builtin.test.ts compiles every one against the catalog.
const doc = (json: unknown): MappingDocument => json as MappingDocument;

function builtin(platform: string, stream: string, name: string, document: MappingDocument): BuiltinMapping {
  return { platform, stream, name, description: document.description ?? name, document };
}

export const BUILTIN_MAPPINGS: readonly BuiltinMapping[] = Object.freeze([
  builtin('okta', 'system_log', 'Okta System Log', doc(oktaSystemLog)),
  builtin('microsoft_graph', 'signins', 'Microsoft Entra ID sign-ins', doc(graphSignins)),
  builtin('microsoft_graph', 'directory_audits', 'Microsoft Entra ID directory audits', doc(graphDirectoryAudits)),
  builtin(
    'microsoft_graph',
    'security_alerts',
    'Microsoft Defender XDR alerts (Graph security alerts_v2)',
    doc(graphSecurityAlerts),
  ),
  builtin('aws_cloudtrail', 'cloudtrail', 'AWS CloudTrail', doc(awsCloudtrail)),
  builtin('github', 'audit_log', 'GitHub audit log', doc(githubAuditLog)),
  builtin('google_workspace', 'login', 'Google Workspace login audit', doc(googleLogin)),
  builtin('google_workspace', 'admin', 'Google Workspace admin audit', doc(googleAdmin)),
  builtin('crowdstrike_falcon', 'alerts', 'CrowdStrike Falcon alerts', doc(crowdstrikeAlerts)),
  builtin('windows_security', 'security', 'Windows Security event log', doc(windowsSecurity)),
  builtin('sysmon', 'operational', 'Sysmon (Microsoft-Windows-Sysmon/Operational)', doc(sysmonOperational)),
  builtin('suricata', 'eve', 'Suricata EVE JSON', doc(suricataEve)),
  builtin('zeek', 'logs', 'Zeek logs (JSON)', doc(zeekLogs)),
  builtin('fortinet_fortigate', 'syslog', 'FortiGate logs (syslog key=value)', doc(fortigateSyslog)),
  builtin('paloalto_ngfw', 'syslog', 'Palo Alto Networks NGFW logs (syslog CSV)', doc(paloaltoSyslog)),
  builtin('cisco_asa', 'syslog', 'Cisco ASA syslog', doc(ciscoAsaSyslog)),
  builtin('aws_vpc_flow', 'flow_logs', 'Amazon VPC Flow Logs', doc(awsVpcFlowLogs)),
  builtin(
    'aws_route53_resolver',
    'query_logs',
    'Amazon Route 53 Resolver query logs',
    doc(awsRoute53ResolverQueryLogs),
  ),
  builtin('aws_security_hub', 'findings', 'AWS Security Hub findings (ASFF)', doc(awsSecurityHubFindings)),
  builtin(
    'microsoft_365',
    'management_activity',
    'Microsoft 365 Management Activity audit',
    doc(m365ManagementActivity),
  ),
  builtin('zscaler_zia', 'web', 'Zscaler Internet Access web logs (NSS)', doc(zscalerZiaWeb)),
]);

/** The built-in mapping of a platform's stream, if Weir ships one. */
export function builtinMapping(platform: string, stream: string): BuiltinMapping | undefined {
  return BUILTIN_MAPPINGS.find((m) => m.platform === platform && m.stream === stream);
}
