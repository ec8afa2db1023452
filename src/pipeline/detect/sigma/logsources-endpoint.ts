// The Sigma categories of a Windows endpoint (docs/sigma.md): the events Sysmon logs (and the
// Security log's process creation, 4688), as the built-in sysmon / operational and
// windows_security / security mappings write them. The Sigma field names are Sysmon's
// EventData names, which are also the raw keys the mappings read.
import type { Condition } from '../../conditions/types.js';
import {
  activityIs,
  f,
  keptWindows,
  type SigmaField,
  type SigmaLogsource,
  type SigmaSource,
  type SigmaVariant,
} from './logsource-types.js';

const SYSMON = 'sysmon.operational';
const sysmon = (...rules: string[]): SigmaSource => ({ mapping: SYSMON, rules });
const codes = (...ids: string[]): Condition =>
  ids.length === 1
    ? { field: 'metadata.event_code', op: 'eq', value: ids[0]! }
    : { field: 'metadata.event_code', op: 'in', value: ids };
const isSysmon: Condition = { field: 'metadata.product.name', op: 'eq', value: 'Sysmon' };

const HOST = { Computer: f('device.hostname') };
/** A composite `DOMAIN\user`. */
const user = (path: string, raw?: string): SigmaField => ({ path, compose: 'user', ...(raw ? { raw } : {}) });
const hashes = (path: string): Record<string, SigmaField> => ({
  Hashes: { path, compose: 'hashes' },
  Hash: { path, compose: 'hashes' },
});
/** The process that did it: file, registry, network, DNS, pipe and image-load events. */
const ACTOR = {
  Image: f('actor.process.file.path'),
  ProcessId: f('actor.process.pid'),
  ProcessGuid: f('actor.process.uid'),
  User: user('actor.user'),
};
/** Sysmon writes the level's name, the Security log (4688) its mandatory label's SID; the mappings turn both into integrity_id. */
/** Sysmon's signature of an image or driver: the mapping writes the signature only for a signed file (`Signed: true`), its state from `SignatureStatus`; the signer's name stays under `unmapped`. */
const signature = (file: string): Record<string, SigmaField> => ({
  Signed: { path: `${file}.signature.algorithm_id`, compose: 'flag' },
  SignatureStatus: {
    path: `${file}.signature.state_id`,
    values: { valid: 1, expired: 2, revoked: 3, untrusted: 6, distrusted: 7, bad: 9, broken: 10 },
  },
  Signature: keptWindows('Signature'),
});
const INTEGRITY = {
  untrusted: 1,
  low: 2,
  medium: 3,
  high: 4,
  system: 5,
  protected: 6,
  's-1-16-0': 1,
  's-1-16-4096': 2,
  's-1-16-8192': 3,
  's-1-16-8448': 3,
  's-1-16-12288': 4,
  's-1-16-16384': 5,
  's-1-16-20480': 6,
};

const one = (category: string, v: SigmaVariant, note?: string): SigmaLogsource => ({
  category,
  product: 'windows',
  variants: [v],
  ...(note ? { note } : {}),
});

const PROCESS_CREATION: SigmaVariant = {
  classes: [1007],
  where: [activityIs(1)],
  sources: [sysmon('1 process creation'), { mapping: 'windows_security.security', rules: ['process creation (4688)'] }],
  note: "Process Activity, Launch: Sysmon event 1 and the Security log's 4688. The parent is `process.parent_process`.",
  fields: {
    ...HOST,
    Image: f('process.file.path'),
    OriginalFileName: f('process.file.internal_name'),
    Description: f('process.file.desc'),
    Product: f('process.file.product.name'),
    Company: f('process.file.company_name'),
    FileVersion: f('process.file.version'),
    CommandLine: f('process.cmd_line'),
    ProcessId: f('process.pid'),
    ProcessGuid: f('process.uid'),
    CurrentDirectory: f('process.working_directory'),
    IntegrityLevel: { path: 'process.integrity_id', values: INTEGRITY },
    User: user('process.user'),
    LogonId: f('process.session.uid'),
    LogonGuid: f('process.session.uid_alt'),
    ...hashes('process.file.hashes'),
    md5: { path: 'process.file.hashes', compose: 'hash', raw: 'MD5' },
    sha1: { path: 'process.file.hashes', compose: 'hash', raw: 'SHA1' },
    sha256: { path: 'process.file.hashes', compose: 'hash', raw: 'SHA256' },
    Imphash: { path: 'process.file.hashes', compose: 'hash', raw: 'IMPHASH' },
    ParentImage: f('process.parent_process.file.path'),
    ParentCommandLine: f('process.parent_process.cmd_line'),
    ParentProcessId: f('process.parent_process.pid'),
    ParentProcessGuid: f('process.parent_process.uid'),
    ParentUser: user('process.parent_process.user'),
  },
};

