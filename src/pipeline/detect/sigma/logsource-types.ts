// The shape of the published Sigma logsource mapping (docs/sigma.md): a logsource is one or
// more variants, each an OCSF class (and activity, vendor) that named rules of Weir's built-in
// mappings produce, and a table of the Sigma fields those rules write, each read at one OCSF
// path. A test holds every table against what the built-in mappings write, so that a field in a
// table is a field a rule on it can match; a field not in the table is refused at import.
import type { Condition } from '../../conditions/types.js';

export interface SigmaField {
  /** The OCSF path the field reads. For `compose: 'user'` the user object (`process.user`). */
  path: string;
  /**
   * The vendor's key in the raw event the built-in mapping reads, when it differs from the Sigma
   * name (Windows 4688's `NewProcessName` for `Image`, Okta's `eventType` for `eventtype`); the
   * table check and the end-to-end Sigma test read it. Dotted for nested JSON.
   */
  raw?: string;
  /**
   * Sigma values to OCSF enum values (keys lower-case): only these values, compared for
   * equality, compile. `false`: events of this variant never have the value (another variant's).
   */
  values?: Record<string, number | false>;
  /**
   * A value the mapping splits over several OCSF attributes:
   * - `user`: `DOMAIN\name` over `<path>.domain` and `<path>.name`;
   * - `hashes`: Sysmon's `SHA256=...,IMPHASH=...` list over `<path>[*].value` (each `ALGO=value`
   *   compares the value; the algorithm is told by the value itself);
   * - `hash`: one hash value (`sha256: ...`) over `<path>[*].value`;
   * - `regvalue`: a registry value's full path over `<path>.path` (the key) and `<path>.name`;
   * - `hex`: a number the vendor writes in hex (`0x1410`), stored as the number;
   * - `flag`: a vendor's true/false the mapping turns into the presence of `path` (Sysmon's
   *   `Signed`: a signature is written only for a signed image).
   */
  compose?: 'user' | 'hashes' | 'hash' | 'regvalue' | 'hex' | 'flag';
  /**
   * A vendor field the mappings keep under `unmapped` (no OCSF attribute holds it): `path` is
   * where it is in one framing of the raw event, `also` where the others put it (the same
   * Windows field is `CallTrace`, `EventData.CallTrace` or `winlog.event_data.CallTrace`
   * depending on the relay). An item holds when it holds on any of them (absence: on all).
   */
  also?: string[];
  /** Raw values the mapping writes as absence (Windows' `-`, a SID `S-1-0-0`): a test they pass holds on the absent attribute too. */
  placeholders?: string[];
}

/** Rules of one built-in mapping whose events a variant holds. */
export interface SigmaSource {
  /** `platform.stream` of the built-in mapping (`sysmon.operational`). */
  mapping: string;
  /** The names of its rules (docs/builtin-mappings.md) that produce these events. */
  rules: string[];
}

export interface SigmaVariant {
  /** The OCSF class(es) the events are in, and further constraints (activity, vendor). */
  classes: number[];
  where?: Condition[];
  /**
   * For logsources keyed by a Windows event id: the `EventID`s of this variant. An `EventID`
   * item of a rule is decided against them when the rule is compiled; a variant no `EventID`
   * of the rule can be is left out of the rule.
   */
  eventIds?: string[];
  sources: SigmaSource[];
  fields: Record<string, SigmaField>;
  /** Placeholders of every field of the variant (SigmaField `placeholders`). */
  placeholders?: string[];
  /** For the user guide. */
  note?: string;
}

export interface SigmaLogsource {
  /** category / product / service as Sigma writes them; absent keys match anything the rule says. */
  category?: string;
  product?: string;
  service?: string;
  variants: SigmaVariant[];
  /** For the user guide. */
  note?: string;
}

export const f = (path: string, raw?: string): SigmaField => (raw === undefined ? { path } : { path, raw });
export const vendorIs = (name: string): Condition => ({ field: 'metadata.product.vendor_name', op: 'eq', value: name });
export const productIs = (name: string): Condition => ({ field: 'metadata.product.name', op: 'eq', value: name });
export const activityIs = (id: number): Condition => ({ field: 'activity_id', op: 'eq', value: id });

/** Where the mappings keep a Windows event field they do not map, in each framing they read (flat NXLog JSON, the XML's EventData, Winlogbeat). */
export const keptWindows = (name: string): SigmaField => ({
  path: `unmapped.${name}`,
  raw: name,
  also: [`unmapped.EventData.${name}`, `unmapped.winlog.event_data.${name}`],
});
