// The OCSF classes Weir maps to: the one list that decides what definitions.json holds.
// To add a class: add it here, run `npm run ocsf:extract`, commit both files
// (docs/decisions/0011-ocsf-definitions.md).

export const SUPPORTED_CLASSES = [
  // Base Event: a well-formed vendor event OCSF has no specific class for (decision 0056).
  { uid: 0, name: 'base_event' },
  { uid: 1001, name: 'file_activity' },
  { uid: 1002, name: 'kernel_extension_activity' },
  { uid: 1005, name: 'module_activity' },
  { uid: 1007, name: 'process_activity' },
  { uid: 1008, name: 'event_log_actvity' },
  { uid: 2002, name: 'vulnerability_finding' },
  { uid: 2003, name: 'compliance_finding' },
  { uid: 2004, name: 'detection_finding' },
  { uid: 3001, name: 'account_change' },
  { uid: 3002, name: 'authentication' },
  { uid: 3003, name: 'authorize_session' },
  { uid: 3004, name: 'entity_management' },
  { uid: 3006, name: 'group_management' },
  { uid: 4001, name: 'network_activity' },
  { uid: 4002, name: 'http_activity' },
  { uid: 4003, name: 'dns_activity' },
  { uid: 4004, name: 'dhcp_activity' },
  { uid: 4005, name: 'rdp_activity' },
  { uid: 4007, name: 'ssh_activity' },
  { uid: 4009, name: 'email_activity' },
  { uid: 4010, name: 'network_file_activity' },
  { uid: 6001, name: 'web_resources_activity' },
  { uid: 6003, name: 'api_activity' },
  { uid: 201001, name: 'registry_key_activity' },
  { uid: 201002, name: 'registry_value_activity' },
  { uid: 6006, name: 'file_hosting' },
  { uid: 1006, name: 'scheduled_job_activity' },
  { uid: 1009, name: 'script_activity' },
  { uid: 2005, name: 'incident_finding' },
  { uid: 3005, name: 'user_access' },
  { uid: 4006, name: 'smb_activity' },
  { uid: 4008, name: 'ftp_activity' },
  { uid: 4013, name: 'ntp_activity' },
  { uid: 4014, name: 'tunnel_activity' },
  { uid: 6002, name: 'application_lifecycle' },
  { uid: 6005, name: 'datastore_activity' },
  { uid: 6007, name: 'scan_activity' },
  { uid: 201003, name: 'windows_resource_activity' },
  { uid: 201004, name: 'windows_service_activity' },
] as const;

export const SUPPORTED_CLASS_UIDS: readonly number[] = SUPPORTED_CLASSES.map((c) => c.uid);