/** File events of Sysmon: the file at `file`, the process at `actor.process`. */
function fileEvent(
  activity: number,
  ids: string[],
  rules: string[],
  note: string,
  extra: Record<string, SigmaField> = {},
): SigmaVariant {
  return {
    classes: [1001],
    where: [activityIs(activity), codes(...ids), isSysmon],
    sources: [sysmon(...rules)],
    note,
    fields: { ...HOST, ...ACTOR, TargetFilename: f('file.path'), ...extra },
  };
}

/** Registry keys (201001) and values (201002) as Sysmon events 12-14 are mapped. */
function registryKey(activities: Record<string, number | false>, rules: string[], ids: string[]): SigmaVariant {
  const acts = Object.values(activities).filter((a): a is number => a !== false);
  return {
    classes: [201001],
    where: [
      codes(...ids),
      isSysmon,
      acts.length === 1 ? activityIs(acts[0]!) : { field: 'activity_id', op: 'in', value: acts },
    ],
    sources: [sysmon(...rules)],
    note: 'Registry Key Activity: `TargetObject` is the key.',
    fields: {
      ...HOST,
      ...ACTOR,
      TargetObject: f('reg_key.path'),
      EventType: { path: 'activity_id', values: activities },
    },
  };
}
function registryValue(
  activities: Record<string, number | false>,
  rules: string[],
  ids: string[],
  extra: Record<string, SigmaField> = {},
): SigmaVariant {
  const acts = [...new Set(Object.values(activities).filter((a): a is number => a !== false))];
  return {
    classes: [201002],
    where: [
      codes(...ids),
      isSysmon,
      acts.length === 1 ? activityIs(acts[0]!) : { field: 'activity_id', op: 'in', value: acts },
    ],
    sources: [sysmon(...rules)],
    note: 'Registry Value Activity: `TargetObject` (the key and the value name) is read over `reg_value.path` and `reg_value.name`.',
    fields: {
      ...HOST,
      ...ACTOR,
      TargetObject: { path: 'reg_value', compose: 'regvalue' },
      EventType: { path: 'activity_id', values: activities },
      ...extra,
    },
  };
}

type Acts = Record<string, number | false>;
const KEY_EVENTS: Acts = {
  createkey: 1,
  deletekey: 4,
  renamekey: 5,
  setvalue: false,
  deletevalue: false,
  createvalue: false,
};
const VALUE_EVENTS: Acts = {
  createkey: false,
  deletekey: false,
  renamekey: false,
  setvalue: 2,
  deletevalue: 4,
  createvalue: 2,
};
const SYSMON_12 = '12 registry key created or deleted (or of unknown type: a relay dropped EventType)';
const SYSMON_12_VALUE = '12 registry value created or deleted';
const DETAILS = { Details: f('reg_value.data') };
/** Sysmon 14: the key's old path is `prev_reg_key`, the new one `reg_key`. */
const RENAME: SigmaVariant = {
  ...registryKey({ ...KEY_EVENTS, createkey: false, deletekey: false }, ['14 registry key or value renamed'], ['14']),
  fields: {
    ...HOST,
    ...ACTOR,
    TargetObject: f('prev_reg_key.path'),
    NewName: f('reg_key.path'),
    EventType: { path: 'activity_id', values: { ...KEY_EVENTS, createkey: false, deletekey: false } },
  },
};

