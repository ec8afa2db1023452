// The vendor's raw form of a generated Sigma event (generate.ts), for the end-to-end test
// (test/sigma/semantic.test.ts): the logsource variant the event belongs to, the built-in
// mapping (source) that produces it, and the raw event that mapping reads, each Sigma field's
// value under the vendor's key the logsource table gives (`raw ?? field name`, a path in the
// mapping's own grammar: `a.b` is nested JSON, `["id.orig_h"]` a key with a dot).
//
// The raw event is the Sigma values under their keys, a skeleton of what every record of the
// source has (time, channel, provider, the process ids and the primary path of a Sysmon event,
// with neutral values), whatever the chosen mapping rule's `when` needs to pick the record (the
// EventID, Okta's eventType...), and the keys the mapping needs to keep an OCSF object the
// event's fields land in (a 7045 service has a name and an image path). What the skeleton and
// the `when` add is reported back in Sigma terms (`effective`), so that the reference matcher
// decides again on what the mapping really sees; when a skeleton value changes the verdict, a
// smaller skeleton is tried. Text sources (FortiGate key=value, PAN-OS CSV) are built as the
// fields their parse steps produce, then written as the line (serialize).
import { ocsfCatalog } from '../../../src/ocsf/index.js';
import type {
  SigmaField,
  SigmaLogsource,
  SigmaSource,
  SigmaVariant,
} from '../../../src/pipeline/detect/sigma/logsource-types.js';
import { compileMapping } from '../../../src/pipeline/normalize/compile.js';
import { compileMappingCondition, type Predicate } from '../../../src/pipeline/normalize/conditions.js';
import { parsePath, type PathSegment } from '../../../src/pipeline/normalize/paths.js';
import type { Assignment, CompiledMapping, MapResult, MappingDocument } from '../../../src/pipeline/normalize/types.js';
import type { SigmaEvent } from './matcher.js';
import { builtin, writtenPaths } from './written.js';

export type Raw = Record<string, unknown>;

const lower = (s: string) => s.toLowerCase();
const isEventId = (f: string) => lower(f) === 'eventid';

/** A variant's table entry for a Sigma field name, ignoring case (as the compiler reads names). */
export function entryOf(v: SigmaVariant, name: string): [string, SigmaField] | undefined {
  if (v.fields[name]) return [name, v.fields[name]];
  const hits = Object.keys(v.fields).filter((k) => lower(k) === lower(name));
  return hits.length === 1 ? [hits[0]!, v.fields[hits[0]!]!] : undefined;
}

/** Can events of the variant have this field (EventID: when the variant is keyed by event ids)? */
export function variantHas(v: SigmaVariant, name: string): boolean {
  return isEventId(name) ? v.eventIds !== undefined : entryOf(v, name) !== undefined;
}

/**
 * The variants an event can be, best first: those whose `eventIds` hold the event's EventID,
 * then by how many of the event's fields the variant's table has (ties in table order).
 */
export function rankVariants(ls: SigmaLogsource, event: SigmaEvent): SigmaVariant[] {
  const eventId = Object.entries(event).find(([k]) => isEventId(k))?.[1];
  const fields = Object.keys(event).filter((k) => !isEventId(k));
  const score = (v: SigmaVariant) =>
    (eventId !== undefined && v.eventIds?.includes(String(eventId)) ? 1000 : 0) +
    fields.filter((f) => entryOf(v, f)).length;
  return ls.variants
    .map((v, i) => ({ v, i, s: score(v) }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.v);
}

// ---------------------------------------------------------------------------------------------
// Mappings, compiled once

interface MappingInfo {
  compiled: CompiledMapping;
  doc: MappingDocument;
  /** Each rule's name and compiled `when` (undefined: matches every event), in order. */
  rules: { name: string; when: unknown; test: Predicate | undefined }[];
}

const mappings = new Map<string, MappingInfo>();

export function mappingOf(name: string): MappingInfo {
  let m = mappings.get(name);
  if (!m) {
    const b = builtin(name);
    const compiled = compileMapping(b.document, ocsfCatalog());
    const rules = b.document.rules.map((r) => ({
      name: r.name,
      when: r.when,
      test: r.when === undefined ? undefined : predicate(r.when),
    }));
    m = { compiled, doc: b.document, rules };
    mappings.set(name, m);
  }
  return m;
}

const eachCache = new Map<string, Set<string>>();
/** The raw keys a mapping reads as lists (`each`). */
function eachKeys(mapping: string): Set<string> {
  let out = eachCache.get(mapping);
  if (!out) {
    out = new Set();
    const walk = (xs: readonly { each?: string; set?: unknown }[] | undefined) => {
      for (const a of xs ?? []) {
        if (typeof a.each === 'string') out!.add(a.each);
        if (Array.isArray(a.set)) walk(a.set as { each?: string; set?: unknown }[]);
      }
    };
    const doc = builtin(mapping).document;
    walk(doc.defaults);
    for (const r of doc.rules) walk(r.set);
    eachCache.set(mapping, out);
  }
  return out;
}

const predicates = new WeakMap<object, Predicate>();
/** A mapping condition compiled once (by identity: the conditions are the mapping documents' own objects). */
function predicate(cond: unknown): Predicate {
  if (cond === null || typeof cond !== 'object') return () => false;
  let p = predicates.get(cond);
  if (!p) {
    const problems: { at: string; message: string }[] = [];
    p = compileMappingCondition(cond, { problems }, '') ?? (() => false);
    predicates.set(cond, p);
  }
  return p;
}

/** The name of the mapping rule that takes the raw event (the first whose `when` holds). */
export function ruleTaking(mapping: string, raw: Raw): string | undefined {
  return mappingOf(mapping).rules.find((r) => !r.test || r.test(raw))?.name;
}

// ---------------------------------------------------------------------------------------------
// Raw paths

const segmentsCache = new Map<string, PathSegment[] | undefined>();
function segments(path: string): PathSegment[] | undefined {
  if (!segmentsCache.has(path)) {
    let s: PathSegment[] | undefined;
    try {
      // `[*]` (every element) is written and read as the first element.
      s = parsePath(path).map((x): PathSegment => (x.t === 'all' ? { t: 'idx', i: 0 } : x));
      if (s.some((x) => x.t !== 'key' && x.t !== 'idx')) s = undefined;
    } catch {
      s = undefined;
    }
    segmentsCache.set(path, s);
  }
  return segmentsCache.get(path);
}

function getAt(raw: unknown, path: string): unknown {
  const segs = segments(path);
  if (!segs) return undefined;
  let v = raw;
  for (const s of segs) {
    if (v === null || typeof v !== 'object') return undefined;
    v =
      s.t === 'key'
        ? (v as Raw)[s.k]
        : (v as unknown[])[s.t === 'idx' && s.i < 0 ? (v as unknown[]).length + s.i : (s as { i: number }).i];
  }
  return v;
}

/** Sets a value at a path (keys and indexes), creating objects and arrays on the way; false when the path has other steps. */
function setAt(raw: Raw, path: string, value: unknown): boolean {
  const segs = segments(path);
  if (!segs || !segs.length) return false;
  let o: Raw | unknown[] = raw;
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    const last = i === segs.length - 1;
    const k: string | number = s.t === 'key' ? s.k : (s as { i: number }).i;
    if (typeof k === 'number' && (!Array.isArray(o) || k < 0)) return false;
    if (typeof k === 'string' && Array.isArray(o)) return false;
    if (last) {
      (o as Record<string | number, unknown>)[k] = value;
      return true;
    }
    let next = (o as Record<string | number, unknown>)[k];
    if (next === undefined || next === null || typeof next !== 'object') {
      next = segs[i + 1]!.t === 'idx' ? [] : {};
      (o as Record<string | number, unknown>)[k] = next;
    }
    o = next as Raw | unknown[];
  }
  return false;
}

