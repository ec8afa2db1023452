// The shape of the project's OCSF definitions and of the validator's findings. The
// definitions themselves are src/ocsf/definitions.json (generated; see src/ocsf/supported.ts).

export type OcsfRequirement = 'required' | 'recommended' | 'optional';

export interface OcsfAttribute {
  readonly name: string;
  readonly caption: string;
  /** Dictionary type: string_t, integer_t, long_t, timestamp_t, ip_t, ..., or object_t. */
  readonly type: string;
  /** For object_t: the object's name (a key of the catalog's objects). */
  readonly objectType?: string;
  readonly isArray: boolean;
  readonly requirement: OcsfRequirement;
  /** Enum values (as strings, e.g. "1") to their captions. */
  readonly enum?: Readonly<Record<string, string>>;
  /** For an `_id` enum attribute: the name of its caption sibling (activity_id -> activity_name). */
  readonly sibling?: string;
  /** The attribute exists only when one of these profiles is in metadata.profiles. */
  readonly profiles?: readonly string[];
  /** Observable type_id when values of this attribute are observables. */
  readonly observable?: number;
}

export interface OcsfObjectDef {
  readonly name: string;
  readonly caption: string;
  readonly attributes: Readonly<Record<string, OcsfAttribute>>;
  /** "At least one of" / "just one of" constraints, as in the schema. */
  readonly constraints?: { readonly at_least_one?: readonly string[]; readonly just_one?: readonly string[] };
  readonly observable?: number;
}

export interface OcsfClassDef {
  readonly uid: number;
  readonly name: string;
  readonly caption: string;
  readonly categoryUid: number;
  readonly categoryName: string;
  readonly profiles: readonly string[];
  readonly attributes: Readonly<Record<string, OcsfAttribute>>;
  readonly constraints?: { readonly at_least_one?: readonly string[]; readonly just_one?: readonly string[] };
}

export interface OcsfTypeDef {
  readonly name: string;
  readonly caption: string;
  /** The base type (string_t, integer_t, ...) for derived types such as ip_t. */
  readonly base: string;
  readonly maxLen?: number;
  readonly range?: readonly [number, number];
  readonly regex?: string;
  readonly values?: readonly unknown[];
  readonly observable?: number;
}

export interface OcsfCatalog {
  readonly version: string;
  classes(): readonly OcsfClassDef[];
  classByUid(uid: number): OcsfClassDef | undefined;
  object(name: string): OcsfObjectDef | undefined;
  type(name: string): OcsfTypeDef | undefined;
  /**
   * The attribute at a dotted path of a class (`actor.user.name`, `resources.uid`: array
   * elements are transparent, and `resources[2].uid` / `resources[].uid` read the same), or
   * undefined when the class has no such attribute. Paths below a free-form object
   * (`unmapped.x`: objectType `object`) are undefined too: anything goes there.
   */
  resolve(classUid: number, path: string): OcsfAttribute | undefined;
}

export type OcsfIssueKind =
  | 'missing_required'
  | 'type'
  | 'enum'
  | 'caption'
  | 'type_uid'
  | 'unknown_attribute'
  | 'metadata'
  | 'unknown_class'
  | 'constraint';

export interface OcsfIssue {
  /** Dotted path of the attribute, e.g. `actor.user.uid` or `resources[2].type`. */
  readonly path: string;
  readonly kind: OcsfIssueKind;
  readonly message: string;
}