export const ENDPOINT_LOGSOURCES: readonly SigmaLogsource[] = [
  { category: 'process_creation', product: 'windows', variants: [PROCESS_CREATION] },
  one(
    'file_event',
    fileEvent(
      1,
      ['11'],
      ['11 file created, 15 stream created, 29 executable detected'],
      'File System Activity, Create: Sysmon event 11.',
      { CreationUtcTime: f('file.created_time') },
    ),
  ),
  one(
    'create_stream_hash',
    fileEvent(
      1,
      ['15'],
      ['11 file created, 15 stream created, 29 executable detected'],
      'File System Activity, Create: Sysmon event 15 (an alternate data stream).',
      { ...hashes('file.hashes'), Contents: keptWindows('Contents') },
    ),
  ),
  one(
    'file_delete',
    fileEvent(
      4,
      ['23', '26'],
      ['23 file deleted (archived), 26 file delete logged'],
      'File System Activity, Delete: Sysmon events 23 and 26.',
      hashes('file.hashes'),
    ),
  ),
  one(
    'file_change',
    fileEvent(
      6,
      ['2'],
      ['2 file creation time changed'],
      "File System Activity, Set Attributes: Sysmon event 2 (a file's creation time changed).",
    ),
  ),
  one(
    'file_block_executable',
    fileEvent(
      1,
      ['27'],
      ['27 executable blocked, 28 shredding blocked'],
      'File System Activity: Sysmon event 27.',
      hashes('file.hashes'),
    ),
  ),
  one(
    'file_block_shredding',
    fileEvent(
      4,
      ['28'],
      ['27 executable blocked, 28 shredding blocked'],
      'File System Activity: Sysmon event 28.',
      hashes('file.hashes'),
    ),
  ),
  one(
    'file_executable_detected',
    fileEvent(
      1,
      ['29'],
      ['11 file created, 15 stream created, 29 executable detected'],
      'File System Activity, Create: Sysmon event 29.',
      hashes('file.hashes'),
    ),
  ),
  one('raw_access_thread', {
    classes: [1001],
    where: [activityIs(2), codes('9'), isSysmon],
    sources: [sysmon('9 raw disk read')],
    note: 'File System Activity, Read: Sysmon event 9; the device at `file.path`.',
    fields: { ...HOST, ...ACTOR, Device: f('file.path') },
  }),
  one('pipe_created', {
    classes: [1001],
    where: [codes('17', '18'), isSysmon],
    sources: [sysmon('17 pipe created, 18 pipe connected')],
    note: 'File System Activity: Sysmon events 17 (created) and 18 (connected); the pipe at `file.path`.',
    fields: { ...HOST, ...ACTOR, PipeName: f('file.path') },
  }),
  one('network_connection', {
    classes: [4001],
    where: [codes('3'), isSysmon],
    sources: [sysmon('3 network connection')],
    note: 'Network Activity: Sysmon event 3. `Initiated: true` is an outbound connection.',
    fields: {
      ...HOST,
      ...ACTOR,
      SourceIp: f('src_endpoint.ip'),
      SourcePort: f('src_endpoint.port'),
      SourceHostname: f('src_endpoint.hostname'),
      SourcePortName: f('src_endpoint.svc_name'),
      DestinationIp: f('dst_endpoint.ip'),
      DestinationPort: f('dst_endpoint.port'),
      DestinationHostname: f('dst_endpoint.hostname'),
      DestinationPortName: f('dst_endpoint.svc_name'),
      Protocol: f('connection_info.protocol_name'),
      Initiated: { path: 'connection_info.direction_id', values: { true: 2, false: 1 } },
    },
  }),
  one('dns_query', {
    classes: [4003],
    where: [codes('22'), isSysmon],
    sources: [sysmon('22 DNS query')],
    note: "DNS Activity: the queries a host's processes make (Sysmon event 22).",
    fields: { ...HOST, ...ACTOR, QueryName: f('query.hostname'), QueryStatus: f('status_code') },
  }),
  one('image_load', {
    classes: [1005],
    where: [activityIs(1), isSysmon],
    sources: [sysmon('7 image loaded')],
    note: 'Module Activity, Load: Sysmon event 7; the loaded image at `module.file`.',
    fields: {
      ...HOST,
      ...ACTOR,
      ImageLoaded: f('module.file.path'),
      OriginalFileName: f('module.file.internal_name'),
      Description: f('module.file.desc'),
      Product: f('module.file.product.name'),
      Company: f('module.file.company_name'),
      FileVersion: f('module.file.version'),
      ...hashes('module.file.hashes'),
      ...signature('module.file'),
    },
  }),
  one('driver_load', {
    classes: [1002],
    where: [activityIs(1), isSysmon],
    sources: [sysmon('6 driver loaded')],
    note: 'Kernel Extension Activity, Load: Sysmon event 6; the driver at `driver.file`.',
    fields: {
      ...HOST,
      ImageLoaded: f('driver.file.path'),
      ...hashes('driver.file.hashes'),
      ...signature('driver.file'),
    },
  }),
  ...(['process_access', 'create_remote_thread'] as const).map((category) =>
    one(category, {
      classes: [1007],
      where: [activityIs(category === 'process_access' ? 3 : 4), isSysmon],
      sources: [sysmon(category === 'process_access' ? '10 process accessed' : '8 CreateRemoteThread')],
      note: `Process Activity, ${category === 'process_access' ? 'Open: Sysmon event 10' : 'Inject: Sysmon event 8'}; the source process is \`actor.process\`, the target \`process\`.`,
      fields: {
        ...HOST,
        SourceImage: f('actor.process.file.path'),
        SourceProcessId: f('actor.process.pid'),
        SourceProcessGuid: f('actor.process.uid'),
        SourceUser: user('actor.user'),
        TargetImage: f('process.file.path'),
        TargetProcessId: f('process.pid'),
        TargetProcessGuid: f('process.uid'),
        TargetUser: user('process.user'),
        ...(category === 'process_access'
          ? {
              GrantedAccess: { path: 'actual_permissions', compose: 'hex' as const },
              CallTrace: keptWindows('CallTrace'),
            }
          : {
              StartAddress: keptWindows('StartAddress'),
              StartModule: keptWindows('StartModule'),
              StartFunction: keptWindows('StartFunction'),
            }),
      },
    }),
  ),
  {
    category: 'registry_add',
    product: 'windows',
    variants: [registryKey({ ...KEY_EVENTS, deletekey: false, renamekey: false }, [SYSMON_12], ['12'])],
  },
  {
    category: 'registry_delete',
    product: 'windows',
    variants: [
      registryKey({ ...KEY_EVENTS, createkey: false, renamekey: false }, [SYSMON_12], ['12']),
      registryValue({ ...VALUE_EVENTS, setvalue: false, createvalue: false }, [SYSMON_12_VALUE], ['12']),
    ],
  },
  {
    category: 'registry_set',
    product: 'windows',
    variants: [
      registryValue(
        { ...VALUE_EVENTS, deletevalue: false, createvalue: false },
        ['13 registry value set'],
        ['13'],
        DETAILS,
      ),
    ],
  },
  {
    category: 'registry_rename',
    product: 'windows',
    variants: [RENAME],
  },
  {
    category: 'registry_event',
    product: 'windows',
    note: 'Sysmon events 12, 13 and 14: keys and values.',
    variants: [
      registryKey({ ...KEY_EVENTS, renamekey: false }, [SYSMON_12], ['12']),
      RENAME,
      registryValue(VALUE_EVENTS, [SYSMON_12_VALUE, '13 registry value set'], ['12', '13'], DETAILS),
    ],
  },
];