function deleteAt(raw: Raw, path: string): void {
  const segs = segments(path);
  if (!segs) return;
  let o: unknown = raw;
  for (let i = 0; i < segs.length - 1; i++) {
    const s = segs[i]!;
    o = s.t === 'key' ? (o as Raw)?.[s.k] : (o as unknown[])?.[(s as { i: number }).i];
    if (o === null || typeof o !== 'object') return;
  }
  const s = segs[segs.length - 1]!;
  if (s.t === 'key') delete (o as Raw)[s.k];
}

/** A deep copy of plain JSON data (raw events hold nothing else). */
function clone<T>(x: T): T {
  if (Array.isArray(x)) return x.map(clone) as T;
  if (x !== null && typeof x === 'object') {
    const out: Raw = {};
    for (const [k, v] of Object.entries(x)) out[k] = clone(v);
    return out as T;
  }
  return x;
}
const present = (v: unknown) => v !== undefined && v !== null;

/** Copies into `into` what `from` has and `into` lacks, object by object (the event's values win). */
function fillMissing(into: Raw, from: Raw): void {
  for (const [k, x] of Object.entries(from)) {
    const cur = into[k];
    if (cur === undefined) into[k] = x;
    else if (
      cur !== null &&
      typeof cur === 'object' &&
      !Array.isArray(cur) &&
      x !== null &&
      typeof x === 'object' &&
      !Array.isArray(x)
    )
      fillMissing(cur as Raw, x as Raw);
  }
}

// ---------------------------------------------------------------------------------------------
// Making a mapping rule's `when` hold

type Leaf = { field: string; op: string; value?: unknown };
const OLD_OPS = [
  'eq',
  'ne',
  'in',
  'not_in',
  'prefix',
  'suffix',
  'contains',
  'matches',
  'exists',
  'gt',
  'gte',
  'lt',
  'lte',
];

function leafOf(c: Raw): Leaf | undefined {
  if (typeof c.field === 'string' && typeof c.op === 'string') return { field: c.field, op: c.op, value: c.value };
  if (typeof c.path === 'string') {
    const op = OLD_OPS.find((o) => o in c);
    if (!op) return undefined;
    if (op === 'matches') return { field: c.path, op: 'regex', value: c[op] };
    if (op === 'exists') return { field: c.path, op: c[op] ? 'exists' : 'not_exists' };
    return { field: c.path, op, value: c[op] };
  }
  return undefined;
}

function fieldsOf(c: unknown, out: string[] = []): string[] {
  if (c === null || typeof c !== 'object') return out;
  const r = c as Raw;
  const leaf = leafOf(r);
  if (leaf) out.push(leaf.field);
  for (const k of ['all', 'any']) if (Array.isArray(r[k])) for (const x of r[k] as unknown[]) fieldsOf(x, out);
  if (r.not !== undefined) fieldsOf(r.not, out);
  return out;
}

/** How much an alternative of an `any` is preferred: fields already set, then flat keys (NXLog / plain JSON) over nested ones. */
function preference(c: unknown, raw: Raw): number {
  const fs = fieldsOf(c);
  const set = fs.filter((f) => present(getAt(raw, f))).length;
  const nested = fs.filter((f) => /[.[]/.test(f)).length;
  return set * 100 - nested;
}

/**
 * Adds to `raw` what makes the condition hold, never changing a key already set; true when it
 * holds. `hint` proposes a key's value (the event's own value of the same OCSF attribute: Entra
 * ID's activityDisplayName beside the operationName the rule names), tried first.
 */
function satisfy(c: unknown, raw: Raw, hint: (key: string) => unknown = () => undefined): boolean {
  if (predicate(c)(raw)) return true;
  if (c === null || typeof c !== 'object') return false;
  const r = c as Raw;
  if (Array.isArray(r.all)) {
    for (const x of r.all as unknown[]) if (!satisfy(x, raw, hint)) return false;
    return predicate(c)(raw);
  }
  if (Array.isArray(r.any)) {
    const alts = (r.any as unknown[])
      .map((x, i) => ({ x, i, p: preference(x, raw) }))
      .sort((a, b) => b.p - a.p || a.i - b.i);
    for (const { x } of alts) {
      const trial = clone(raw);
      if (satisfy(x, trial, hint)) {
        for (const k of Object.keys(raw)) delete raw[k];
        Object.assign(raw, trial);
        return true;
      }
    }
    return false;
  }
  if (r.not !== undefined) return false;
  const leaf = leafOf(r);
  if (!leaf || present(getAt(raw, leaf.field))) return false;
  const candidates: unknown[] = [];
  const hinted = hint(leaf.field);
  if (hinted !== undefined) candidates.push(hinted);
  switch (leaf.op) {
    case 'eq':
    case 'prefix':
    case 'suffix':
    case 'contains':
      candidates.push(leaf.value);
      break;
    case 'in':
      candidates.push((leaf.value as unknown[])[0]);
      break;
    case 'exists':
      // A number: the keys a rule only needs to exist are ids and codes (Zeek's trans_id, rcode).
      candidates.push(1);
      break;
  }
  for (const v of candidates) {
    const trial = clone(raw);
    if (setAt(trial, leaf.field, v) && predicate(c)(trial)) {
      for (const k of Object.keys(raw)) delete raw[k];
      Object.assign(raw, trial);
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Skeletons

const TIME = '2024-03-05T14:51:07.331Z';
const WIN_TIME = '2024-03-05 14:51:07';

/** The Windows log and provider of a Security / System / PowerShell event id (NXLog's Channel and SourceName). */
function windowsChannel(id: string): { Channel: string; SourceName: string } {
  if (['104'].includes(id)) return { Channel: 'System', SourceName: 'Microsoft-Windows-Eventlog' };
  if (['7045', '7040', '7036', '7034'].includes(id))
    return { Channel: 'System', SourceName: 'Service Control Manager' };
  if (['4103', '4104'].includes(id))
    return { Channel: 'Microsoft-Windows-PowerShell/Operational', SourceName: 'Microsoft-Windows-PowerShell' };
  if (['400', '403', '600', '800'].includes(id)) return { Channel: 'Windows PowerShell', SourceName: 'PowerShell' };
  if (['1100', '1102', '1105'].includes(id)) return { Channel: 'Security', SourceName: 'Microsoft-Windows-Eventlog' };
  return { Channel: 'Security', SourceName: 'Microsoft-Windows-Security-Auditing' };
}

/**
 * What Sysmon writes in every record of an event id, with neutral values: without the process
 * ids and the primary path (Image, ImageLoaded, TargetFilename...) the mapping has no process or
 * file object to keep (OCSF asks for a pid or uid, and a file's name), so a rule on
 * OriginalFileName alone would see nothing. Values are test addresses and made-up paths that
 * SigmaHQ filters do not name.
 */
const GUID = '{8f1c2a9e-7d55-65e7-2b01-000000002a00}';
const IMAGE = 'D:\\sample\\app\\sample.exe';
function sysmonRecord(id: string | undefined): Raw {
  const proc = { ProcessGuid: GUID, ProcessId: '8012', Image: IMAGE };
  switch (id) {
    case '1':
      return { ...proc, ParentProcessGuid: '{8f1c2a9e-7d50-65e7-2a01-000000002a00}', ParentProcessId: '3124' };
    case '3':
      return {
        ...proc,
        Protocol: 'tcp',
        SourceIp: '192.0.2.42',
        SourcePort: '50122',
        DestinationIp: '203.0.113.80',
        DestinationPort: '8443',
      };
    case '6':
      return { ImageLoaded: 'D:\\sample\\drivers\\sample.sys', Signed: 'true' };
    case '7':
      return { ...proc, ImageLoaded: 'D:\\sample\\app\\sample.dll', Signed: 'true' };
    case '8':
      return {
        SourceProcessGuid: GUID,
        SourceProcessId: '8012',
        SourceImage: IMAGE,
        TargetProcessGuid: '{8f1c2a9e-7d60-65e7-2c01-000000002a00}',
        TargetProcessId: '744',
        TargetImage: 'D:\\sample\\app\\target.exe',
        NewThreadId: '5120',
      };
    case '10':
      return {
        SourceProcessGUID: GUID,
        SourceProcessId: '8012',
        SourceImage: IMAGE,
        TargetProcessGUID: '{8f1c2a9e-7d60-65e7-2c01-000000002a00}',
        TargetProcessId: '744',
        TargetImage: 'D:\\sample\\app\\target.exe',
        SourceThreadId: '5120',
      };
    case '9':
      return { ...proc, Device: '\\Device\\HarddiskVolume7' };
    case '12':
    case '13':
    case '14':
      return { ...proc, TargetObject: 'HKU\\S-1-5-21-1000\\SOFTWARE\\SampleVendor\\Sample' };
    case '17':
    case '18':
      return { ...proc, PipeName: '\\sample_pipe' };
    case '22':
      return { ...proc, QueryName: 'sample.example.net' };
    case '2':
    case '11':
    case '15':
    case '23':
    case '26':
    case '27':
    case '28':
    case '29':
      return { ...proc, TargetFilename: 'D:\\sample\\data\\sample.txt' };
    default:
      return proc;
  }
}

/**
 * What the Security log writes in every sign-in record (4624, 4625, 4648), Kerberos record
 * (4768-4771) and NTLM validation (4776), with neutral values: a rule's filter on a field the
 * event would otherwise lack (`IpAddress: '-'`, which the mapping reads as no address) is then
 * decided on a value the vendor really writes. The address is a public test address.
 */
function securityRecord(id: string | undefined): Raw {
  const subject = {
    SubjectUserSid: 'S-1-5-18',
    SubjectUserName: 'WS-042$',
    SubjectDomainName: 'CORP',
    SubjectLogonId: '0x3e7',
  };
  const client = { IpAddress: '198.51.100.7', IpPort: '50122' };
  switch (id) {
    case '4624':
    case '4625':
      return {
        ...subject,
        ...client,
        TargetUserSid: 'S-1-5-21-1000-1001',
        TargetUserName: 'sample.user',
        TargetDomainName: 'CORP',
        LogonType: '3',
        LogonProcessName: 'NtLmSsp',
        AuthenticationPackageName: 'NTLM',
        WorkstationName: 'WS-SAMPLE',
        ProcessId: '0x2b8',
        ProcessName: 'C:\\Windows\\System32\\lsass.exe',
        ...(id === '4625' ? { Status: '0xC000006D', SubStatus: '0xC000006A' } : { TargetLogonId: '0x5a3f1' }),
      };
    case '4648':
      return {
        ...subject,
        ...client,
        TargetUserName: 'sample.user',
        TargetDomainName: 'CORP',
        TargetServerName: 'srv-sample',
        ProcessId: '0x2b8',
        ProcessName: 'C:\\Windows\\System32\\svchost.exe',
      };
    case '4768':
    case '4769':
    case '4770':
    case '4771':
      return {
        ...client,
        IpAddress: '::ffff:198.51.100.7',
        TargetUserName: 'sample.user',
        TargetDomainName: 'CORP',
        ServiceName: 'krbtgt',
        Status: '0x0',
        TicketOptions: '0x40810010',
        TicketEncryptionType: '0x12',
      };
    case '4776':
      return {
        TargetUserName: 'sample.user',
        Workstation: 'WS-SAMPLE',
        PackageName: 'MICROSOFT_AUTHENTICATION_PACKAGE_V1_0',
        Status: '0x0',
      };
    default:
      return {};
  }
}

/** The ids alone (the second, smaller skeleton). */
const SYSMON_IDS = new Set([
  'ProcessGuid',
  'ProcessId',
  'ParentProcessGuid',
  'ParentProcessId',
  'SourceProcessGuid',
  'SourceProcessGUID',
  'SourceProcessId',
  'TargetProcessGuid',
  'TargetProcessGUID',
  'TargetProcessId',
  'NewThreadId',
  'SourceThreadId',
]);

/**
 * The keys every record of a source has, by built-in mapping (`platform.stream`). Windows logs
 * are NXLog's flat JSON (EventID, Channel, SourceName, Hostname, EventTime, the EventData
 * names at the top level), as the mappings read them.
 */
const SKELETONS: Record<string, (eventId: string | undefined) => Raw> = {
  'sysmon.operational': (id) => ({
    Channel: 'Microsoft-Windows-Sysmon/Operational',
    SourceName: 'Microsoft-Windows-Sysmon',
    Hostname: 'ws-042.corp.example.com',
    UtcTime: '2024-03-05 14:51:07.331',
    EventTime: WIN_TIME,
    RecordNumber: 551021,
    ...sysmonRecord(id),
  }),
  'windows_security.security': (id) => ({
    ...windowsChannel(id ?? ''),
    Hostname: 'ws-042.corp.example.com',
    EventTime: WIN_TIME,
    RecordNumber: 551021,
    ...(id === '4688' ? { NewProcessId: '0x1f4c', ProcessId: '0xc34', NewProcessName: IMAGE } : {}),
    ...securityRecord(id),
  }),
  'okta.system_log': () => ({
    uuid: '9d2b1c40-1a3e-11ef-9c1a-0242ac120002',
    published: TIME,
    version: '0',
    severity: 'INFO',
    actor: { id: '00u8f2k1qzJ3hT5Xy4x7', type: 'User' },
  }),
  'microsoft_graph.signins': () => ({ id: '66ea54eb-6301-4ee5-be62-ff5a759b0100', createdDateTime: TIME }),
  'microsoft_graph.directory_audits': () => ({
    id: 'Directory_2c1a0b9d_4KJ2P_25871',
    activityDateTime: TIME,
    loggedByService: 'Core Directory',
  }),
  'microsoft_365.management_activity': () => ({
    Id: '9c1d0e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f',
    CreationTime: '2024-03-05T14:51:07',
    OrganizationId: '4a6b8c0d-2e4f-4a6b-8c0d-2e4f6a8b0c1d',
  }),
  'aws_cloudtrail.cloudtrail': () => ({
    eventVersion: '1.09',
    eventTime: '2024-03-05T14:51:07Z',
    eventID: '0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
    recipientAccountId: '111122223333',
  }),
  'github.audit_log': () => ({ '@timestamp': 1709650267331, _document_id: 'Yk3bX9Qe2vRr7c1tPz0AsQ' }),
  'google_workspace.login': () => ({
    kind: 'admin#reports#activity',
    id: { time: TIME, uniqueQualifier: '-4588912290123456789', applicationName: 'login', customerId: 'C03az79cb' },
  }),
  'google_workspace.admin': () => ({
    kind: 'admin#reports#activity',
    id: { time: TIME, uniqueQualifier: '-5102938475610293847', applicationName: 'admin', customerId: 'C03az79cb' },
  }),
  'zeek.logs': () => ({ ts: 1709650267.331, uid: 'CHhAvVGS1DHFjwGM9' }),
  'suricata.eve': () => ({ timestamp: '2024-03-05T14:51:07.331+0000', flow_id: 1234567890 }),
  'aws_route53_resolver.query_logs': () => ({
    version: '1.100000',
    query_timestamp: '2024-03-05T14:51:07Z',
    account_id: '111122223333',
    region: 'us-east-1',
  }),
  'zscaler_zia.web': () => ({ datetime: 'Tue Mar  5 14:51:07 2024' }),
  'fortinet_fortigate.syslog': () => ({
    date: '2024-03-05',
    time: '14:51:07',
    devname: 'FGT-EDGE-01',
    devid: 'FG100FTK22000001',
    eventtime: 1709650267331000000,
    tz: '+0000',
    logid: '0316013056',
    level: 'notice',
    vd: 'root',
  }),
  'paloalto_ngfw.syslog': () => ({
    pan: {
      receive_time: '2024/03/05 14:51:07',
      serial: '012801000001',
      time_generated: '2024/03/05 14:51:07',
      vsys: 'vsys1',
      sessionid: '108226915',
      repeatcnt: '1',
      seqno: '7261293',
      actionflags: '0x0',
      device_name: 'PA-3220-EDGE',
    },
  }),
};

/** Mappings whose raw events are text lines this module does not build (Cisco ASA's message formats, VPC flow logs). */
const TEXT_SOURCES = new Set(['cisco_asa.syslog', 'aws_vpc_flow.flow_logs']);

// ---------------------------------------------------------------------------------------------
// Text lines: FortiGate's key=value and PAN-OS's CSV, in a syslog frame. The raw event is built
// as the fields the mapping's parse steps produce (its rules read those), then written as the
// line the parse steps read back.

const quoteKv = (v: unknown) => `"${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
const quoteCsv = (v: unknown) => {
  const t = v === undefined || v === null ? '' : String(v);
  return /[",\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
};

/** The PAN-OS CSV columns of a log type: the mapping's csv parse step whose condition the line's type meets. */
function panColumns(type: string): string[] | undefined {
  const doc = mappingOf('paloalto_ngfw.syslog').doc;
  for (const step of doc.parse ?? []) {
    const st = step as unknown as { parser: string; into?: string; columns?: string[]; when?: unknown };
    if (st.parser !== 'csv' || st.into !== 'pan' || !st.columns) continue;
    const probe = `1,2024/03/05 14:51:07,012801000001,${type},x,,2024/03/05 14:51:07,`;
    if (st.when === undefined || predicate(st.when)({ pan_csv: probe })) return st.columns;
  }
  return undefined;
}

/** The vendor's raw event for the fields a text mapping's parse steps produce; the fields themselves for JSON mappings. */
export function serialize(mapping: string, view: Raw): Raw {
  if (mapping === 'fortinet_fortigate.syslog') {
    const first = ['date', 'time', 'devname', 'devid', 'eventtime', 'tz', 'logid', 'type', 'subtype', 'level', 'vd'];
    const keys = [...first.filter((k) => k in view), ...Object.keys(view).filter((k) => !first.includes(k))];
    const pairs = keys
      .filter((k) => view[k] !== null && typeof view[k] !== 'object')
      .map((k) => `${k}=${typeof view[k] === 'number' ? view[k] : quoteKv(view[k])}`);
    return { message: `<189>${pairs.join(' ')}` };
  }
  if (mapping === 'paloalto_ngfw.syslog') {
    const pan = (view.pan ?? {}) as Raw;
    const columns = panColumns(String(pan.type ?? ''));
    if (!columns) return view;
    const line = columns.map((c, i) => (i === 0 ? '1' : c === '_' ? '' : quoteCsv(pan[c]))).join(',');
    return { message: `<14>Mar  5 14:51:07 PA-3220-EDGE ${line}` };
  }
  return view;
}

/** Mappings that read Windows EventData (NXLog flat JSON): the vendor writes every EventData value as text, the EventID as a number. */
const WINDOWS = new Set(['sysmon.operational', 'windows_security.security']);

/** The source of the variant whose rules read most of the event's fields from the table's raw keys (first on ties). */
export function chooseSource(v: SigmaVariant, event: SigmaEvent): SigmaSource {
  if (v.sources.length === 1) return v.sources[0]!;
  let best = v.sources[0]!;
  let bestScore = -1;
  for (const s of v.sources) {
    const keys = keysRead(s.mapping, s.rules);
    const score = Object.keys(event).filter((f) => {
      const e = entryOf(v, f);
      return e !== undefined && reads(keys, e[1].raw ?? e[0]);
    }).length;
    if (score > bestScore) {
      best = s;
      bestScore = score;
    }
  }
  return best;
}

export type Built =
  | {
      ok: true;
      source: SigmaSource;
      raw: Raw;
      /** The mapping rule that takes the raw event. */
      rule: string;
      /**
       * The event as the mapping sees it in Sigma terms: the generated event plus table fields
       * the skeleton or the rule's `when` set (Okta's eventType when the rule names none).
       */
      effective: SigmaEvent;
      /** The mapping's result for `raw`, when building it already mapped it. */
      mapped?: MapResult;
    }
  | { ok: false; reason: string };

/** A Sigma value as the vendor writes it under a raw key. */
function vendorValue(mapping: string, v: string | number | boolean): unknown {
  return WINDOWS.has(mapping) ? String(v) : v;
}

/** The vendor's spelling of enum values the tables list in lower case (Sysmon's EventType). */
const SPELLING: Record<string, string> = {
  createkey: 'CreateKey',
  deletekey: 'DeleteKey',
  renamekey: 'RenameKey',
  setvalue: 'SetValue',
  deletevalue: 'DeleteValue',
  createvalue: 'CreateValue',
};

type WhereLeaf = { field: string; op: string; value?: unknown };
const whereLeaves = (v: SigmaVariant): WhereLeaf[] =>
  (v.where ?? []).filter((c) => 'field' in c && (c.op === 'eq' || c.op === 'in')) as WhereLeaf[];
const whereValues = (l: WhereLeaf): unknown[] => (l.op === 'in' ? (l.value as unknown[]) : [l.value]);

/** The event ids a variant's events can have when the event names none: its `eventIds`, else the event codes its `where` asks for. */
function variantEventIds(v: SigmaVariant): (string | undefined)[] {
  if (v.eventIds?.length) return v.eventIds;
  const code = whereLeaves(v).find((l) => l.field === 'metadata.event_code');
  return code ? whereValues(code).map(String) : [undefined];
}

/**
 * Enum fields the variant's `where` decides (registry_delete: activity_id 4, written from
 * Sysmon's EventType), for fields the event leaves out: each with the Sigma values that give
 * an OCSF value the `where` accepts (in the vendor's spelling).
 */
function impliedFields(v: SigmaVariant, event: SigmaEvent): { name: string; values: string[] }[] {
  const out: { name: string; values: string[] }[] = [];
  for (const l of whereLeaves(v)) {
    for (const [name, spec] of Object.entries(v.fields)) {
      if (spec.path !== l.field || !spec.values || Object.keys(event).some((k) => lower(k) === lower(name))) continue;
      const keys = Object.keys(spec.values).filter(
        (k) => spec.values![k] !== false && whereValues(l).includes(spec.values![k]),
      );
      if (keys.length) out.push({ name, values: keys.map((k) => SPELLING[k] ?? k) });
    }
  }
  return out;
}

/** Every combination of one value per implied field. */
function combinations(fields: { name: string; values: string[] }[]): [string, string][][] {
  let acc: [string, string][][] = [[]];
  for (const f of fields) acc = acc.flatMap((c) => f.values.map((x) => [...c, [f.name, x] as [string, string]]));
  return acc;
}

/**
 * The raw event of the variant's source for the Sigma event. `accept` judges the event the
 * mapping will see (`effective`): skeletons are tried from the whole record (with neutral
 * values) to the least one (no key of a Sigma field the event leaves out), and the first the
 * judge accepts is taken (else the first built).
 */
export function buildRaw(
  v: SigmaVariant,
  event: SigmaEvent,
  source: SigmaSource = chooseSource(v, event),
  accept?: (effective: SigmaEvent) => boolean,
): Built {
  const mapping = source.mapping;
  if (TEXT_SOURCES.has(mapping)) return { ok: false, reason: `${mapping}: raw text lines are not built` };
  const skeleton = SKELETONS[mapping];
  if (!skeleton) return { ok: false, reason: `${mapping}: no skeleton` };
  const eventIdEntry = Object.entries(event).find(([k]) => isEventId(k));
  const eventIds =
    eventIdEntry !== undefined && eventIdEntry[1] !== null ? [String(eventIdEntry[1])] : variantEventIds(v);
  let first: Extract<Built, { ok: true }> | undefined;
  let why = '';
  // Event ids and implied values are tried in order; the first raw event whose mapping rule
  // reads every field the event has (Sysmon 12 has no Details, 13 has) and that the judge accepts wins.
  for (const eventId of eventIds) {
    for (const implied of combinations(impliedFields(v, event))) {
      const r = buildOne(v, event, source, skeleton, eventId, implied, accept);
      if (!r.ok) why = r.reason;
      else if ((!accept || accept(r.effective)) && readsAll(v, source.mapping, r.rule, event)) return r;
      else first ??= r;
    }
  }
  return first ?? { ok: false, reason: why };
}

const readKeys = new Map<string, Set<string>>();
/** The raw keys the named rules of a mapping (with its defaults) read. */
function keysRead(mapping: string, rules: string[]): Set<string> {
  const id = `${mapping}\u0000${rules.join('\u0000')}`;
  let keys = readKeys.get(id);
  if (!keys) {
    keys = new Set();
    for (const ks of writtenPaths(mapping, rules).values()) for (const k of ks) keys.add(k);
    readKeys.set(id, keys);
  }
  return keys;
}

const reads = (keys: Set<string>, key: string) => keys.has(key) || [...keys].some((k) => k.endsWith(`.${key}`));

const whenCache = new Map<string, Set<string>>();
/** The raw keys the named rules' `when` conditions read, as flat keys (the last step of each path). */
function whenReads(mapping: string, rules: string[]): Set<string> {
  const id = `${mapping}\u0000${rules.join('\u0000')}`;
  let out = whenCache.get(id);
  if (!out) {
    out = new Set();
    for (const r of mappingOf(mapping).rules)
      if (rules.includes(r.name)) for (const f of fieldsOf(r.when)) out.add(f.split('.').pop()!);
    whenCache.set(id, out);
  }
  return out;
}

/** The top-level assignments of the named rules of a mapping (and its defaults) that write an OCSF path. */
function assignmentsTo(mapping: string, rules: string[], path: string): Assignment[] {
  const doc = mappingOf(mapping).doc;
  return [
    ...(doc.defaults ?? []),
    ...doc.rules.filter((r) => rules.includes(r.name)).flatMap((r) => r.set ?? []),
  ].filter((a) => a.target === path);
}

const fromList = (a: Assignment): string[] =>
  typeof a.from === 'string' ? [a.from] : Array.isArray(a.from) ? a.from : [];

/**
 * The raw key and value a source carries a table field's value in: the table's key (`raw ??
 * name`) when the source's rules read it; else the flat key they write the field's OCSF path
 * from (the Security log's 4688 writes process.file.path from NewProcessName where Sysmon has
 * Image), with the value copied, or translated through the two lookups (Sysmon's `High` is the
 * Security log's `S-1-16-12288`); undefined when the source does not carry the field.
 */
export function carry(
  v: SigmaVariant,
  source: SigmaSource,
  name: string,
  value?: string | number | boolean,
): { key: string; value?: unknown } | undefined {
  const e = entryOf(v, name);
  if (!e) return undefined;
  const [canonical, spec] = e;
  const keys = keysRead(source.mapping, source.rules);
  const hashesKey = Object.entries(v.fields).find(([, f]) => f.compose === 'hashes')?.[0];
  const key = spec.compose === 'hash' && hashesKey ? hashesKey : (spec.raw ?? canonical);
  // Hashes is read by a parse step into `hashes`, which the rules' lists read.
  if ((spec.compose === 'hashes' || spec.compose === 'hash') && keys.has('hashes')) return { key, value };
  if (reads(keys, key)) return { key, value };
  // A field the mapping does not read stays under `unmapped` as the vendor wrote it.
  if (spec.path.startsWith('unmapped.')) return { key, value };
  // A flag the mapping reads in a condition (Sysmon's `Signed: true` makes it write the
  // signature), or a key the rules' `when` reads (ObjectType: File picks File System Activity).
  if (spec.compose === 'flag' || whenReads(source.mapping, source.rules).has(key)) return { key, value };
  if (spec.compose) return undefined;
  for (const a of assignmentsTo(source.mapping, source.rules, spec.path)) {
    const flat = fromList(a).find((k) => !/[.[]/.test(k));
    if (!flat) continue;
    if (!a.lookup && (a.cast === undefined || a.cast === 'string')) return { key: flat, value };
    if (!a.lookup || value === undefined) continue;
    // The OCSF value another source's lookup gives the Sigma value, and this lookup's key for it.
    const other = v.sources
      .flatMap((s) => assignmentsTo(s.mapping, s.rules, spec.path))
      .find((b) => b.lookup && fromList(b).includes(key));
    if (!other?.lookup) continue;
    const find = (map: Record<string, unknown>, k: string, ci?: boolean) =>
      map[k] ?? (ci ? Object.entries(map).find(([x]) => x.toLowerCase() === k.toLowerCase())?.[1] : undefined);
    const ocsf = find(other.lookup.map, String(value), other.lookup.ignore_case);
    const back = ocsf === undefined ? undefined : Object.entries(a.lookup.map).find(([, x]) => x === ocsf)?.[0];
    if (back !== undefined) return { key: flat, value: back };
  }
  return undefined;
}

const keyCache = new WeakMap<SigmaVariant, Map<string, string | undefined>>();
/** The raw key of a table field in a source (see carry). */
export function rawKeyFor(v: SigmaVariant, source: SigmaSource, name: string): string | undefined {
  let m = keyCache.get(v);
  if (!m) keyCache.set(v, (m = new Map()));
  const id = `${source.mapping}\u0000${source.rules.join('\u0000')}\u0000${name}`;
  if (!m.has(id)) m.set(id, carry(v, source, name)?.key);
  return m.get(id);
}

/** Does the mapping rule (with the defaults) read every field of the event from its raw key? */
function readsAll(v: SigmaVariant, mapping: string, rule: string, event: SigmaEvent): boolean {
  const one = { mapping, rules: [rule] };
  return Object.entries(event).every(
    ([name, value]) => value === null || isEventId(name) || carry(v, one, name, value) !== undefined,
  );
}

/** For a raw key a mapping rule's `when` needs: the event's value of a field the mapping writes to the same OCSF attribute from another key. */
function hintFor(v: SigmaVariant, source: SigmaSource, event: SigmaEvent): (key: string) => unknown {
  const doc = mappingOf(source.mapping).doc;
  const assignments = [
    ...(doc.defaults ?? []),
    ...doc.rules.filter((r) => source.rules.includes(r.name)).flatMap((r) => r.set ?? []),
  ];
  return (key) => {
    for (const a of assignments) {
      if (!fromList(a).includes(key)) continue;
      for (const [name, value] of Object.entries(event)) {
        const e = entryOf(v, name);
        if (e && e[1].path === a.target && value !== null && !e[1].values) return value;
      }
    }
    return undefined;
  };
}

function buildOne(
  v: SigmaVariant,
  event: SigmaEvent,
  source: SigmaSource,
  skeleton: (eventId: string | undefined) => Raw,
  eventId: string | undefined,
  implied: [string, string][],
  accept?: (effective: SigmaEvent) => boolean,
): Built {
  const mapping = source.mapping;
  const raw: Raw = {};
  const hashesKey = Object.entries(v.fields).find(([, f]) => f.compose === 'hashes')?.[0];
  const hashParts: string[] = [];
  const put = (name: string, value: string | number | boolean): string | undefined => {
    const e = entryOf(v, name);
    if (!e) return `the field ${name} is not in the variant's table`;
    const [canonical, spec] = e;
    if (spec.compose === 'hash' && hashesKey) {
      // Sysmon writes single hashes inside Hashes: `MD5=...,SHA256=...`.
      hashParts.push(`${spec.raw ?? canonical.toUpperCase()}=${value}`);
      return undefined;
    }
    const c = carry(v, source, name, value);
    if (c === undefined) return `${mapping} (${source.rules.join('; ')}) does not carry the field ${name}`;
    const key = c.key;
    value = c.value as string | number | boolean;
    // A key the mapping reads as a list (`each`) holds a list in the vendor's record (Zeek's answers).
    const x = eachKeys(mapping).has(key) ? [vendorValue(mapping, value)] : vendorValue(mapping, value);
    return setAt(raw, key, x) ? undefined : `the raw key ${key} of ${name} is not a plain path`;
  };
  for (const [name, value] of Object.entries(event)) {
    if (value === null || isEventId(name)) continue;
    const problem = put(name, value);
    if (problem) return { ok: false, reason: problem };
  }
  for (const [name, value] of implied) put(name, value);
  if (hashParts.length) {
    const prev = getAt(raw, hashesKey!);
    setAt(raw, hashesKey!, [...(present(prev) ? [String(prev)] : []), ...hashParts].join(','));
  }
  if (eventId !== undefined && WINDOWS.has(mapping)) raw.EventID = /^\d+$/.test(eventId) ? Number(eventId) : eventId;

  // What the chosen rule's `when` needs, without changing what the event set; then the skeleton.
  const info = mappingOf(mapping);
  const wanted = source.rules.map((n) => info.rules.find((r) => r.name === n)).filter((r) => r !== undefined);
  const named = (k: string) => Object.keys(event).some((f) => lower(f) === lower(k));
  const layers: ((base: Raw) => void)[] = [
    () => {},
    // Without the neutral paths: only the ids.
    (base) => {
      if (WINDOWS.has(mapping))
        for (const k of Object.keys(base))
          if (!SYSMON_IDS.has(k) && Object.keys(v.fields).some((n) => rawKeyFor(v, source, n) === k)) delete base[k];
    },
    // No key of a Sigma field the event leaves out.
    (base) => {
      for (const name of Object.keys(v.fields)) {
        const key = named(name) ? undefined : rawKeyFor(v, source, name);
        if (key !== undefined) deleteAt(base, key);
      }
    },
  ];
  let first: Extract<Built, { ok: true }> | undefined;
  for (const layer of layers) {
    for (const r of wanted) {
      const trial = clone(raw);
      // The skeleton of the event id the rule's `when` picks, when the event has none (Sysmon 1 for process_creation).
      let id = eventId;
      if (id === undefined && r.when !== undefined) {
        const probe = clone(raw);
        satisfy(r.when, probe);
        if (probe.EventID !== undefined) id = String(probe.EventID);
      }
      const base = skeleton(id);
      layer(base);
      fillMissing(trial, base);
      if (r.when !== undefined && !satisfy(r.when, trial, hintFor(v, source, event))) continue;
      const taking = ruleTaking(mapping, trial);
      if (taking === undefined || !source.rules.includes(taking)) continue;
      const mapped = complete(v, event, mapping, taking, trial);
      if (ruleTaking(mapping, trial) !== taking) continue;
      const built = {
        ok: true as const,
        source,
        raw: serialize(mapping, trial),
        rule: taking,
        effective: effectiveOf(v, event, trial, source),
        ...(mapped ? { mapped } : {}),
      };
      if (!accept || accept(built.effective)) return built;
      first ??= built;
      break;
    }
  }
  if (first) return first;
  return {
    ok: false,
    reason: `${mapping}: no raw event with these values is taken by ${source.rules.map((n) => JSON.stringify(n)).join(' or ')} (taken by ${JSON.stringify(ruleTaking(mapping, raw) ?? null)})`,
  };
}

// ---------------------------------------------------------------------------------------------
// Completing a record: what the vendor always writes beside the fields a rule names

/** A neutral value for a raw key, as the assignment that reads it casts or looks it up. */
function neutral(a: Assignment): unknown {
  if (a.lookup) return Object.keys(a.lookup.map)[0] ?? 'sample';
  switch (a.cast) {
    case 'integer':
    case 'long':
    case 'port':
    case 'float':
      return '7';
    case 'boolean':
      return 'true';
    case 'timestamp':
    case 'datetime':
      return TIME;
    case 'ip':
      return '192.0.2.10';
    case 'hostname':
      return 'host.example.net';
    case 'email':
      return 'sample@example.net';
    case 'url':
      return 'https://example.net/sample';
    case 'hex':
      return '0x7';
    case 'user_name':
    case 'user_domain':
      return 'SAMPLE\\sample';
    case 'basename':
    case 'dirname':
      return 'D:\\sample\\sample.bin';
    default:
      return 'sample';
  }
}

/** The key of an assignment's `from` to write: the flat one if there is one (NXLog, plain JSON), else the first. */
function fromKey(a: Assignment): string | undefined {
  const from = typeof a.from === 'string' ? [a.from] : Array.isArray(a.from) ? a.from : [];
  return from.find((k) => !/[.[]/.test(k)) ?? from[0];
}

const valueAt = (o: unknown, path: string): unknown => {
  let cur: unknown[] = [o];
  for (const part of path.replace(/\[\*\]/g, '.*').split('.')) {
    const next: unknown[] = [];
    for (const c of cur) {
      if (c === null || typeof c !== 'object') continue;
      if (part === '*') {
        if (Array.isArray(c)) next.push(...c);
      } else next.push((c as Raw)[part]);
    }
    cur = next.filter((x) => x !== undefined && x !== null);
  }
  return cur.length ? cur[0] : undefined;
};

/**
 * Fills the keys a mapping rule reads for an OCSF object that the mapping dropped (OCSF asks
 * for a name, an id... that the rule's fields alone do not give: 7045's service needs its
 * ImagePath and ServiceName), with neutral values, until every field of the event lands at its
 * path or nothing more can be added.
 */
function complete(v: SigmaVariant, event: SigmaEvent, mapping: string, rule: string, raw: Raw): MapResult | undefined {
  const info = mappingOf(mapping);
  const doc = info.doc;
  const assignments = [...(doc.rules.find((r) => r.name === rule)?.set ?? []), ...(doc.defaults ?? [])];
  for (let round = 0; round < 3; round++) {
    const out = info.compiled.map(serialize(mapping, raw), { receivedAtMs: 0 });
    if (!out.ok) return out;
    // A field the event leaves empty ('' is Sigma's empty value) is meant absent: nothing fills its path.
    const own = new Set(
      Object.keys(event)
        .map((name) => entryOf(v, name)?.[1].path.replace(/\[\*\]/g, ''))
        .filter((p): p is string => p !== undefined),
    );
    const missing = Object.keys(event)
      .filter((name) => event[name] !== '')
      .map((name) => entryOf(v, name))
      .filter((e) => e !== undefined && valueAt(out.event, e[1].path) === undefined)
      .map((e) => e![1].path.replace(/\[\*\]/g, ''));
    if (!missing.length) return out;
    const prefixes = new Set<string>();
    for (const p of missing) {
      const parts = p.split('.');
      for (let i = 1; i < parts.length; i++) prefixes.add(parts.slice(0, i).join('.'));
    }
    let added = false;
    for (const a of assignments) {
      if (a.value !== undefined || a.each !== undefined) continue;
      const target = a.target.replace(/\[\d*\]/g, '');
      if (own.has(target) || ![...prefixes].some((p) => target.startsWith(`${p}.`))) continue;
      const key = fromKey(a);
      if (!key || present(getAt(raw, key))) continue;
      const fromList = typeof a.from === 'string' ? [a.from] : (a.from ?? []);
      if (fromList.some((k) => present(getAt(raw, k)))) continue;
      if (setAt(raw, key, neutral(a))) added = true;
    }
    if (!added) return out;
  }
  return undefined;
}

/** The raw event in Sigma terms: the generated event plus the table fields the skeleton or the rule's `when` set. */
function effectiveOf(v: SigmaVariant, event: SigmaEvent, picked: Raw, source: SigmaSource): SigmaEvent {
  const mapping = source.mapping;
  const effective: SigmaEvent = { ...event };
  for (const [name, spec] of Object.entries(v.fields)) {
    if (Object.keys(event).some((k) => lower(k) === lower(name)) || spec.compose === 'hash') continue;
    const key = rawKeyFor(v, source, name);
    const x = key === undefined ? undefined : getAt(picked, key);
    if (present(x) && typeof x !== 'object') effective[name] = x as string | number | boolean;
  }
  if (WINDOWS.has(mapping) && !Object.keys(event).some(isEventId) && v.eventIds && picked.EventID !== undefined)
    effective.EventID = String(picked.EventID);
  return effective;
}
